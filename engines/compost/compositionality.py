"""Compositionality F1, two ways: the authors' scorer (the paper's Table 1) and a reading of the prose.

The authors' scorer (``subgraph_comp_score`` and ``CompScores`` in their
``llm/compositionality/evaluation.py``), reimplemented:

- Per item, F1 > ``GREEN`` (0.99) is green (correct), F1 < ``RED`` (0.0001) red (wrong),
  anything between "partial" and counted in neither class.
- An item's descendants are its strict sub-patterns within the same base pattern, taken
  from the base shape's whole lattice. A lattice node missing from the results counts as
  green with split train (their fixed-shot runs leave train items out); a base absent
  from the results entirely is not counted.
- TP: green with at least one descendant and no red descendant. FP: every other green
  item, so every green one-edge item (``all([])`` is True in their "bad green" test).
- FN: red items whose green descendants cover all their edges, and every red one-edge
  item (their ``len(descendants) == 0``). Other red items are TN.
- F1 = 2PR/(P+R) over the summed counts, P = TP/(TP+FP), R = TP/(TP+FN), each 0 when
  undefined. A split's score counts that split's items; descendants come from all splits.

The prose reading (paper section 4.1, kept as ``compositionality_f1_def``): correct items
all of whose sub-patterns in the run are correct are TP, other correct items FP; wrong
items for which correct strict sub-patterns cover every edge are FN, other wrong items TN;
the per-question F1 (1 for TP, 0 for FP and FN) averages to TP / (TP + FP + FN). Items are
correct when their status is ``correct``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

from engines.compost.patterns import sub_patterns
from engines.core import ItemResult

GREEN, RED = 0.99, 0.0001
SPLITS = ("train", "val", "test")
MISSING_F1, MISSING_SPLIT = 1.0, "train"

Edges = frozenset[str]


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    partial: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, cls: str) -> None:
        setattr(self, cls, getattr(self, cls) + 1)


@lru_cache(maxsize=None)
def lattice(base_depth: int, base_breadth: int) -> tuple[tuple[Edges, tuple[Edges, ...]], ...]:
    """Every sub-pattern of a base shape as its set of ``branch.level`` edge ids, with its strict sub-patterns."""
    nodes = [frozenset(f"{b}.{lvl}" for b, lvl in sp.edges) for sp in sub_patterns(base_depth, base_breadth)]
    return tuple((n, tuple(d for d in nodes if d < n)) for n in nodes)


def _with_edges(results: Sequence[ItemResult]) -> dict[str, list[ItemResult]]:
    by_base: dict[str, list[ItemResult]] = defaultdict(list)
    for r in results:
        if r.item.meta.get("edges") is not None:
            by_base[str(r.item.meta.get("base"))].append(r)
    return by_base


def authors_class(f1: float, descendants: list[tuple[Edges, float]], mine: Edges) -> str:
    """tp, fp, fn, tn or partial for one item with ``f1``, given its descendants' (edges, F1)."""
    if f1 > GREEN:
        return "tp" if descendants and not any(d < RED for _, d in descendants) else "fp"
    if f1 < RED:
        covered = frozenset().union(*(e for e, d in descendants if d > GREEN))
        return "fn" if not descendants or covered == mine else "tn"
    return "partial"


def _authors_nodes(results: Sequence[ItemResult]) -> Iterator[tuple[ItemResult | None, str, str]]:
    """Every lattice node of every base in the run: (its result or None when missing, split, class)."""
    for group in _with_edges(results).values():
        meta = group[0].item.meta
        seen = {frozenset(r.item.meta["edges"]): r for r in group}
        nodes = lattice(int(meta["base_depth"]), int(meta["base_breadth"]))
        f1 = {e: float(seen[e].scores.get("f1", 0.0)) if e in seen else MISSING_F1 for e, _ in nodes}
        for node, below in nodes:
            split = str(seen[node].item.meta.get("split")) if node in seen else MISSING_SPLIT
            yield seen.get(node), split, authors_class(f1[node], [(d, f1[d]) for d in below], node)


def authors_counts(results: Sequence[ItemResult]) -> dict[str, Counts]:
    """The authors' TP/FP/FN/TN/partial counts for ``all`` and each split, from each item's ``f1`` score."""
    counts = {"all": Counts(), **{s: Counts() for s in SPLITS}}
    for _, split, cls in _authors_nodes(results):
        counts["all"].add(cls)
        counts.setdefault(split, Counts()).add(cls)
    return counts


def authors_classes(results: Sequence[ItemResult]) -> dict[str, str]:
    """Item id -> TP, FP, FN, TN or partial by the authors' rule (what Table 1 counts)."""
    return {r.item.id: cls.upper() if cls != "partial" else cls
            for r, _, cls in _authors_nodes(results) if r is not None}


def prose_classes(results: Sequence[ItemResult]) -> dict[str, str]:
    """Item id -> TP, FP, FN or TN by the paper's prose; items without edge data are skipped."""
    out: dict[str, str] = {}
    for group in _with_edges(results).values():
        edges = {r.item.id: frozenset(r.item.meta["edges"]) for r in group}
        for r in group:
            mine = edges[r.item.id]
            subs = [s for s in group if s is not r and edges[s.item.id] <= mine]
            if r.status == "correct":
                out[r.item.id] = "TP" if all(s.status == "correct" for s in subs) else "FP"
            else:
                covered = frozenset().union(*(edges[s.item.id] for s in subs
                                              if s.status == "correct" and edges[s.item.id] < mine))
                out[r.item.id] = "FN" if covered == mine else "TN"
    return out


def prose_f1(classes: Sequence[str]) -> float:
    counted = [c for c in classes if c in ("TP", "FP", "FN")]
    return sum(c == "TP" for c in counted) / len(counted) if counted else 0.0
