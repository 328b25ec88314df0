"""The round-trip reply as the authors read it, and the truth-table agreement on hand-computed tables.

Reference: released-code-notes.md section 3, "Parsing": ``llm_fs`` (the raw reply) is mapped v/∨ -> or,
∧ -> and, ¬ -> not, ∀ -> all, ∃ -> exists, [] -> (), then **lowercased**, then read by NLTK. So ``X1 ∨ X2``
is ``x1 or x2``; the paper's own spellings are ∧, ∨ (or the letter v: "Use v to represent disjunction"),
¬ and square or round brackets. The expected verdicts below follow from those rules, not from our code.
"""

from __future__ import annotations

import pytest

from engines.core import Item, parse_settings
from engines.logic import ENGINE
from engines.logic.settings import LogicSettings
from engines.reporting import SET_ASIDE

SETTINGS = parse_settings(LogicSettings, [])


def item(formula: str, names: tuple[str, ...] = ("x1", "x2", "x3")) -> Item:
    vocabulary = {"logic": "propositional", "propositions": list(names)}
    return Item("t", "logic", {"formula": formula, "vocabulary": vocabulary}, {"formula": formula},
                {"dataset": "random", "operators": 1})


def verdict(formula: str, reply: str, names: tuple[str, ...] = ("x1", "x2", "x3")):
    return ENGINE.score(item(formula, names), ["a description", reply], SETTINGS, with_views=False)


@pytest.mark.parametrize("reply", [
    "X1 ∨ X2",  # upper case: lowercased first
    "x1 V X2",  # the letter v for disjunction, in either case
    "X1 OR x2",  # mixed case, a word operator
    "x1 v x2",  # the paper's prompt: "Use v to represent disjunction"
    "[X1 ∨ x2]",  # square brackets are round ones
    "¬¬(x1 ∨ X2)",
])
def test_case_and_the_papers_spellings_are_read_as_the_authors_read_them(reply):
    v = verdict("x1 ∨ x2", reply)
    assert v.status == "correct", (reply, [(t.code, t.evidence) for t in v.tags])
    assert not {"operator_swap", "omission", "symbol_hallucination"} & {t.code for t in v.tags}


def test_mixed_case_conjunction_and_negation():
    assert verdict("(x1 ∧ ¬x2) ∨ x3", "(X1 AND NOT x2) OR X3").status == "correct"
    assert verdict("(x1 ∧ ¬x2) ∨ x3", "(X1 ∧ x2) ∨ X3").status == "wrong"  # the negation really is lost


def test_a_capitalised_vocabulary_meets_its_lowercased_reading():
    # the English FOL vocabulary writes Runs(John); the authors lowercase the reply, and so the names
    names = ("Rain", "Wind")
    assert verdict("Rain ∧ Wind", "rain ∧ WIND", names).status == "correct"


@pytest.mark.parametrize("original, reply, agree", [
    ("x1 ∧ x2", "x2 ∧ x1", 4),  # the same table: every row agrees
    ("x1", "x1 ∨ x2", 3),  # x1=F, x2=T is the one row where they differ
    ("x1 ∧ x2", "x1", 3),
    ("x1", "¬x1", 0),
    ("x1 ∨ x2", "x1 ∧ x2", 2),
])
def test_truth_table_agreement_on_hand_computed_tables(original, reply, agree):
    v = verdict(original, reply)
    assert v.scores["truth_table_agreement"] == pytest.approx(agree / 4)


def test_a_solver_unknown_is_set_aside_not_wrong():
    hard = " ∨ ".join(f"x{i % 3 + 1}" if i % 2 else f"¬x{i % 3 + 1}" for i in range(1_500))  # beyond the size cap
    v = verdict("x1 ∨ x2", hard)
    assert v.scores["unknown"] == 1.0 and v.scores[SET_ASIDE] == 1.0
    assert verdict("x1 ∨ x2", "x1").scores.get(SET_ASIDE, 0.0) == 0.0
