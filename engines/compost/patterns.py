"""Star / pitchfork graph patterns and their connected sub-patterns (paper section 3.2).

A base pattern of breadth b and depth d is a star of b branches, each a chain of d
edges leaving the centre node (the answer). Node ``(j, l)`` is level ``l`` of branch
``j``; ``(0, 0)`` is the centre, shared by all branches. A connected sub-pattern either
contains the centre (a prefix of each branch, not all empty) or is a segment of a
single branch away from the centre; its answer is the node nearest the centre, the
outer end of every branch piece becomes the instance's entity and the nodes between
stay variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

CENTRE = (0, 0)


def node(branch: int, level: int) -> tuple[int, int]:
    return CENTRE if level == 0 else (branch, level)


@dataclass(frozen=True)
class Piece:
    """Edges ``start+1 .. end`` of one branch (levels ``start`` .. ``end`` of its nodes)."""

    branch: int
    start: int
    end: int


@dataclass(frozen=True)
class SubPattern:
    pieces: tuple[Piece, ...]

    @property
    def edges(self) -> frozenset[tuple[int, int]]:
        """Edge ids ``(branch, level)``: the edge that reaches node ``(branch, level)``."""
        return frozenset((p.branch, lvl) for p in self.pieces for lvl in range(p.start + 1, p.end + 1))

    @property
    def answer(self) -> tuple[int, int]:
        first = self.pieces[0]
        return node(first.branch, first.start)

    @property
    def depth(self) -> int:
        return max(p.end - p.start for p in self.pieces)

    @property
    def breadth(self) -> int:
        return len(self.pieces)


def sub_patterns(depth: int, breadth: int) -> list[SubPattern]:
    """Every connected sub-pattern, smallest first; the full pattern is the last one."""
    found: list[SubPattern] = []
    for lengths in product(range(depth + 1), repeat=breadth):
        pieces = tuple(Piece(j, 0, k) for j, k in enumerate(lengths) if k)
        if pieces:
            found.append(SubPattern(pieces))
    for j in range(breadth):
        for start in range(1, depth):
            for end in range(start + 1, depth + 1):
                found.append(SubPattern((Piece(j, start, end),)))
    full_edges = depth * breadth
    found.sort(key=lambda sp: (len(sp.edges), len(sp.edges) == full_edges, sorted(sp.edges)))
    return found
