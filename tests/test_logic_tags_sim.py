"""The logic error taxonomy: the tagger on hand-made round trips, and on every simulated error type."""

from __future__ import annotations

import pytest

from engines.core import SimOptions, parse_settings
from engines.logic import ENGINE
from engines.logic.parse import parse_formula
from engines.logic.settings import LogicSettings
from engines.logic.simulate import FOL_ONLY, SIM_CODES
from engines.logic.normal import normal_form
from engines.logic.tags import TAXONOMY, copied_formula, error_tags, extra_operators
from engines.logic.vocabulary import first_order, propositional

PROP, FOL, ENGLISH = propositional(3), first_order("symbolic"), first_order("english")
STABLE = ("symbol_hallucination", "negation_error", "operator_swap", "scope_error", "omission", "arity_error",
          "extra_operator", "quantifier_error", "copied_formula", "unparseable", "format_violation")


def test_taxonomy_has_the_stable_codes():
    codes = [t.code for t in TAXONOMY]
    assert set(STABLE) <= set(codes)
    assert all(t.label and t.description for t in TAXONOMY)
    assert set(SIM_CODES) == set(codes)


def tagged(vocab, original: str, output: str) -> dict[str, str]:
    return {t.code: t.evidence for t in error_tags(parse_formula(original), parse_formula(output), vocab)}


@pytest.mark.parametrize("vocab, original, output, code, evidence", [
    (PROP, "(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3) ∧ (x1 ∨ x2 ∨ ¬x3)", "(x1 ∨ ¬x2 ∨ x3) ∧ (x1 ∨ x2 ∨ ¬x3)",
     "omission", "¬x1 ∨ x2 ∨ x3 is missing"),
    (PROP, "(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)", "(x1 ∨ x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)",
     "negation_error", "¬x2 written as x2"),
    (PROP, "(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)", "(x1 ∧ ¬x2 ∧ x3) ∧ (¬x1 ∨ x2 ∨ x3)",
     "operator_swap", "∨ written as ∧"),
    (PROP, "(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3) ∧ x1", "(x1 ∨ ¬x2 ∨ x3 ∨ ¬x1 ∨ x2 ∨ x3) ∧ x1",
     "operator_swap", "∧ written as ∨"),
    (PROP, "(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)", "x1 ∨ ¬x2 ∨ (x3 ∧ ¬x1) ∨ x2 ∨ x3",
     "scope_error", "regrouped as"),
    (PROP, "x1 ∧ (x2 ∨ x3)", "(x1 ∧ x2) ∨ x3", "scope_error", "regrouped as"),
    (PROP, "(x1 ∨ ¬x2) ∧ x3", "(x1 ∨ ¬x4) ∧ x3", "symbol_hallucination", "x4 is not in the vocabulary"),
    (PROP, "(x1 ∨ ¬x2) ∧ x3", "(x1 ∨ ¬x3) ∧ x3", "symbol_hallucination", "¬x2 written as ¬x3"),
    (PROP, "x1 ∧ (x2 ∨ x3)", "x1 ∧ ¬(x2 ∨ x3)", "negation_error", "negation"),
    (PROP, "x1 ∧ ¬(x2 ∧ x3)", "x1 ∧ ¬x2 ∧ ¬x3", "negation_error", "De Morgan"),
    (PROP, "x1 ∧ x2", "x1 ∧ x2 ∧ x3", "extra_subformula", "x3 is not in the original"),
    (FOL, "∀x1 ∃x2 (p2(x1, x2) ∨ p1(o1))", "∃x2 ∀x1 (p2(x1, x2) ∨ p1(o1))", "quantifier_error", "reordered"),
    (FOL, "∀x1 ∃x2 (p2(x1, x2) ∨ p1(o1))", "∀x ∀y (p2(x, y) ∨ p1(o1))", "quantifier_error", "∃x2 written as ∀x2"),
    (FOL, "∀x1 ∃x2 (p2(x1, x2) ∨ p1(o1))", "∀x1 (p2(x1, x2) ∨ p1(o1))", "quantifier_error", "x2 occurs free"),
    (FOL, "∀x1 (p2(x1, o2) ∨ p1(o1))", "∀x1 (p2(x1, o2) ∨ p1(o1, o2))", "arity_error", "p1 takes 1 argument"),
    (FOL, "∀x1 (p2(x1, o2) ∨ p1(o1))", "∀x1 (p2(o2, x1) ∨ p1(o1))", "argument_error", "p2(x1, o2) written as p2(o2, x1)"),
    (FOL, "∀x1 (p2(x1, o2) ∨ p1(o1))", "∀x1 (q(x1, o2) ∨ p1(o9))", "symbol_hallucination", "predicate q"),
    (ENGLISH, "∀x1 Loves(x1, Mary)", "∀x1 Loves(x1, Eve)", "symbol_hallucination", "object Eve"),
])
def test_tagger_names_the_error_with_evidence(vocab, original, output, code, evidence):
    found = tagged(vocab, original, output)
    assert code in found, found
    assert evidence in found[code]


@pytest.mark.parametrize("left, right", [
    ("x1 → x2", "¬x1 ∨ x2"),
    ("¬(x1 → x2)", "x1 ∧ ¬x2"),
    ("x1 ↔ x2", "(¬x1 ∨ x2) ∧ (x1 ∨ ¬x2)"),
    ("¬(x1 ↔ x2)", "(x1 ∧ ¬x2) ∨ (¬x1 ∧ x2)"),
    ("¬(x1 ∧ (x2 ∨ ¬x3))", "¬x1 ∨ (¬x2 ∧ x3)"),
    ("(x1 ∨ x2) ∧ x3", "x3 ∧ (x2 ∨ x1)"),
    ("¬∀x p(x)", "∃x ¬p(x)"),
])
def test_the_normal_form_identifies_equal_meanings_written_differently(left, right):
    (a, qa), (b, qb) = normal_form(parse_formula(left)), normal_form(parse_formula(right))
    assert a.key == b.key and qa == qb


def test_correct_de_morgan_inside_a_wrong_formula_is_not_blamed():
    found = tagged(PROP, "x1 ∧ ¬(x2 ∨ x3) ∧ x2", "x1 ∧ ¬x2 ∧ ¬x3 ∧ ¬x2")
    assert found == {"negation_error": "x2 written as ¬x2"}


def test_renamed_bound_variables_are_not_hallucinations():
    found = tagged(FOL, "∀x1 ∃x2 p2(x1, x2)", "∀a ∃b ¬p2(a, b)")
    assert set(found) == {"negation_error"}


def test_extra_operators_and_copies():
    tag = extra_operators(parse_formula("(x1 → x2) ∧ (x2 ↔ x3) ∧ (x1 → x3)"), PROP)
    assert tag is not None and tag.evidence == "uses → (2×), ↔"
    assert extra_operators(parse_formula("a ≠ b"), FOL).evidence == "uses ≠"
    assert extra_operators(parse_formula("∀x p1(x)"), PROP).evidence == "uses ∀"
    assert extra_operators(parse_formula("∀x p1(x)"), FOL) is None
    assert copied_formula("The formula is (x1 ∨ ¬x2) ∧ x3, that is ...", "(x1 ∨ ¬x2) ∧ x3") is not None
    assert copied_formula("Formally: (x1 | ~x2) & x3", "(x1 ∨ ¬x2) ∧ x3") is not None
    assert copied_formula("Either x1 holds or x2 does not, and x3 holds.", "(x1 ∨ ¬x2) ∧ x3") is None
    assert copied_formula("x1 or not x2", "x1 ∨ ¬x2") is None
    long_formula = " ∧ ".join(f"(x1 ∨ ¬x2 ∨ x{i})" for i in range(10))
    partial = " ∧ ".join(f"(x1 ∨ ¬x2 ∨ x{i})" for i in range(8))
    assert copied_formula(f"Mostly: {partial}", long_formula) is not None
    assert copied_formula("One clause: (x1 ∨ ¬x2 ∨ x0)", long_formula) is None


# ------------------------------------------------------------ simulated types

DATASETS = {"cnf": ["dataset=cnf"], "random": ["dataset=random"], "fol": ["dataset=fol"],
            "english": ["dataset=fol", "vocab=english"]}
FORMAT_CODES = ("copied_formula", "format_violation", "extra_operator")  # facts, tagged whatever the verdict


def simulated(dataset: str, code: str, count: int = 100) -> list:
    settings = parse_settings(LogicSettings, DATASETS[dataset] + [f"count={count}"])
    opts = SimOptions(error_rate=1.0, error=code, seed=1)
    verdicts = []
    for item in ENGINE.items(settings, 0):
        outputs: list[str] = []
        while (step := ENGINE.next_step(item, settings, outputs)) is not None:
            outputs.append(ENGINE.simulate(item, step, outputs, opts, 5))
        verdicts.append(ENGINE.score(item, outputs, settings, with_views=False))
    return verdicts


CASES = [(d, c) for d in DATASETS for c in SIM_CODES if not (c in FOL_ONLY and d in ("cnf", "random"))]


@pytest.mark.slow
@pytest.mark.parametrize("dataset, code", CASES)
def test_each_simulated_error_type_is_named_by_the_tagger(dataset, code):
    verdicts = simulated(dataset, code)
    if code in FORMAT_CODES:
        pool = verdicts
    else:
        pool = [v for v in verdicts if v.status != "correct"]
    assert len(pool) >= 40, f"too few affected items ({len(pool)})"
    hits = sum(any(t.code == code for t in v.tags) for v in pool)
    assert hits / len(pool) >= 0.8, f"{code} on {dataset}: {hits}/{len(pool)}"
    if code == "unparseable":
        assert all(v.status == "unparseable" for v in verdicts)
    if code == "copied_formula":
        assert all(v.status == "correct" for v in verdicts)
    if code == "format_violation":  # prose around the right formula: the authors' reading fails it
        assert all(v.status == "unparseable" for v in verdicts)


def test_default_sim_mixes_errors_and_right_answers():
    settings = parse_settings(LogicSettings, ["dataset=cnf", "count=200"])
    opts = SimOptions(error_rate=0.3, seed=0)
    statuses = []
    for item in ENGINE.items(settings, 0):
        outputs: list[str] = []
        while (step := ENGINE.next_step(item, settings, outputs)) is not None:
            outputs.append(ENGINE.simulate(item, step, outputs, opts, 9))
        statuses.append(ENGINE.score(item, outputs, settings, with_views=False).status)
    assert statuses.count("correct") == 150  # of 200: the 0.3 error rate (seed 0), some errors still right
    assert (statuses.count("wrong"), statuses.count("unparseable")) == (38, 12)
    assert "unparseable" in statuses and "wrong" in statuses
