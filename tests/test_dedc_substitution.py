"""The substituted forms made straight from the assignments equal those of the substituted tree (A.4)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engines.dedc.parse import Assignment, Call, Parsed, Term, parse_answer
from engines.dedc.substitution import MAX_DEPTH, MAX_EXPR, TooLarge, canonical, substitute, substituted_form

COMMUTATIVE = frozenset({"f8"})
_VARIABLES = ["view_1", "view_2", "value_1", "result"]
_ATOMS = st.sampled_from([*_VARIABLES, "all", "attr_3", "5", "-2"])


def _terms(depth: int) -> st.SearchStrategy[Term]:
    if depth == 0:
        return _ATOMS
    calls = st.builds(lambda symbol, args: Call(symbol, tuple(args)), st.sampled_from(["f0", "f8", "f3"]),
                      st.lists(_terms(depth - 1), max_size=3))
    return _ATOMS | calls


_ASSIGNMENTS = st.lists(st.builds(lambda target, value: Assignment(target, value, 1, 1), st.sampled_from(_VARIABLES),
                                  _terms(3)), max_size=8)


def _from_tree(assignments: list[Assignment], commutative: frozenset[str]) -> str | None | type[TooLarge]:
    tree = substitute(assignments)
    try:
        return None if tree is None else canonical(tree, commutative)
    except TooLarge:
        return TooLarge


def _direct(assignments: list[Assignment], commutative: frozenset[str]) -> str | None | type[TooLarge]:
    try:
        return substituted_form(assignments, commutative)
    except TooLarge:
        return TooLarge


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ASSIGNMENTS, st.sampled_from([frozenset(), COMMUTATIVE]))
def test_the_direct_form_is_the_substituted_trees(assignments, commutative):
    """Forward references stay atoms, a redefinition applies from where it stands, f8's arguments are sorted."""
    assert _direct(assignments, commutative) == _from_tree(assignments, commutative)


def _chain(texts: list[str]) -> list[Assignment]:
    parsed = parse_answer(" ".join(texts))
    assert isinstance(parsed, Parsed), parsed
    return list(parsed.assignments)


@pytest.mark.parametrize("statements, expected", [
    # doubling past MAX_EXPR characters: too large for both
    (["v0 := f8 (1, 2);"] + [f"v{i} := f8 (v{i - 1}, v{i - 1});" for i in range(1, 40)] + ["result := v39;"], TooLarge),
    # a huge variable that result does not use is no failure
    (["v0 := f8 (1, 2);"] + [f"v{i} := f8 (v{i - 1}, v{i - 1});" for i in range(1, 40)] + ["result := f0 (all);"],
     "f0(all)"),
    # nesting: MAX_DEPTH + 1 calls on the longest path are still read, one more is not
    (["v0 := f0 (all);"] + [f"v{i} := f0 (v{i - 1});" for i in range(1, MAX_DEPTH + 1)] + [f"result := v{MAX_DEPTH};"],
     "f0(" * (MAX_DEPTH + 1) + "all" + ")" * (MAX_DEPTH + 1)),
    (["v0 := f0 (all);"] + [f"v{i} := f0 (v{i - 1});" for i in range(1, MAX_DEPTH + 2)] + [f"result := v{MAX_DEPTH + 1};"],
     TooLarge),
    (["view_1 := f0 (all, attr_1, 5);"], None),
])
def test_the_limits_hold_alike(statements, expected):
    assignments = _chain(statements)
    assert _from_tree(assignments, COMMUTATIVE) == expected
    assert _direct(assignments, COMMUTATIVE) == expected
    assert len("f0(" * (MAX_DEPTH + 1)) < MAX_EXPR  # the nesting case tests depth, not length
