"""An answer as a DAG: one node per primitive call, edges to the nodes its arguments name.

``build_graph`` resolves each variable to its latest earlier definition, so the DAG is
independent of variable names and of the order of independent steps. An argument is a
literal (``all``, ``attr_3``, a number), a reference to another node, or a variable that
is not defined (yet) where it is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence, Union

from engines.dedc.parse import Assignment, Call, Term
from engines.dedc.primitives import BY_NAME, COMMUTATIVE, NAME_MAPPINGS

LITERAL = re.compile(r"(?:all|attr_\d+|item_\d+|-?\d+(?:\.\d+)?)\Z")
_VAR_TYPE = re.compile(r"(view|value|row|column|col)(?:_?\d+)?\Z")
_SLOT_TYPES = {"view": "view", "value": "value", "row": "row", "column": "column", "col": "column"}


# --------------------------------------------------------------------- naming


@dataclass(frozen=True)
class Naming:
    names: str
    meaning: dict[str, str]  # symbol -> meaning
    symbol: dict[str, str]  # meaning -> symbol
    commutative: frozenset[str]  # symbols whose two arguments may be swapped


@lru_cache(maxsize=None)
def naming(names: str | None) -> Naming:
    names = names if names in NAME_MAPPINGS else "opaque"
    display = NAME_MAPPINGS[names]
    return Naming(names, {s: m for m, s in display.items()}, dict(display),
                  frozenset(display[m] for m in COMMUTATIVE))


# ------------------------------------------------------------------ arguments


@dataclass(frozen=True)
class Literal:
    text: str

    @property
    def key(self) -> tuple[str, str]:
        return ("lit", self.text)


@dataclass(frozen=True)
class Ref:
    node: int  # index of the node whose value the argument is


@dataclass(frozen=True)
class Undefined:
    name: str
    why: str  # "never defined" | "used before its definition (line n)"

    @property
    def key(self) -> tuple[str, str]:
        return ("undef", self.name)


Arg = Union[Literal, Ref, Undefined]


def distinctive(arg: object) -> str | None:
    """The literal that identifies a step (``all``, references and anything else do not), else None."""
    return arg.text if isinstance(arg, Literal) and arg.text != "all" else None


# ---------------------------------------------------------------------- graph


@dataclass
class Node:
    index: int
    var: str  # target variable; "" for a call nested inside another call
    symbol: str
    meaning: str | None  # None: unknown symbol under this naming
    args: list[Arg]
    line: int
    call: Call

    @property
    def label(self) -> str:
        return self.var or self.call.text()

    @property
    def text(self) -> str:
        body = self.call.text()
        return f"{self.var} := {body}" if self.var else body

    def children(self) -> list[int]:
        return [a.node for a in self.args if isinstance(a, Ref)]


@dataclass
class Graph:
    nodes: list[Node]
    result: Arg | None  # what `result` names; None when the answer never assigns result
    names: str
    _consumers: list[list[int]] | None = field(default=None, repr=False)
    _reachable: set[int] | None = field(default=None, repr=False)

    def consumers(self) -> list[list[int]]:
        if self._consumers is None:
            consumers: list[list[int]] = [[] for _ in self.nodes]
            for node in self.nodes:
                for child in node.children():
                    consumers[child].append(node.index)
            self._consumers = consumers
        return self._consumers

    def reachable(self) -> set[int]:
        """Nodes the result depends on."""
        if self._reachable is None:
            seen: set[int] = set()
            stack = [self.result.node] if isinstance(self.result, Ref) else []
            while stack:
                i = stack.pop()
                if i in seen:
                    continue
                seen.add(i)
                stack.extend(self.nodes[i].children())
            self._reachable = seen
        return self._reachable


def build_graph(assignments: Sequence[Assignment], names: str | None) -> Graph:
    """The DAG of an answer, resolving each variable to its latest earlier definition."""
    builder = _Builder(assignments, naming(names))
    for a in assignments:
        builder.bound[a.target] = (Ref(builder.add(a.value, a.target, a.line)) if isinstance(a.value, Call)
                                   else builder.resolve(a.value, a.line))
    return Graph(builder.nodes, builder.bound.get("result"), builder.symbols.names)


class _Builder:
    """The graph as ``build_graph`` grows it (an object, not closures calling each other: those are a
    reference cycle, garbage only the collector frees)."""

    def __init__(self, assignments: Sequence[Assignment], symbols: Naming):
        self.assignments, self.symbols = assignments, symbols
        self.first_definition: dict[str, int] = {}
        for k, a in enumerate(assignments):
            self.first_definition.setdefault(a.target, k)
        self.bound: dict[str, Arg] = {}
        self.nodes: list[Node] = []

    def resolve(self, term: Term, line: int) -> Arg:
        if isinstance(term, Call):
            return Ref(self.add(term, "", line))
        hit = self.bound.get(term)
        if hit is not None:
            return hit
        if LITERAL.match(term):
            return Literal(term)
        later = self.first_definition.get(term)
        return Undefined(term, "never defined" if later is None else
                         f"used before its definition (line {self.assignments[later].line})")

    def add(self, call: Call, var: str, line: int) -> int:
        args = [self.resolve(t, line) for t in call.args]
        node = Node(len(self.nodes), var, call.symbol, self.symbols.meaning.get(call.symbol), args, line, call)
        self.nodes.append(node)
        return node.index


def arg_type(graph: Graph, arg: Arg) -> str | None:
    """The type an argument has (view, value, row, column), None when it cannot be told."""
    if isinstance(arg, Ref):
        meaning = graph.nodes[arg.node].meaning
        return BY_NAME[meaning].output if meaning else None
    if isinstance(arg, Undefined):
        shaped = _VAR_TYPE.match(arg.name)
        return _SLOT_TYPES[shaped.group(1)] if shaped else None
    if arg.text == "all":
        return "view"
    if arg.text.startswith("attr_"):
        return "column"
    if arg.text.startswith("item_"):
        return "row"
    return "value"


def describe_arg(graph: Graph, arg: Arg) -> str:
    if isinstance(arg, Ref):
        return graph.nodes[arg.node].label
    return arg.text if isinstance(arg, Literal) else arg.name


def signature_text(meaning: str, symbol: str) -> str:
    return f"{symbol} ({', '.join(BY_NAME[meaning].inputs)})"
