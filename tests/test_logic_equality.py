"""A first-order reply with ``=`` is judged as equality between objects, not rewritten as ``↔``.

The rewrite ``a = b`` -> ``a ↔ b`` is only for propositional items (engines/logic/score.py); in a
first-order item ``x1 = o1`` says that two objects are one. The pairs below are equivalent (or not)
only by the meaning of equality, and each expectation is checked against a hand-built Z3 encoding.
"""

from __future__ import annotations

import pytest
import z3

from engines.core import parse_settings
from engines.logic import ENGINE
from engines.logic.settings import LogicSettings


@pytest.fixture(scope="module")
def item():
    first = ENGINE.items(parse_settings(LogicSettings, ["dataset=fol", "count=1"]), 0)[0]
    assert first.gold["formula"] == "∃x1 ¬p1(x1)"
    return first


def z3_equivalent(reply: "z3.BoolRef") -> bool:
    """Z3 on our own encoding: is ``∃x ¬p1(x)`` equivalent to ``reply``?"""
    obj = z3.DeclareSort("Obj")
    p1, x = z3.Function("p1", obj, z3.BoolSort()), z3.Const("x", obj)
    solver = z3.Solver()
    solver.add(z3.Exists([x], z3.Not(p1(x))) != reply(obj, p1))
    return solver.check() == z3.unsat


def by_cases(obj, p1):  # ¬p1(o1) ∨ ∃x (¬p1(x) ∧ ¬(x = o1)): the witness is o1 or another object
    x, o1 = z3.Const("x", obj), z3.Const("o1", obj)
    return z3.Or(z3.Not(p1(o1)), z3.Exists([x], z3.And(z3.Not(p1(x)), x != o1)))


def same_object(obj, p1):  # ∃x ∃y (x = y ∧ ¬p1(y))
    x, y = z3.Const("x", obj), z3.Const("y", obj)
    return z3.Exists([x, y], z3.And(x == y, z3.Not(p1(y))))


def only_o1(obj, p1):  # ∃x (¬p1(x) ∧ x = o1): says ¬p1(o1), which is stronger
    x, o1 = z3.Const("x", obj), z3.Const("o1", obj)
    return z3.Exists([x], z3.And(z3.Not(p1(x)), x == o1))


@pytest.mark.parametrize("reply, encoding, status", [
    ("¬p1(o1) ∨ ∃x1 (¬p1(x1) ∧ ¬(x1 = o1))", by_cases, "correct"),
    ("∃x1 ∃x2 (x1 = x2 ∧ ¬p1(x2))", same_object, "correct"),
    ("∃x1 (¬p1(x1) ∧ x1 = o1)", only_o1, "wrong"),
])
def test_equality_in_a_first_order_reply_means_the_same_object(item, reply, encoding, status):
    assert z3_equivalent(encoding) == (status == "correct")  # the expectation, from our own encoding
    verdict = ENGINE.score(item, ["a description", reply])
    assert verdict.status == status
    assert verdict.scores == {"equivalent": 1.0 if status == "correct" else 0.0, "unknown": 0.0}
    assert "symbol_hallucination" not in [t.code for t in verdict.tags]  # x1, x2 and o1 are the item's own symbols
