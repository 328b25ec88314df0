"""Formulas in the shape the structural diff compares: negation normal form, quantifiers apart.

→ and ↔ are expanded, negations pushed to the atoms, n-ary ∧/∨ flattened (a part that got
its operator from a pushed negation stays a group, so the diff still sees how it was
written), quantifiers pulled out into a prefix list and bound variables renamed to the
original's by name, then by where they are used, then by position (``variable_map``).
Every node keeps an order-free key, its literals in reading order and its written form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engines.logic.formula import (
    AND,
    DUAL,
    EXISTS,
    FORALL,
    IMPLIES,
    OR,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
    children,
)

if TYPE_CHECKING:
    from engines.logic.tags import Findings

SYMBOL = {AND: "∧", OR: "∨", FORALL: "∀", EXISTS: "∃"}

# ------------------------------------------------------- normal form for diffs


@dataclass
class Node:
    kind: str  # "lit" | AND | OR
    parts: tuple["Node", ...]
    atom: tuple[str, tuple[str, ...]] | None  # (name, args) of a literal; "=" for equality
    positive: bool
    dual: bool  # the operator was flipped by a negation pushed through it
    source: Formula  # as written (for evidence)
    key: str  # order-free identity
    seq: tuple[str, ...]  # literals and operators in reading order (grouping dropped)
    leaves: tuple["Node", ...] = ()  # the parts with same-operator parts merged in (what the key is of)
    context: str = ""  # the operator (as written) of the ∧/∨ this node was written in
    _dual_key: str | None = None
    _names: Counter[str] | None = None

    @property
    def names(self) -> Counter[str]:
        """Atom names below (with repeats), for pairing similar parts; computed when first asked."""
        if self._names is None:
            if self.kind == "lit":
                assert self.atom is not None
                self._names = Counter((self.atom[0],))
            else:
                self._names = Counter()
                for p in self.parts:
                    self._names.update(p.names)
        return self._names

    def dual_key(self) -> str:
        """The key of this node's negation in negation normal form."""
        if self._dual_key is None:
            if self.kind == "lit":
                self._dual_key = ("+" if not self.positive else "-") + self.key[1:]
            else:
                self._dual_key = DUAL[self.kind] + "(" + ",".join(sorted(p.dual_key() for p in self.leaves)) + ")"
        return self._dual_key


@dataclass(frozen=True)
class Quantifier:
    kind: str  # after pushing negations through (¬∀ is ∃¬)
    var: str  # renamed to the original's variable where one corresponds


def _lit(atom: Atom | Equal, positive: bool, rename: dict[str, str], source: Formula) -> Node:
    if isinstance(atom, Equal):
        name, args = "=", tuple(sorted((rename.get(atom.left, atom.left), rename.get(atom.right, atom.right))))
    else:
        name, args = atom.name, tuple(rename.get(a, a) for a in atom.args)
    key = ("+" if positive else "-") + name + "(" + ",".join(args) + ")"
    return Node("lit", (), (name, args), positive, False, source, key, (key,))


def _junction(op: str, parts: list[Node], dual: bool, source: Formula) -> Node:
    """An ∧/∨ node. A part of the same operator written the same way is merged in; one that got
    this operator from a pushed negation (``¬(a ∨ b)`` inside a ∧) stays a group of its own, so the
    diff still sees how it was written. The key merges everything: equal meaning, equal key."""
    flat: list[Node] = []
    for p in parts:
        if p.kind == op and p.dual == dual:
            flat.extend(p.parts)
        else:
            p.context = surface(op, dual)
            flat.append(p)
    if len(flat) == 1:
        return flat[0]
    leaves = tuple(q for p in flat for q in (p.leaves if p.kind == op else (p,)))
    key = op + "(" + ",".join(sorted(p.key for p in leaves)) + ")"
    return Node(op, tuple(flat), None, True, dual, source, key, joined_seq(flat, op), leaves)


def normal_form(f: Formula, rename: dict[str, str] | None = None) -> tuple[Node, list[Quantifier]]:
    """(negation normal form without quantifiers, the quantifiers met in reading order)."""
    rename = rename or {}
    quants: list[Quantifier] = []

    def go(g: Formula, positive: bool) -> Node:
        written = g if positive else Not(g)
        if isinstance(g, (Atom, Equal)):
            return _lit(g, positive, rename, written)
        if isinstance(g, Not):
            return go(g.body, not positive)
        if isinstance(g, Junction):
            op = g.op if positive else DUAL[g.op]
            return _junction(op, [go(p, positive) for p in g.parts], not positive, written)
        if isinstance(g, Arrow):
            if g.op == IMPLIES:  # a → b  =  ¬a ∨ b
                left, right = go(g.left, not positive), go(g.right, positive)
                return _junction(OR if positive else AND, [left, right], False, written)
            # a ↔ b  =  (¬a ∨ b) ∧ (a ∨ ¬b);   ¬(a ↔ b)  =  (a ∧ ¬b) ∨ (¬a ∧ b)
            inner, outer = (OR, AND) if positive else (AND, OR)
            return _junction(outer, [_junction(inner, [go(g.left, False), go(g.right, True)], False, written),
                                     _junction(inner, [go(g.left, True), go(g.right, False)], False, written)],
                             False, written)
        assert isinstance(g, Quant)
        quants.append(Quantifier(g.kind if positive else DUAL[g.kind], rename.get(g.var, g.var)))
        return go(g.body, positive)

    return go(f, True), quants


# --------------------------------------------------------- bound variables


def _bound_slots(f: Formula) -> tuple[list[str], dict[str, set[tuple[str, int]]]]:
    """Bound variables in reading order and where each is used (predicate, argument position)."""
    order: list[str] = []
    slots: dict[str, set[tuple[str, int]]] = {}
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, Quant):
            if node.var not in order:
                order.append(node.var)
            stack.append((node.body, scope | {node.var}))
        elif isinstance(node, Atom):
            for i, a in enumerate(node.args):
                if a in scope:
                    slots.setdefault(a, set()).add((node.name, i))
        else:
            stack.extend((c, scope) for c in reversed(children(node)))
    return order, slots


def variable_map(original: Formula, output: Formula) -> dict[str, str]:
    """Output bound variable -> original bound variable: same name, then same use, then position."""
    o_order, o_slots = _bound_slots(original)
    r_order, r_slots = _bound_slots(output)
    mapping: dict[str, str] = {}
    for v in r_order:
        if v in o_order:
            mapping[v] = v
    for v in r_order:
        if v in mapping:
            continue
        free = [o for o in o_order if o not in mapping.values()]
        scored = [(len(r_slots.get(v, set()) & o_slots.get(o, set())), -o_order.index(o), o) for o in free]
        best = max(scored, default=None)
        if best and best[0] > 0:
            mapping[v] = best[2]
    for i, v in enumerate(r_order):
        if v not in mapping and i < len(o_order) and o_order[i] not in mapping.values():
            mapping[v] = o_order[i]
    return mapping


def quantifier_findings(orig: list[Quantifier], out: list[Quantifier], found: Findings) -> None:
    o_kind = {q.var: q.kind for q in orig}
    r_kind = {q.var: q.kind for q in out}
    for q in orig:
        if q.var not in r_kind:
            found.add("quantifier_error", f"{SYMBOL[q.kind]}{q.var} dropped")
        elif r_kind[q.var] != q.kind:
            found.add("quantifier_error", f"{SYMBOL[q.kind]}{q.var} written as {SYMBOL[r_kind[q.var]]}{q.var}")
    for q in out:
        if q.var not in o_kind:
            found.add("quantifier_error", f"extra quantifier {SYMBOL[q.kind]}{q.var}")
    o_pos = {q.var: i for i, q in reversed(list(enumerate(orig)))}
    r_pos = {q.var: i for i, q in reversed(list(enumerate(out)))}
    common = [q.var for q in orig if q.var in r_pos]
    for i, u in enumerate(common):
        for v in common[i + 1:]:
            if o_kind[u] != o_kind[v] and o_pos[u] < o_pos[v] and r_pos[u] > r_pos[v]:
                found.add("quantifier_error", f"{SYMBOL[o_kind[u]]}{u} {SYMBOL[o_kind[v]]}{v} reordered as "
                                              f"{SYMBOL[r_kind[v]]}{v} {SYMBOL[r_kind[u]]}{u}")


def surface(kind: str, dual: bool) -> str:
    """The operator as written: a node flipped by a pushed negation was written with the other one."""
    return DUAL[kind] if dual else kind


def joined_seq(nodes: list[Node], op: str) -> tuple[str, ...]:
    """The reading-order tokens of ``nodes`` joined by ``op`` (grouping dropped)."""
    seq: list[str] = []
    for i, n in enumerate(nodes):
        if i:
            seq.append(op)
        seq.extend(n.seq)
    return tuple(seq)
