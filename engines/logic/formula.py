"""Formula ASTs shared by every part of the logic engine.

One small tree language covers both logics of the paper: propositional formulas are
formulas whose atoms have no arguments. Conjunction and disjunction are n-ary and kept
flat (``a ∧ (b ∧ c)`` is the one node ``∧(a, b, c)``): grouping a chain of the same
operator never changes its meaning, so the tagger and the report never need to see it.
Terms (predicate arguments) are plain names; whether a name is a bound variable or a
constant is decided by scope (an enclosing quantifier binds it), as in print.

Every node is a frozen dataclass, so formulas are values: they can be cached, compared
and shared between the generator, the scorer and the simulator.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

AND, OR = "and", "or"
IMPLIES, IFF = "implies", "iff"
FORALL, EXISTS = "forall", "exists"
DUAL = {AND: OR, OR: AND, FORALL: EXISTS, EXISTS: FORALL}  # what a negation pushed through turns each into


@dataclass(frozen=True, slots=True)
class Atom:
    """A proposition (``x1``, no arguments) or a predicate application (``p1(o1, x1)``)."""

    name: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Equal:
    """``left = right`` between terms (outside the paper's grammar, but models write it)."""

    left: str
    right: str


@dataclass(frozen=True, slots=True)
class Not:
    body: "Formula"


@dataclass(frozen=True, slots=True)
class Junction:
    """An n-ary conjunction or disjunction; build it with ``junction`` so it stays flat."""

    op: str  # AND | OR
    parts: tuple["Formula", ...]


@dataclass(frozen=True, slots=True)
class Arrow:
    """Implication or biconditional (outside the paper's grammar, but models write them)."""

    op: str  # IMPLIES | IFF
    left: "Formula"
    right: "Formula"


@dataclass(frozen=True, slots=True)
class Quant:
    kind: str  # FORALL | EXISTS
    var: str
    body: "Formula"


Formula = Union[Atom, Equal, Not, Junction, Arrow, Quant]


def junction(op: str, parts: Iterable[Formula]) -> Formula:
    """A flat n-ary node: parts of the same operator are merged, a single part is returned as is."""
    flat: list[Formula] = []
    for part in parts:
        if isinstance(part, Junction) and part.op == op:
            flat.extend(part.parts)
        else:
            flat.append(part)
    if not flat:
        raise ValueError(f"an empty {op} has no formula")
    return flat[0] if len(flat) == 1 else Junction(op, tuple(flat))


def prefix(f: Formula) -> tuple[list[Quant], Formula]:
    """The leading quantifiers (outermost first) and the formula under them."""
    quants: list[Quant] = []
    while isinstance(f, Quant):
        quants.append(f)
        f = f.body
    return quants, f


def map_atoms(f: Formula, change: Callable[[Formula], Formula]) -> Formula:
    """``f`` with every atom (and equality) replaced by ``change(atom)``; ∧/∨ stay flat."""
    if isinstance(f, (Atom, Equal)):
        return change(f)
    if isinstance(f, Not):
        return Not(map_atoms(f.body, change))
    if isinstance(f, Quant):
        return Quant(f.kind, f.var, map_atoms(f.body, change))
    if isinstance(f, Junction):
        return junction(f.op, [map_atoms(p, change) for p in f.parts])
    return Arrow(f.op, map_atoms(f.left, change), map_atoms(f.right, change))


def children(f: Formula) -> tuple[Formula, ...]:
    return _CHILDREN[type(f)](f)


_CHILDREN: dict[type, Callable[[Any], tuple[Formula, ...]]] = {
    Atom: lambda f: (),
    Equal: lambda f: (),
    Not: lambda f: (f.body,),
    Quant: lambda f: (f.body,),
    Junction: lambda f: f.parts,
    Arrow: lambda f: (f.left, f.right),
}


def walk(f: Formula) -> list[Formula]:
    """Every node, level by level (iterative: safe on deep trees, and cheaper than a generator)."""
    out = [f]
    i = 0
    while i < len(out):
        node = out[i]
        out.extend(_CHILDREN[type(node)](node))
        i += 1
    return out


@dataclass(frozen=True)
class Measure:
    nodes: int
    depth: int  # in nodes: an atom has depth 1
    operators: Counter[str]  # as written: an n-ary ∧ with k parts counts k - 1 binary ∧ (the paper's count)
    names: frozenset[str]  # names of the atoms (propositions and predicates)


def measure(f: Formula) -> Measure:
    """Size, depth, operator counts and atom names (the generator's item meta)."""
    nodes = walk(f)
    ops: Counter[str] = Counter()
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, Atom):
            names.add(node.name)
        elif isinstance(node, Junction):
            ops[node.op] += len(node.parts) - 1
        else:
            ops[_OPERATOR_KEY[type(node)](node)] += 1
    return Measure(len(nodes), depth(f), ops, frozenset(names))


_OPERATOR_KEY: dict[type, Callable[[Any], str]] = {
    Equal: lambda f: "equal",
    Not: lambda f: "not",
    Arrow: lambda f: f.op,
    Quant: lambda f: f.kind,
}


def size(f: Formula) -> int:
    return len(walk(f))


def depth(f: Formula) -> int:
    """Nesting depth counted in nodes (an atom has depth 1), without recursion (safe on any tree)."""
    best = 0
    stack = [(f, 1)]
    while stack:
        node, d = stack.pop()
        if d > best:
            best = d
        kids = _CHILDREN[type(node)](node)
        if kids:
            stack.extend([(child, d + 1) for child in kids])
    return best


@dataclass(frozen=True)
class Symbols:
    """The non-logical symbols a formula uses, split by role (bound variables apart)."""

    propositions: frozenset[str]
    predicates: frozenset[tuple[str, int]]  # (name, arity)
    constants: frozenset[str]  # terms not bound by an enclosing quantifier
    bound: frozenset[str]  # variables some quantifier binds


def symbols(f: Formula) -> Symbols:
    props: set[str] = set()
    preds: set[tuple[str, int]] = set()
    consts: set[str] = set()
    bound: set[str] = set()
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, Quant):
            bound.add(node.var)
            stack.append((node.body, scope | {node.var}))
            continue
        if isinstance(node, Atom):
            if node.args:
                preds.add((node.name, len(node.args)))
            else:
                props.add(node.name)
            terms: tuple[str, ...] = node.args
        elif isinstance(node, Equal):
            terms = (node.left, node.right)
        else:
            stack.extend((c, scope) for c in children(node))
            continue
        consts.update(t for t in terms if t not in scope)
    return Symbols(frozenset(props), frozenset(preds), frozenset(consts), frozenset(bound))
