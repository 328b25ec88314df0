"""Substitution and compact forms (paper appendix A.4): the single expression ``result`` stands for.

For each ``L := R``, every variable of ``R`` defined earlier is replaced by its expression,
then ``L`` is bound to the result (token-aware: only whole tokens that are variables). The
compact form is ``f1(f0(all,attr_1,5),attr_2,7)``; the canonical form sorts the two arguments
of a commutative call; the expansions are every argument-swapped variant.

``substituted_form`` gives a form straight from the assignments, each variable's form made
once from those before it, without the substituted tree (which ``substitute`` builds for
``expansions``); a property test holds it to ``canonical(substitute(...))``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.dedc.parse import Call, Term

MAX_EXPR = 20_000  # characters of a substituted expression before we give up on it
MAX_VARIANTS = 64
MAX_DEPTH = 200  # nesting of a substituted expression (gold answers have 4)


class TooLarge(Exception):
    """A substituted expression past MAX_EXPR characters or MAX_DEPTH nested calls."""


# Module functions, not nested ones calling themselves: such a closure is a reference cycle (garbage for the collector).


def substitute(assignments: Sequence[Any]) -> Term | None:
    """The single expression ``result`` stands for (A.4), token-aware; None without ``result``."""
    store: dict[str, Term] = {}
    for a in assignments:
        store[a.target] = _substituted(a.value, store)
    return store.get("result")


def _substituted(term: Term, store: Mapping[str, Term]) -> Term:
    if isinstance(term, str):
        return store.get(term, term)
    return Call(term.symbol, tuple(_substituted(a, store) for a in term.args))


def canonical(term: Term, commutative: frozenset[str]) -> str:
    """The compact form with the arguments of commutative calls sorted (none sorted: the paper's form)."""
    return _canonical(term, 0, commutative, {})


def _canonical(t: Term, depth: int, commutative: frozenset[str], memo: dict[int, str]) -> str:
    if isinstance(t, str):
        return t
    hit = memo.get(id(t))
    if hit is None:
        if depth > MAX_DEPTH:
            raise TooLarge
        hit = memo[id(t)] = _call_form(t.symbol, [_canonical(a, depth + 1, commutative, memo) for a in t.args],
                                       commutative)
    return hit


def _call_form(symbol: str, parts: list[str], commutative: frozenset[str]) -> str:
    """A call's form from its arguments' forms (sorted when the call is commutative)."""
    if symbol in commutative and len(parts) == 2:
        parts.sort()
    form = symbol + "(" + ",".join(parts) + ")"
    if len(form) > MAX_EXPR:
        raise TooLarge
    return form


def substituted_form(assignments: Sequence[Any], commutative: frozenset[str]) -> str | None:
    """``canonical(substitute(assignments), commutative)``, None without ``result``; TooLarge only for
    what ``result`` uses (a variable past the limits is marked, and fails whatever uses it)."""
    forms: dict[str, tuple[str, int] | None] = {}  # variable -> (form, calls on its longest path), None: too large
    for a in assignments:
        forms[a.target] = _form(a.value, forms, commutative)
    if "result" not in forms:
        return None
    found = forms["result"]
    if found is None:
        raise TooLarge
    return found[0]


def _form(term: Term, forms: Mapping[str, tuple[str, int] | None], commutative: frozenset[str]) -> tuple[str, int] | None:
    if isinstance(term, str):
        return forms.get(term, (term, 0))
    parts = []
    height = 0
    for arg in term.args:
        found = _form(arg, forms, commutative)
        if found is None:
            return None
        parts.append(found[0])
        height = max(height, found[1])
    if height > MAX_DEPTH:  # ``canonical`` refuses a call nested deeper than MAX_DEPTH
        return None
    try:
        return _call_form(term.symbol, parts, commutative), height + 1
    except TooLarge:
        return None


def expansions(t: Term, commutative: frozenset[str]) -> list[str]:
    """Every argument-swapped variant (A.4's 2^k final expressions), capped at MAX_VARIANTS."""
    if isinstance(t, str):
        return [t]
    combos = [""]
    for k, a in enumerate(t.args):
        sep = "," if k else ""
        combos = [c + sep + v for c in combos for v in expansions(a, commutative)][:MAX_VARIANTS]
    out = [f"{t.symbol}({c})" for c in combos]
    if t.symbol in commutative and len(t.args) == 2:
        out += [f"{t.symbol}({b},{a})" for a in expansions(t.args[0], commutative)
                for b in expansions(t.args[1], commutative)]
    return list(dict.fromkeys(out))[:MAX_VARIANTS]
