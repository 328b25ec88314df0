"""Star / pitchfork graph patterns and their connected sub-patterns (paper section 3.2).

A base pattern of breadth b and depth d is a star of b branches, each a chain of d
edges leaving the centre node (the answer). Node ``(j, l)`` is level ``l`` of branch
``j``; ``(0, 0)`` is the centre, shared by all branches. A connected sub-pattern either
contains the centre (a prefix of each branch, not all empty) or is a segment of a
single branch away from the centre; its answer is the node nearest the centre, the
outer end of every branch piece becomes the instance's entity and the nodes between
stay variables.

Self-contained shots are chosen here for generated and official items alike, as the
authors' generator of the released ``*_10_fixed_*`` files does, without its random
parts: a greedy exact (disjoint) edge cover, largest sub-pattern first; then, if the
target joins branches or chains edges and no shot does, one shot that does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Callable

CENTRE = (0, 0)
SHOTS_CAP = 10  # self-contained shots per item, as in the released *_10_fixed_* files


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


@dataclass(frozen=True)
class PatternNode:
    """One sub-pattern of a base instance by its edge ids ``branch.level``: what shot choice needs."""

    gid: int
    edges: frozenset[str]
    depth: int
    breadth: int


def self_contained_cover(target: PatternNode, candidates: list[PatternNode]) -> list[PatternNode]:
    """The released shot choice without its random parts; at most ``SHOTS_CAP`` shots, cover first.

    Greedy exact cover: candidates by size (then by the smaller of depth and breadth, then
    gid), each taken when it lies inside the target and shares no edge with those taken.
    """
    order = sorted(candidates, key=lambda n: (-len(n.edges), -min(n.depth, n.breadth), n.gid))
    chosen: list[PatternNode] = []
    covered: frozenset[str] = frozenset()
    for n in order:
        if covered == target.edges:
            break
        if n.edges <= target.edges and not n.edges & covered:
            chosen.append(n)
            covered |= n.edges
    return (chosen + _shape_shots(target, chosen, order))[:SHOTS_CAP]


def _shape_shots(target: PatternNode, chosen: list[PatternNode], order: list[PatternNode]) -> list[PatternNode]:
    """Shots showing a join of branches / a chain of edges when the target has one and no chosen shot does.

    One shot with both if a sub-pattern of the target has both; otherwise one of each
    that is needed, a sub-pattern of the target where there is one, else any train item.
    """
    wide = target.breadth > 1 and all(n.breadth == 1 for n in chosen)
    deep = target.depth > 1 and all(n.depth == 1 for n in chosen)
    inside = [n for n in order if n.edges <= target.edges and n not in chosen]
    if wide and deep:
        both = next((n for n in inside if n.breadth > 1 and n.depth > 1), None)
        if both is not None:
            return [both]
    wants: list[Callable[[PatternNode], bool]] = []
    if wide:
        wants.append(lambda n: n.breadth > 1)
    if deep:
        wants.append(lambda n: n.depth > 1)
    extra: list[PatternNode] = []
    for want in wants:
        pick = next((n for pool in (inside, order) for n in pool
                     if want(n) and n not in chosen and n not in extra), None)
        if pick is not None:
            extra.append(pick)
    return extra
