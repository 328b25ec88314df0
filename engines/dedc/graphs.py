"""DEDC base graphs and scheme enumeration (paper A.2; the authors' ``fill_dag``).

Six four-node base DAGs are filled with one primitive per node, in node order. A
predecessor's output must land in a free input slot of exactly its type; the slot
types here are the released generator's (``header`` and ``k`` are their own kinds, so
a computed value can never become a top-k ``k`` or a column name). On top of that the
A.2 exclusions, as the released code applies them:

* no math operation (add, add_c) directly after a math operation; no filter
  (a primitive whose name contains ``filter``: filter_gt, filter_gt_c) directly after
  a filter (top_k is not a "filter" for this rule);
* ``count`` may not take a lone ``top_k`` input;
* the last node may not output a column; a source node may not be ``add``;
* two nodes with identical predecessor and successor lists must be ordered by output
  type (view < value < row < column), then by primitive name;
* ``add`` may not have two such interchangeable ``count`` predecessors.

That gives 425 filled DAGs (263/34/68/10/22/6 by shape); the 323 whose last node is
not ``add`` are the benchmark's schemes (233/34/32/10/8/6), each identified by its
position in that order, which is also its line in the official data files.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from engines.dedc.primitives import PRIMITIVES

#: Input slot types and output type of each primitive, as the released generator types
#: them (``header`` = a column name literal, ``k`` = an integer literal).
SIGNATURES: dict[str, tuple[tuple[str, ...], str]] = {p.name: (p.slots, p.output) for p in PRIMITIVES}

#: Enumeration order of primitives (f0..f9).
ORDER: tuple[str, ...] = tuple(p.name for p in PRIMITIVES)

#: Primitives that may not start a graph (math operations proper).
NO_SOURCE = frozenset({"add"})
#: Math operations for the "no consecutive math" rule.
MATH_OPS = frozenset({"add", "add_c"})
OUT_RANK = {"view": 0, "value": 1, "row": 2, "column": 3}

Prev = tuple[tuple[int, ...], ...]

#: The six four-node base graphs: predecessors of node i (paper Figure 2, left to right).
SHAPES: tuple[Prev, ...] = (
    ((), (0,), (1,), (2,)),          # 0: chain
    ((), (), (0, 1), (2,)),          # 1: two sources join, then one more step
    ((), (0,), (), (1, 2)),          # 2: a two-step branch and a source join at the end
    ((), (0,), (0, 1), (2,)),        # 3: node 0 feeds 1 and 2, 1 feeds 2
    ((), (0,), (0,), (1, 2)),        # 4: diamond
    ((), (0,), (1,), (1, 2)),        # 5: node 1 feeds 2 and 3, 2 feeds 3
)
#: Small graphs used for the primitive demonstrations (1 node; 2-node chain).
ONE_NODE: Prev = ((),)
TWO_NODE: Prev = ((), (0,))


def filter_like(name: str) -> bool:
    return "filter" in name


def out_type(name: str) -> str:
    return SIGNATURES[name][1]


def tag_type(t: str) -> str:
    """Edge type as graph types count it: a row counts as a view, a column as a value."""
    return {"row": "view", "column": "value"}.get(t, t)


def successors(prev: Prev) -> tuple[tuple[int, ...], ...]:
    succ: list[list[int]] = [[] for _ in prev]
    for node, ps in enumerate(prev):
        for p in ps:
            succ[p].append(node)
    return tuple(tuple(s) for s in succ)


@dataclass(frozen=True)
class FilledDag:
    """A base graph with a primitive on every node.

    ``fill`` is the position among all filled DAGs of this node count (0..424 for
    four nodes); ``scheme`` the position among the 323 schemes (None for the DAGs
    ending in ``add``, which only ever serve as demonstrations). ``slots[i][j]`` is the
    predecessor node filling input slot j of node i, or -1 for a fresh parameter.
    """

    fill: int
    shape: int
    prev: Prev
    prims: tuple[str, ...]
    slots: tuple[tuple[int, ...], ...]
    scheme: int | None = None

    @property
    def n(self) -> int:
        return len(self.prims)

    @cached_property
    def out_types(self) -> tuple[str, ...]:
        return tuple(out_type(p) for p in self.prims)

    @cached_property
    def graph_tp(self) -> tuple[int, tuple[str, ...]]:
        """(shape, edge types of all nodes but the last) — the paper's graph type."""
        return (self.shape, tuple(tag_type(t) for t in self.out_types[:-1]))

    @cached_property
    def graph_type(self) -> str:
        return graph_type_str(*self.graph_tp)


def graph_type_str(shape: int, types: tuple[str, ...] | list[str]) -> str:
    return f"{shape}:{','.join(tag_type(t) for t in types)}"


def _interchangeable_pairs(prev: Prev) -> list[tuple[int, int]]:
    succ = successors(prev)
    n = len(prev)
    return [(i, j) for i in range(n) for j in range(i + 1, n) if prev[i] == prev[j] and succ[i] == succ[j]]


def fill_shape(prev: Prev) -> list[tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]]:
    """All valid primitive assignments of one base graph, in enumeration order."""
    n = len(prev)
    pairs = _interchangeable_pairs(prev)
    results: list[tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]] = []

    def canonical(prims: list[str]) -> bool:
        for i, j in pairs:
            ri, rj = OUT_RANK[out_type(prims[i])], OUT_RANK[out_type(prims[j])]
            if ri > rj or (ri == rj and prims[i] > prims[j]):
                return False
        return True

    def step(node: int, prims: list[str], slots: list[tuple[int, ...]]) -> None:
        if node == n:
            if canonical(prims):
                results.append((tuple(prims), tuple(slots)))
            return
        preds = prev[node]
        for name in ORDER:
            ins, out = SIGNATURES[name]
            pred_names = [prims[p] for p in preds]
            if name in MATH_OPS and any(p in MATH_OPS for p in pred_names):
                continue
            if filter_like(name) and any(filter_like(p) for p in pred_names):
                continue
            if name == "count" and pred_names == ["top_k"]:
                continue
            if node == n - 1 and out == "column":
                continue
            if not preds:
                if name not in NO_SOURCE:
                    step(node + 1, prims + [name], slots + [(-1,) * len(ins)])
                continue
            filled = [-1] * len(ins)
            ok = True
            for p in preds:
                t = out_type(prims[p])
                for s, slot_type in enumerate(ins):
                    if slot_type == t and filled[s] == -1:
                        filled[s] = p
                        break
                else:
                    ok = False
                    break
            if not ok:
                continue
            if name == "add" and len(preds) == 2:
                a, b = preds
                if (a, b) in pairs and prims[a] == "count" and prims[b] == "count":
                    continue
            step(node + 1, prims + [name], slots + [tuple(filled)])

    step(0, [], [])
    return results


@lru_cache(maxsize=None)
def filled_dags(shapes: tuple[Prev, ...] = SHAPES) -> tuple[FilledDag, ...]:
    """Every filled DAG over ``shapes`` in enumeration order (425 for the 4-node shapes).

    For the 4-node shapes, ``scheme`` numbers those whose last node is not ``add``.
    """
    out: list[FilledDag] = []
    scheme = 0
    for shape, prev in enumerate(shapes):
        for prims, slots in fill_shape(prev):
            number: int | None = None
            if prims[-1] != "add":
                number = scheme
                scheme += 1
            out.append(FilledDag(fill=len(out), shape=shape, prev=prev, prims=prims, slots=slots, scheme=number))
    return tuple(out)


@lru_cache(maxsize=None)
def schemes() -> tuple[FilledDag, ...]:
    """The 323 schemes of the benchmark (filled 4-node DAGs not ending in ``add``)."""
    return tuple(d for d in filled_dags() if d.scheme is not None)


@lru_cache(maxsize=None)
def scheme_index() -> dict[tuple[int, tuple[str, ...]], int]:
    """(shape, primitives) -> scheme number."""
    return {(d.shape, d.prims): d.scheme for d in schemes() if d.scheme is not None}


@lru_cache(maxsize=None)
def primitive_demo_dags() -> dict[str, FilledDag]:
    """The graph shown as each primitive's demonstration (the P_c setting).

    The 1-node graph of the primitive when one exists; otherwise the first 2-node
    graph (in enumeration order) containing it — as the released construction does
    (add -> kth_max then add; add_c -> add_c then filter_gt_c).
    """
    demos: dict[str, FilledDag] = {}
    for d in filled_dags((ONE_NODE,)):
        demos.setdefault(d.prims[0], d)
    for d in filled_dags((TWO_NODE,)):
        for p in d.prims:
            demos.setdefault(p, d)
    missing = set(ORDER) - set(demos)
    assert not missing, missing
    return demos


def shape_of(prev: Prev) -> int | None:
    """The base-graph number of a 4-node predecessor structure, or None."""
    norm = tuple(tuple(sorted(p)) for p in prev)
    for i, s in enumerate(SHAPES):
        if s == norm:
            return i
    return None
