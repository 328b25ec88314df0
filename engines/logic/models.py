"""Finite structures and the truth of a formula in one, in plain Python.

A countermodel from Z3 is turned into a ``Structure`` (a domain of named elements, the
objects the constants denote, each predicate's extension, each proposition's value) and
both formulas are evaluated here, independently of Z3: the verdict view shows these two
truth values, and a countermodel that does not separate the formulas would be caught.
The simulator uses the same evaluator on small random structures to check that an
injected first-order error really changes the meaning.

Symbols a structure does not mention get defaults: propositions and predicates false,
constants the first element.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from engines.logic.formula import (
    AND,
    FORALL,
    IFF,
    IMPLIES,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
    symbols,
)


@dataclass(frozen=True)
class Structure:
    domain: tuple[str, ...] = ("e0",)
    constants: Mapping[str, str] = field(default_factory=dict)
    predicates: Mapping[tuple[str, int], frozenset[tuple[str, ...]]] = field(default_factory=dict)
    propositions: Mapping[str, bool] = field(default_factory=dict)

    def rows(self) -> list[list[str]]:
        """The structure as [symbol, value] rows for a key-value view."""
        rows: list[list[str]] = []
        for name in sorted(self.propositions):
            rows.append([name, "true" if self.propositions[name] else "false"])
        if self.constants or self.predicates:
            rows.append(["domain", "{" + ", ".join(self.domain) + "}"])
        for name in sorted(self.constants):
            rows.append([name, self.constants[name]])
        for (name, arity) in sorted(self.predicates):
            ext = sorted(self.predicates[(name, arity)])
            shown = ", ".join(t[0] if arity == 1 else "(" + ", ".join(t) + ")" for t in ext)
            rows.append([f"{name}/{arity}", "{" + shown + "}"])
        return rows


def evaluate(f: Formula, s: Structure, env: Mapping[str, str] | None = None) -> bool:
    """The truth value of ``f`` in ``s`` (free terms not in ``env`` are constants)."""
    env = env or {}

    def term(t: str) -> str:
        hit = env.get(t)
        return hit if hit is not None else s.constants.get(t, s.domain[0])

    if isinstance(f, Atom):
        if not f.args:
            return bool(s.propositions.get(f.name, False))
        return tuple(term(a) for a in f.args) in s.predicates.get((f.name, len(f.args)), frozenset())
    if isinstance(f, Equal):
        return term(f.left) == term(f.right)
    if isinstance(f, Not):
        return not evaluate(f.body, s, env)
    if isinstance(f, Junction):
        if f.op == AND:
            return all(evaluate(p, s, env) for p in f.parts)
        return any(evaluate(p, s, env) for p in f.parts)
    if isinstance(f, Arrow):
        left, right = evaluate(f.left, s, env), evaluate(f.right, s, env)
        if f.op == IMPLIES:
            return (not left) or right
        assert f.op == IFF
        return left == right
    assert isinstance(f, Quant)
    values = (evaluate(f.body, s, {**env, f.var: e}) for e in s.domain)
    return all(values) if f.kind == FORALL else any(values)


def random_structure(formulas: Sequence[Formula], size: int, rng: random.Random) -> Structure:
    """A random structure of ``size`` elements interpreting every symbol of ``formulas``."""
    domain = tuple(f"e{i}" for i in range(size))
    props: set[str] = set()
    preds: set[tuple[str, int]] = set()
    consts: set[str] = set()
    for f in formulas:
        syms = symbols(f)
        props |= syms.propositions
        preds |= syms.predicates
        consts |= syms.constants
    return Structure(
        domain=domain,
        constants={c: rng.choice(domain) for c in sorted(consts)},
        predicates={p: frozenset(t for t in itertools.product(domain, repeat=p[1]) if rng.random() < 0.5)
                    for p in sorted(preds)},
        propositions={p: rng.random() < 0.5 for p in sorted(props)},
    )


def separated(f: Formula, g: Formula, rng: random.Random, tries: int = 24) -> Structure | None:
    """A small random structure on which ``f`` and ``g`` differ, if one turns up (sound, not complete)."""
    for k in range(tries):
        s = random_structure((f, g), 1 + k % 3, rng)
        if evaluate(f, s) != evaluate(g, s):
            return s
    return None
