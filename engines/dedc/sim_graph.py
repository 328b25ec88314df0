"""The simulator's editable copy of an answer DAG, and its rendering back to assignments.

Injections change an ``SGraph`` in place (a node's primitive, its arguments, which node
``result`` names); ``render`` writes it out in a topological order with variable names
numbered per output type.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Union

from engines.dedc.graph import Arg, Graph, Literal, Ref, Undefined
from engines.dedc.primitives import BY_NAME

PREFIX = {"view": "view", "value": "value", "row": "row", "column": "column"}


@dataclass(frozen=True)
class Variable:
    """A variable name written as it is: one the answer does not define (variable misuse)."""

    name: str


SimArg = Union[Literal, Ref, Variable]


@dataclass
class SNode:
    id: int
    symbol: str
    meaning: str | None
    args: list[SimArg]
    prefix: str  # variable prefix (by output type)
    target: str | None = None  # explicit target name (variable misuse)


@dataclass
class SGraph:
    nodes: dict[int, SNode]
    result: SimArg
    names: str
    next_id: int = 0

    def copy(self) -> "SGraph":
        return SGraph({i: SNode(n.id, n.symbol, n.meaning, list(n.args), n.prefix, n.target)
                       for i, n in self.nodes.items()}, self.result, self.names, self.next_id)

    def add(self, symbol: str, meaning: str | None, args: list[SimArg], prefix: str) -> SNode:
        node = SNode(self.next_id, symbol, meaning, args, prefix)
        self.nodes[node.id] = node
        self.next_id += 1
        return node

    def consumers(self, i: int) -> list[tuple[int | None, int]]:
        """(consumer id or None for result, slot) pairs that reference node ``i``."""
        uses: list[tuple[int | None, int]] = [(n.id, k) for n in self.nodes.values()
                                               for k, a in enumerate(n.args) if a == Ref(i)]
        if self.result == Ref(i):
            uses.append((None, 0))
        return uses

    def depends_on(self, i: int, j: int) -> bool:
        """Does node ``i`` (transitively) use node ``j``?"""
        stack, seen = [i], set()
        while stack:
            k = stack.pop()
            if k == j:
                return True
            if k in seen:
                continue
            seen.add(k)
            stack.extend(a.node for a in self.nodes[k].args if isinstance(a, Ref))
        return False

    def replace_refs(self, old: int, new: SimArg) -> None:
        for n in self.nodes.values():
            n.args = [new if a == Ref(old) else a for a in n.args]
        if self.result == Ref(old):
            self.result = new


def is_view(g: SGraph, arg: SimArg) -> bool:
    """The whole table (``all``) or a node producing a view."""
    return arg == Literal("all") or (isinstance(arg, Ref) and g.nodes[arg.node].prefix == "view")


def out_type(meaning: str | None, fallback: str) -> str:
    return PREFIX[BY_NAME[meaning].output] if meaning else fallback


def from_graph(graph: Graph) -> SGraph:
    nodes: dict[int, SNode] = {}
    for n in graph.nodes:
        prefix = out_type(n.meaning, (n.var.rsplit("_", 1)[0] or "value") if n.var else "value")
        nodes[n.index] = SNode(n.index, n.symbol, n.meaning, [_sim_arg(a) for a in n.args], prefix)
    return SGraph(nodes, _sim_arg(graph.result if graph.result is not None else Literal("all")), graph.names,
                  len(graph.nodes))


def _sim_arg(arg: Arg) -> SimArg:
    return Variable(arg.name) if isinstance(arg, Undefined) else arg


# --------------------------------------------------------------------- render


def topo_order(g: SGraph, rng: random.Random | None) -> list[int]:
    deps = {i: {a.node for a in n.args if isinstance(a, Ref)} for i, n in g.nodes.items()}
    done: set[int] = set()
    order: list[int] = []
    pending = sorted(g.nodes)
    while pending:
        ready = [i for i in pending if deps[i] <= done]
        if not ready:  # a cycle cannot come from the injections; keep going deterministically
            ready = pending[:1]
        pick = ready[rng.randrange(len(ready))] if rng is not None else ready[0]
        order.append(pick)
        done.add(pick)
        pending.remove(pick)
    return order


def render(g: SGraph, rng: random.Random | None = None, shuffle_order: bool = False,
           shuffle_numbers: bool = False, newline: bool = False) -> str:
    order = topo_order(g, rng if shuffle_order else None)
    counts: dict[str, int] = {}
    for i in order:
        counts[g.nodes[i].prefix] = counts.get(g.nodes[i].prefix, 0) + 1
    numbers: dict[str, list[int]] = {p: list(range(1, c + 1)) for p, c in counts.items()}
    if shuffle_numbers and rng is not None:
        for p in numbers:
            rng.shuffle(numbers[p])
    used: dict[str, int] = {}
    name: dict[int, str] = {}
    for i in order:
        p = g.nodes[i].prefix
        name[i] = f"{p}_{numbers[p][used.get(p, 0)]}"
        used[p] = used.get(p, 0) + 1

    def arg(a: SimArg) -> str:
        return name[a.node] if isinstance(a, Ref) else a.text if isinstance(a, Literal) else a.name

    steps = []
    for i in order:
        n = g.nodes[i]
        steps.append(f"{n.target or name[i]} := {n.symbol} ({', '.join(arg(a) for a in n.args)});")
    steps.append(f"result := {arg(g.result)};")
    return ("\n" if newline else " ").join(steps)
