"""Editing formula trees by path: the simulator's injections rewrite one node of the original.

A path is the child indexes from the root (``formula.children`` order); ``replace`` keeps
∧/∨ flat, so an edited formula is written as a model would write it.
"""

from __future__ import annotations

import random
from typing import TypeVar

from engines.logic.formula import Arrow, Atom, Formula, Junction, Not, Quant, children, junction
from engines.logic.vocabulary import Vocabulary

Path = tuple[int, ...]

_last_nodes: tuple[Formula | None, list[tuple[Path, Formula]]] = (None, [])  # every injection attempt walks the same original


def nodes(f: Formula) -> list[tuple[Path, Formula]]:
    """Every node with its path (child indexes from the root), parents first."""
    global _last_nodes
    last = _last_nodes
    if last[0] is f:
        return last[1]
    out: list[tuple[Path, Formula]] = []
    stack: list[tuple[Path, Formula]] = [((), f)]
    while stack:
        path, node = stack.pop()
        out.append((path, node))
        stack.extend((path + (i,), k) for i, k in reversed(list(enumerate(children(node)))))
    _last_nodes = (f, out)
    return out


def at(f: Formula, path: Path) -> Formula:
    for i in path:
        f = children(f)[i]
    return f


def replace(f: Formula, path: Path, new: Formula) -> Formula:
    """``f`` with the node at ``path`` replaced (∧/∨ stay flat)."""
    if not path:
        return new
    i, rest = path[0], path[1:]
    if isinstance(f, Not):
        return Not(replace(f.body, rest, new))
    if isinstance(f, Quant):
        return Quant(f.kind, f.var, replace(f.body, rest, new))
    if isinstance(f, Junction):
        parts = list(f.parts)
        parts[i] = replace(parts[i], rest, new)
        return junction(f.op, parts)
    assert isinstance(f, Arrow)
    return Arrow(f.op, replace(f.left, rest, new) if i == 0 else f.left, replace(f.right, rest, new) if i else f.right)


Node = TypeVar("Node", bound=Formula)


def nodes_of(f: Formula, *kinds: type[Node]) -> list[tuple[Path, Node]]:
    return [(p, n) for p, n in nodes(f) if isinstance(n, kinds)]


def requantify(quants: list[tuple[str, str]], matrix: Formula) -> Formula:
    for kind, var in reversed(quants):
        matrix = Quant(kind, var, matrix)
    return matrix


def new_atom(vocab: Vocabulary, rng: random.Random) -> Formula:
    if vocab.is_fol:
        name, arity = rng.choice(vocab.predicates)
        atom: Formula = Atom(name, tuple(rng.choice(vocab.constants) for _ in range(arity)))
    else:
        atom = Atom(rng.choice(vocab.propositions))
    return Not(atom) if rng.random() < 0.5 else atom
