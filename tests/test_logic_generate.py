"""The three datasets: schedules, counts, determinism, meta, vocabularies, settings."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engines.core import SettingsError, parse_settings
from engines.logic import ENGINE, parse
from engines.logic.formula import AND, OR, Atom, Junction, Not, Quant, measure, symbols, walk
from engines.logic.generate import cnf_formula, fol_formula, random_formula
from engines.logic.parse import parse_formula
from engines.logic.render import ASCII, UNICODE, V_OR, WORDS, render, show
from engines.logic.settings import LogicSettings
from engines.logic.solver import EQUIVALENT, check_equivalence
from engines.logic.vocabulary import Vocabulary, first_order


def items(*pairs: str, seed: int = 0):
    return ENGINE.items(parse_settings(LogicSettings, list(pairs)), seed)


@pytest.fixture(scope="module")
def cnf():
    return items("dataset=cnf")


def test_cnf_defaults_follow_the_paper(cnf):
    assert len(cnf) == 400
    ratios = [it.meta["ratio"] for it in cnf]
    assert sorted(set(ratios)) == [1.0 + 0.5 * i for i in range(13)]
    assert max(Counter(ratios).values()) - min(Counter(ratios).values()) <= 1  # round robin
    for it in cnf:
        f = parse_formula(it.inputs["formula"])
        m, k = it.meta["clauses"], 3
        assert m == int(it.meta["ratio"] * 3 + 0.5)
        clauses = f.parts if isinstance(f, Junction) and f.op == AND else (f,)
        assert len(clauses) == m
        for clause in clauses:
            literals = clause.parts if isinstance(clause, Junction) else (clause,)
            assert len(literals) == k
            names = [(lit.body if isinstance(lit, Not) else lit).name for lit in literals]
            assert len(set(names)) == k and set(names) <= {"x1", "x2", "x3"}
        assert it.meta["operators"] == it.meta["binary_operators"] == m * k - 1
        assert it.inputs["vocabulary"] == {"logic": "propositional", "propositions": ["x1", "x2", "x3"]}


def test_items_are_distinct_and_seeded(cnf):
    assert len({it.inputs["formula"] for it in cnf}) == 400
    assert [it.to_json() for it in items("dataset=cnf")] == [it.to_json() for it in cnf]
    assert [it.inputs["formula"] for it in items("dataset=cnf", seed=1)] != [it.inputs["formula"] for it in cnf]
    assert items("dataset=cnf", "count=20")[:20] == cnf[:20]  # an item does not depend on count


def test_count_k_n_change_the_cnf():
    found = items("dataset=cnf", "count=30", "k=2", "n=5")
    assert len(found) == 30
    assert found[0].inputs["vocabulary"]["propositions"] == ["x1", "x2", "x3", "x4", "x5"]
    assert found[0].meta["clauses"] == 5 and found[0].meta["operators"] == 5 * 2 - 1


def test_random_formulas_match_the_cnf_by_binary_operators(cnf):
    rnd = items("dataset=random")
    assert len(rnd) == 400
    for r, c in zip(rnd, cnf):
        assert r.meta["binary_operators"] == c.meta["binary_operators"]
        assert r.meta["matched"] == c.id and r.meta["ratio"] == c.meta["ratio"]
        f = parse_formula(r.inputs["formula"])
        assert {n.name for n in _atoms(f)} <= {"x1", "x2", "x3"}
        assert all(not isinstance(n, Quant) for n in walk(f))
    assert len({it.inputs["formula"] for it in rnd}) == 400


def _atoms(f):
    return [n for n in walk(f) if isinstance(n, Atom)]


@pytest.mark.parametrize("vocab", ["symbolic", "english"])
def test_fol_formulas_are_prenex_with_one_quantifier_per_variable(vocab):
    found = items("dataset=fol", f"vocab={vocab}")
    voc = Vocabulary.from_json(found[0].inputs["vocabulary"])
    assert voc.is_fol and voc.style == vocab
    arities = dict(voc.predicates)
    assert Counter(it.meta["operators"] for it in found) == {n: 40 for n in range(1, 11)}
    for it in found:
        f = parse_formula(it.inputs["formula"])
        prefix = []
        while isinstance(f, Quant):
            prefix.append(f.var)
            f = f.body
        assert all(not isinstance(n, Quant) for n in walk(f))  # prenex: quantifiers only in front
        syms = symbols(parse_formula(it.inputs["formula"]))
        assert prefix and len(prefix) == len(set(prefix)) == it.meta["variables"]
        assert syms.bound == set(prefix) and not (syms.constants & set(prefix))
        assert syms.constants <= set(voc.constants)
        assert all(arities[name] == k for name, k in syms.predicates)
        ops = measure(f).operators
        assert ops["not"] + ops[AND] + ops[OR] == it.meta["operators"]
    if vocab == "english":
        assert "John" in voc.constants and ("Loves", 2) in voc.predicates
        assert "Loves(?a, ?b): 2 arguments" in voc.text()


def test_meta_records_what_the_report_groups_by(cnf):
    assert {"operators", "binary_operators", "negations", "depth", "variables", "ratio", "clauses"} <= set(cnf[0].meta)
    fol = items("dataset=fol", "count=5")
    assert {"operators", "quantifiers", "variables", "depth", "vocab"} <= set(fol[0].meta)


def test_generated_formulas_read_back_as_themselves():
    """The generator remembers its parses; here the parser must produce the very same trees."""
    rng = random.Random(3)
    names = ("x1", "x2", "x3")
    made = [cnf_formula(rng, names, 3, rng.randint(1, 21)) for _ in range(40)]
    made += [random_formula(rng, names, rng.randint(0, 62)) for _ in range(40)]
    made += [fol_formula(rng, first_order(style), rng.randint(1, 10)) for style in ("symbolic", "english")
             for _ in range(40)]
    for f in made:
        parse.clear_memo()
        assert parse_formula(show(f)) == f


@pytest.mark.slow
@pytest.mark.parametrize("pairs", [["dataset=cnf"], ["dataset=random"], ["dataset=fol"],
                                   ["dataset=fol", "vocab=english"]])
def test_every_dataset_formula_reads_back_as_itself(pairs):
    """Each generated formula, rendered in the canonical and two other notations, parses to the same tree."""
    generated = [(it.inputs["formula"], parse.remembered(it.inputs["formula"])) for it in items(*pairs)]
    for text, made in generated:
        assert made is not None
        parse.clear_memo()
        for notation in (UNICODE, ASCII, WORDS):
            again = parse_formula(render(made, notation))
            assert again == made, (text, notation.name)
        assert show(again) == text
    assert check_equivalence(made, parse_formula(render(made, V_OR) + " ∧ " + render(made, ASCII))).verdict == EQUIVALENT


def test_bad_settings_are_clear_errors():
    with pytest.raises(SettingsError, match="k"):
        items("k=4", "n=3")
    with pytest.raises(SettingsError, match="not one of"):
        items("dataset=horn")
    with pytest.raises(SettingsError, match="too large"):
        items("dataset=cnf", "n=20", "k=20", "r_max=100", "count=40")
    with pytest.raises(SettingsError, match="r_max"):
        items("r_min=3", "r_max=2")
