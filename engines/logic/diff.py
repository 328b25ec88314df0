"""The structural diff of a wrong round trip against the original (``tags`` module docstring, point 3).

Both formulas come in negation normal form (``normal``); ``Differ`` compares them top-down
and puts what it finds into the tagger's ``Findings``.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from engines.logic.formula import DUAL
from engines.logic.normal import SYMBOL, Node, joined_seq, surface
from engines.logic.render import show

if TYPE_CHECKING:
    from engines.logic.tags import Findings

# -------------------------------------------------------------------- diff


def _text(n: Node) -> str:
    return show(n.source)


def _group(nodes: list[Node], op: str) -> str:
    return f" {SYMBOL[op]} ".join(_text(n) if n.kind == "lit" else f"({_text(n)})" for n in nodes)


def _keys(nodes: list[Node]) -> Counter[str]:
    return Counter(n.key for n in nodes)


class Differ:
    def __init__(self, found: Findings):
        self.found = found

    def node(self, a: Node, b: Node) -> None:
        if a.key == b.key:
            return
        if a.kind == "lit" and b.kind == "lit":
            self.literal(a, b)
        elif a.kind == "lit" or b.kind == "lit":
            op = b.kind if a.kind == "lit" else a.kind
            self.parts(op, list(a.parts) or [a], list(b.parts) or [b])
        elif a.kind == b.kind:
            self.parts(a.kind, list(a.parts), list(b.parts))
        elif a.dual_key() == b.key:
            self.found.add("negation_error", f"{_text(a)} written as its negation {_text(b)}")
        elif a.seq == b.seq:
            self.found.add("scope_error", f"{_text(a)} regrouped as {_text(b)}")
        else:
            evidence = f"{_text(a)} written as {_text(b)}"
            self.changed_operator(surface(a.kind, a.dual), surface(b.kind, b.dual), evidence)
            self.parts(b.kind, list(a.parts), list(b.parts))

    def changed_operator(self, written_a: str, written_b: str, evidence: str) -> None:
        """∧/∨ differ in negation normal form: a swap if they were written differently, else a
        negation that moved without De Morgan's exchange of ∧ and ∨ (or was added or dropped)."""
        if written_a == written_b:
            self.found.add("negation_error", f"{evidence}: the {SYMBOL[written_a]} kept where a negation "
                                             "changed (De Morgan)")
        else:
            self.found.add("operator_swap", f"{SYMBOL[written_a]} written as {SYMBOL[written_b]}: {evidence}")

    def literal(self, a: Node, b: Node) -> None:
        assert a.atom is not None and b.atom is not None
        (name_a, args_a), (name_b, args_b) = a.atom, b.atom
        if name_a != name_b:
            self.found.add("symbol_hallucination", f"{_text(a)} written as {_text(b)}")
        elif len(args_a) != len(args_b):
            self.found.add("arity_error", f"{_text(a)} written as {_text(b)}")
        elif args_a != args_b:
            self.found.add("argument_error", f"{_text(a)} written as {_text(b)}")
        if a.positive != b.positive:
            self.found.add("negation_error", f"{_text(a)} written as {_text(b)}")

    def parts(self, op: str, A: list[Node], B: list[Node]) -> None:
        """Align the parts of two ∧ (or ∨) nodes: exact matches, then groups, then pairs."""
        rest_a, rest_b = _unmatched(A, B), _unmatched(B, A)
        _drop_regrouped_equals(op, rest_a, rest_b)
        _drop_regrouped_equals(op, rest_b, rest_a)
        if not rest_a and not rest_b:
            return
        regrouped = _regrouping(op, A, B, rest_a, rest_b)
        if regrouped is not None:
            self.found.add("scope_error", f"{_group(regrouped[0], op)} regrouped as {_group(regrouped[1], op)}")
            return
        for mine, theirs, original in ((rest_a, rest_b, True), (rest_b, rest_a, False)):
            self.covering(op, mine, theirs, original)
            self.negated(op, mine, theirs, original)
        for a, b in _pair(rest_a, rest_b):
            self.node(a, b)
        for a in rest_a:
            self.found.add("omission", f"{_text(a)} is missing")
        for b in rest_b:
            self.found.add("extra_subformula", f"{_text(b)} is not in the original")

    def covering(self, op: str, mine: list[Node], theirs: list[Node], original: bool) -> None:
        """A part (of the other operator) whose own parts are spread over several parts of the other side.

        ``(x1 ∨ x2 ∨ x3)`` against ``x1, x2, x3`` (or ``(x1 ∨ x2), x3``) at a ∧ level: the ∨ were
        written as ∧ and the pieces merged into the level above.
        """
        for n in list(mine):
            if n.kind != DUAL[op]:
                continue
            chosen = _cover(_keys([q for p in n.parts for q in (p.leaves if p.kind == op else (p,))]), n.kind, theirs)
            if chosen is None:
                continue
            written = (surface(n.kind, n.dual), chosen[0].context)
            shown = (_text(n), _group(chosen, op))
            if not original:
                written, shown = written[::-1], shown[::-1]
            self.changed_operator(*written, f"{shown[0]} written as {shown[1]}")
            for t in chosen:
                theirs.remove(t)
            mine.remove(n)

    def negated(self, op: str, mine: list[Node], theirs: list[Node], original: bool) -> None:
        """A part whose negation (pushed inside, so merged one level up) is on the other side."""
        for n in list(mine):
            if n.kind != DUAL[op]:
                continue
            negation = Counter(p.dual_key() for p in n.parts)
            if not negation <= _keys(theirs):
                continue
            self.found.add("negation_error", f"{_text(n)} negated in the round trip" if original
                           else f"{_text(n)} is the negation of what the original has")
            _take(theirs, negation)
            mine.remove(n)


def _cover(need: Counter[str], kind: str, theirs: list[Node]) -> list[Node] | None:
    """Two or more of ``theirs`` whose keys (or, for a ``kind`` node, whose parts' keys) make up ``need``."""
    if not any(need[t.key] or (t.kind == kind and any(need[p.key] for p in t.parts)) for t in theirs):
        return None
    left = Counter(need)
    chosen: list[Node] = []
    for t in theirs:
        if left[t.key] > 0:
            left[t.key] -= 1
            chosen.append(t)
        elif t.kind == kind:
            pieces = _keys(list(t.parts))
            if all(left[k] >= c for k, c in pieces.items()):
                left.subtract(pieces)
                chosen.append(t)
    return chosen if len(chosen) >= 2 and not any(left.values()) else None


def _drop_regrouped_equals(op: str, mine: list[Node], theirs: list[Node]) -> None:
    """Drop a group of the level's own operator whose leaves the other side has as separate parts.

    ``¬(x1 ∨ x2) ∧ x3`` against ``¬x1 ∧ ¬x2 ∧ x3``: a negation pushed through correctly, no error.
    """
    for n in list(mine):
        if n.kind != op:
            continue
        leaves = _keys(list(n.leaves))
        if leaves <= _keys(theirs):
            _take(theirs, leaves)
            mine.remove(n)


def _regrouping(op: str, A: list[Node], B: list[Node], rest_a: list[Node],
                rest_b: list[Node]) -> tuple[list[Node], list[Node]] | None:
    """Neighbouring parts of one side written, in the same order, as differently grouped parts of the other.

    The unmatched parts are tried first; with repeated parts (CNF clauses repeat) the group
    may include a part that matched a twin elsewhere, so every run of neighbours of one side
    is tried against the other side's unmatched parts.
    """
    if not rest_a or not rest_b:
        return None
    if joined_seq(rest_a, op) == joined_seq(rest_b, op):
        return rest_a, rest_b
    for mine, theirs_all, rest in ((A, B, rest_b), (B, A, rest_a)):
        target = joined_seq(rest, op)
        lengths = [len(n.seq) for n in mine]
        for i in range(len(mine)):
            total = -1
            for j in range(i, len(mine)):
                total += lengths[j] + 1
                if total > len(target):
                    break
                window = mine[i:j + 1]
                if total == len(target) and joined_seq(window, op) == target and \
                        _keys([n for k, n in enumerate(mine) if not i <= k <= j]) == \
                        _keys([n for n in theirs_all if n not in rest]):
                    return (window, rest) if mine is A else (rest, window)
    return None


def _unmatched(mine: list[Node], theirs: list[Node]) -> list[Node]:
    """The nodes of ``mine`` without an identical node in ``theirs`` (as multisets)."""
    left = _keys(theirs)
    rest = []
    for n in mine:
        if left[n.key] > 0:
            left[n.key] -= 1
        else:
            rest.append(n)
    return rest


def _take(nodes: list[Node], keys: Counter[str]) -> None:
    want = Counter(keys)
    for n in list(nodes):
        if want[n.key] > 0:
            want[n.key] -= 1
            nodes.remove(n)


def _similarity(a: Node, b: Node) -> float:
    if a.kind == "lit" and b.kind == "lit":
        assert a.atom is not None and b.atom is not None
        return 3.0 if a.atom == b.atom else 2.0 if a.atom[0] == b.atom[0] else 1.0
    names_a, names_b = a.names, b.names
    overlap = sum((names_a & names_b).values()) / max(1, sum((names_a | names_b).values()))
    if a.kind == "lit" or b.kind == "lit":
        return 0.1 + overlap
    exact = len(set(p.key for p in a.parts) & set(p.key for p in b.parts))
    return 0.5 + overlap + exact + (0.5 if a.kind == b.kind else 0.0)


def _pair(A: list[Node], B: list[Node]) -> list[tuple[Node, Node]]:
    """Greedy best pairs between the leftovers; the paired nodes are removed from both lists."""
    scored = sorted(((-_similarity(a, b), i, j) for i, a in enumerate(A) for j, b in enumerate(B)))
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, i, j in scored:
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        pairs.append((A[i], B[j]))
    A[:] = [a for i, a in enumerate(A) if i not in used_a]
    B[:] = [b for j, b in enumerate(B) if j not in used_b]
    return pairs
