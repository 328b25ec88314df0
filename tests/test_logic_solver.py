"""Equivalence by Z3 against truth tables, countermodels, first-order cases, timeouts, the metric."""

from __future__ import annotations

import itertools
import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from engines.logic.formula import AND, OR, Atom, Formula, Junction, Not, junction, walk
from engines.logic.models import Structure, evaluate
from engines.logic.parse import parse_formula
from engines.logic.solver import EQUIVALENT, MAX_SOLVER_NODES, NOT_EQUIVALENT, UNKNOWN, check_equivalence
from engines.logic.truth import agreement, column, tables

P = parse_formula


def naive_value(f: Formula, row: dict[str, bool]) -> bool:
    """A deliberately plain evaluator, independent of the engine's bit-parallel tables."""
    if isinstance(f, Atom):
        return row[f.name]
    if isinstance(f, Not):
        return not naive_value(f.body, row)
    assert isinstance(f, Junction)
    values = [naive_value(p, row) for p in f.parts]
    return all(values) if f.op == AND else any(values)


def naive_equivalent(f: Formula, g: Formula, names: list[str]) -> bool:
    return all(naive_value(f, dict(zip(names, bits))) == naive_value(g, dict(zip(names, bits)))
               for bits in itertools.product((False, True), repeat=len(names)))


def random_formula(rng: random.Random, names: list[str], size: int) -> Formula:
    if size <= 1:
        atom = Atom(rng.choice(names))
        return Not(atom) if rng.random() < 0.4 else atom
    left = rng.randint(1, size - 1)
    node = junction(rng.choice((AND, OR)), [random_formula(rng, names, left), random_formula(rng, names, size - left)])
    return Not(node) if rng.random() < 0.15 else node


def rewrite(rng: random.Random, f: Formula) -> Formula:
    """An equivalent variant: commuted parts, double negation, De Morgan, duplicated parts."""
    if isinstance(f, Atom):
        return Not(Not(f)) if rng.random() < 0.1 else f
    if isinstance(f, Not):
        body = f.body
        if isinstance(body, Junction) and rng.random() < 0.5:  # De Morgan
            flipped = OR if body.op == AND else AND
            return junction(flipped, [Not(rewrite(rng, p)) for p in body.parts])
        return Not(rewrite(rng, body))
    assert isinstance(f, Junction)
    parts = [rewrite(rng, p) for p in f.parts]
    rng.shuffle(parts)
    if rng.random() < 0.2:
        parts.append(parts[0])
    return junction(f.op, parts)


def mutate(rng: random.Random, f: Formula) -> Formula:
    """A small change that may or may not change the meaning."""
    if isinstance(f, Atom):
        return Not(f)
    if isinstance(f, Not):
        return f.body if rng.random() < 0.5 else Not(mutate(rng, f.body))
    assert isinstance(f, Junction)
    parts = list(f.parts)
    i = rng.randrange(len(parts))
    parts[i] = mutate(rng, parts[i])
    return junction(f.op if rng.random() < 0.8 else (OR if f.op == AND else AND), parts)


def agreeing_pairs(count: int) -> dict[str, int]:
    """``count`` random pairs (up to 10 variables) judged by Z3 and by truth tables, which must agree;
    the verdicts seen, by kind."""
    rng = random.Random(20240327)
    seen = {EQUIVALENT: 0, NOT_EQUIVALENT: 0, "identical": 0}
    for i in range(count):
        n = rng.randint(1, 10)
        names = [f"x{k}" for k in range(1, n + 1)]
        f = random_formula(rng, names, rng.randint(1, 12))
        roll = rng.random()
        g = rewrite(rng, f) if roll < 0.45 else mutate(rng, f) if roll < 0.9 else random_formula(rng, names, 6)
        explain = i % 20 == 0  # every 20th pair: both directions and the countermodel too
        outcome = check_equivalence(f, g, explain=explain)
        tf, tg, _ = tables(f, g)
        assert outcome.verdict == (EQUIVALENT if tf == tg else NOT_EQUIVALENT), (f, g)
        seen["identical" if outcome.forward == "identical" else outcome.verdict] += 1
        if explain:  # the bit-parallel tables against a plain enumeration; the countermodel separates
            names_fg = sorted({a.name for h in (f, g) for a in _atoms(h)})
            assert (tf == tg) == naive_equivalent(f, g, names_fg)
            if outcome.verdict == NOT_EQUIVALENT:
                row = {n: outcome.countermodel.propositions.get(n, False) for n in names_fg}
                assert naive_value(f, row) != naive_value(g, row)
    return seen


@pytest.mark.slow
def test_z3_agrees_with_truth_tables_on_10000_random_pairs():
    """The pairs are judged in a fresh interpreter. Z3 makes a context per pair, and in a test worker
    that earlier tests left with a low malloc mmap threshold each context was mmapped afresh: 18 ms
    instead of 3 (measured after test_sandbox.py), 220 s of CPU for this test instead of 66 s."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        seen = pool.submit(agreeing_pairs, 10_000).result()
    assert seen[EQUIVALENT] > 2_000 and seen[NOT_EQUIVALENT] > 2_000, seen
    assert seen["identical"] < 1_000, seen  # nearly every pair is decided by Z3 itself


def _atoms(f: Formula) -> list[Atom]:
    return [n for n in walk(f) if isinstance(n, Atom)]


@pytest.mark.parametrize("left, right", [
    ("¬(x1 ∧ x2)", "¬x1 ∨ ¬x2"),  # De Morgan
    ("¬(x1 ∨ x2)", "¬x1 ∧ ¬x2"),
    ("x1 ∧ (x2 ∨ x3)", "(x1 ∧ x2) ∨ (x1 ∧ x3)"),  # distribution
    ("x1 ∨ (x2 ∧ x3)", "(x1 ∨ x2) ∧ (x1 ∨ x3)"),
    ("¬¬x1", "x1"),  # double negation
    ("x1 ∧ x2 ∧ x3", "x3 ∧ x1 ∧ x2"),  # commutation
    ("x1 ∨ ¬x2", "¬x2 ∨ x1"),
    ("x1 ∨ (x1 ∧ x2)", "x1"),  # absorption
    ("x1 ∧ (x1 ∨ x2)", "x1"),
    ("x1 → x2", "¬x1 ∨ x2"),
    ("x1 ↔ x2", "(x1 ∧ x2) ∨ (¬x1 ∧ ¬x2)"),
])
def test_classic_rewrites_are_equivalent(left, right):
    outcome = check_equivalence(P(left), P(right))
    assert outcome.verdict == EQUIVALENT
    assert (outcome.forward, outcome.backward) == ("holds", "holds")


def test_a_flipped_literal_is_not_equivalent_and_the_countermodel_separates():
    original = P("(x1 ∨ ¬x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)")
    flipped = P("(x1 ∨ x2 ∨ x3) ∧ (¬x1 ∨ x2 ∨ x3)")
    outcome = check_equivalence(original, flipped)
    assert outcome.verdict == NOT_EQUIVALENT
    model = outcome.countermodel
    assert model is not None and outcome.values is not None
    assert set(model.propositions) == {"x1", "x2", "x3"}
    assert evaluate(original, model) != evaluate(flipped, model)
    assert outcome.values == (evaluate(original, model), evaluate(flipped, model))
    row = {k: model.propositions[k] for k in ("x1", "x2", "x3")}  # and by the plain evaluator
    assert naive_value(original, row) != naive_value(flipped, row)


def test_one_direction_can_hold():
    outcome = check_equivalence(P("x1 ∧ x2"), P("x1"))
    assert outcome.verdict == NOT_EQUIVALENT
    assert (outcome.forward, outcome.backward) == ("holds", "fails")


def test_the_same_formula_needs_no_solver_call():
    f = P("(x1 ∨ x2) ∧ ¬x3")
    outcome = check_equivalence(f, P("(x1 ∨ x2) ∧ ¬x3"))
    assert (outcome.verdict, outcome.forward) == (EQUIVALENT, "identical")


@pytest.mark.parametrize("left, right", [
    ("∀x ∀y p(x, y)", "∀y ∀x p(x, y)"),  # same-kind quantifiers reordered
    ("∃x ∃y (p(x, y) ∧ q(y))", "∃y ∃x (q(y) ∧ p(x, y))"),
    ("∀x1 p1(x1)", "∀z p1(z)"),  # bound variable renamed
    ("∀x1 ∃x2 p2(x1, x2)", "∀a ∃b p2(a, b)"),
    ("¬∀x p(x)", "∃x ¬p(x)"),
    ("∀x (p(x) ∧ q(o1))", "(∀x p(x)) ∧ q(o1)"),
    ("∀x ∃x ∀y r(x, y)", "∀y ∃x ∀z r(x, z)"),  # shadowing
    ("a = b", "b = a"),
])
def test_first_order_equivalences(left, right):
    assert check_equivalence(P(left), P(right)).verdict == EQUIVALENT


@pytest.mark.parametrize("left, right", [
    ("∀x ∃y p(x, y)", "∃y ∀x p(x, y)"),
    ("∃y ∀x p(x, y)", "∀x ∃y p(x, y)"),
    ("∀x1 ∃x2 (p2(x1, x2) ∨ p1(o1))", "∃x2 ∀x1 (p2(x1, x2) ∨ p1(o1))"),
])
def test_swapping_forall_and_exists_is_never_equivalent(left, right):
    outcome = check_equivalence(P(left), P(right))
    assert outcome.verdict in (NOT_EQUIVALENT, UNKNOWN)
    if outcome.verdict == NOT_EQUIVALENT:
        model = outcome.countermodel
        assert model is not None
        assert evaluate(P(left), model) != evaluate(P(right), model)


def test_a_countermodel_z3_cannot_find_unbounded_is_found_on_a_small_domain():
    original = P("∀x1 ∃x2 ¬((¬p7(o2) ∧ p3(o5)) ∨ ¬((p3(o5) ∧ (p2(o5, o3) ∨ p3(x2))) ∨ p6(x1, x2)))")
    swapped = P("∃x2 ∀x1 ¬((¬p7(o2) ∧ p3(o5)) ∨ ¬((p3(o5) ∧ (p2(o5, o3) ∨ p3(x2))) ∨ p6(x1, x2)))")
    outcome = check_equivalence(original, swapped)
    assert outcome.verdict == NOT_EQUIVALENT
    assert (outcome.forward, outcome.backward) == ("fails", "holds")
    assert evaluate(original, outcome.countermodel) and not evaluate(swapped, outcome.countermodel)


def test_first_order_countermodel_is_a_small_structure():
    original, output = P("p1(o1) ∧ p2(o1, o2)"), P("p1(o2) ∧ p2(o1, o2)")
    outcome = check_equivalence(original, output)
    assert outcome.verdict == NOT_EQUIVALENT
    model = outcome.countermodel
    assert isinstance(model, Structure) and model.domain
    assert {"o1", "o2"} <= set(model.constants)
    assert outcome.values is not None and outcome.values[0] != outcome.values[1]
    rows = dict(model.rows())
    assert "domain" in rows and "p1/1" in rows


def pigeonhole(pigeons: int, holes: int) -> Formula:
    """Unsatisfiable, and hard for a SAT solver: every pigeon in a hole, no hole shared."""
    def v(p: int, h: int) -> Atom:
        return Atom(f"p{p}h{h}")
    clauses = [junction(OR, [v(p, h) for h in range(holes)]) for p in range(pigeons)]
    clauses += [junction(OR, [Not(v(p, h)), Not(v(q, h))])
                for h in range(holes) for p in range(pigeons) for q in range(p + 1, pigeons)]
    return junction(AND, clauses)


def test_a_spent_resource_budget_is_unknown_not_equivalent():
    hard = pigeonhole(9, 8)  # within the size cap: the solver is really asked
    contradiction = P("q ∧ ¬q")
    outcome = check_equivalence(hard, contradiction, rlimit=20_000)
    assert outcome.verdict == UNKNOWN
    assert "resource limit" in outcome.reason
    assert check_equivalence(hard, contradiction).verdict == EQUIVALENT  # the default budget proves it


def test_the_budget_counts_solver_steps_so_a_verdict_never_depends_on_what_ran_before():
    """The same pair, alone or after other checks, spends the same budget: the same verdict."""
    hard, contradiction = pigeonhole(9, 8), P("q ∧ ¬q")
    budget = 60_000
    alone = check_equivalence(hard, contradiction, rlimit=budget)
    for f, g in [("∀x ∃y p(x, y)", "∃y ∀x p(x, y)"), ("x1 ∨ x2", "x2 ∨ x1")]:
        check_equivalence(P(f), P(g), rlimit=budget)
    again = check_equivalence(hard, contradiction, rlimit=budget)
    assert (alone.verdict, alone.forward, alone.backward) == (again.verdict, again.forward, again.backward)


def test_formulas_beyond_the_size_cap_never_reach_the_solver():
    big = junction(AND, [Atom(f"y{i}") for i in range(MAX_SOLVER_NODES + 5)])
    outcome = check_equivalence(big, P("y1"))
    assert outcome.verdict == UNKNOWN and "too large" in outcome.reason


def test_truth_table_agreement():
    found = agreement(P("x1 ∧ x2"), P("x1"))
    assert found is not None
    assert (found.agree, found.total, found.variables) == (3, 4, ("x1", "x2"))
    assert found.fraction == 0.75
    assert agreement(P("x1"), P("x1")).fraction == 1.0
    assert agreement(P("∀x p(x)"), P("p(a)")) is None


def test_truth_table_columns():
    assert column(0, 2) == 0b1010
    assert column(1, 2) == 0b1100
    assert column(2, 3) == 0b11110000
