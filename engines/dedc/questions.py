"""DEDC question generation (paper A.3, Tables 7 and 8, as the released generator words it).

Each node of a sample carries its fresh parameters (a :class:`NodeParams`); a
:class:`Phrases` object turns one node into the noun phrases the templates combine:

* ``leaf_scope()`` / ``scope(val)`` / ``question(val)`` for nodes read as a set of items
  (filters, top_k, kth_argmax), ``link`` being the word joining them to their scope;
* ``leaf_value()`` / ``value(val)`` / ``question(val)`` for nodes read as a quantity.

A "leaf" phrase is used when the node reads from all items. Templates are keyed by
(base graph, edge types of nodes 0..n-2 with row -> view and column -> value).

The wording is the benchmark's specification and follows the released data exactly
(e.g. "the top 913 items for attr_777", "the 289th largest attr_499",
"the item that has 5th largest attr_3" — without "the" before the ordinal there).
"""

from __future__ import annotations

import sys

from dataclasses import dataclass
from typing import Callable

from engines.dedc.graphs import out_type, tag_type


def ordinal(n: int) -> str:
    """English ordinal as the generator writes it ("" for 1, which k >= 2 never hits)."""
    if n == 1:
        return ""
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(slots=True)
class NodeParams:
    """One node's fresh parameters and its rendered arguments.

    ``args`` are the expression's arguments as they appear in the gold answer
    (variables for the slots a predecessor fills, literals otherwise). The other
    fields are what the phrases need: header ``h``, literal value ``val``, column
    literal ``col``, ``k``, row literal ``row``, and for add the second literal ``val2``.
    """

    prim: str
    var: str
    args: tuple[str, ...]
    h: str = ""
    val: int | None = None
    col: str | None = None
    k: int | None = None
    row: str | None = None
    val2: int | None = None
    col_header: str | None = None  # add_c: the header it shifts

    def __post_init__(self) -> None:
        # a 100,000-item run holds half a million nodes whose names and literals come from
        # a few thousand distinct strings: one copy of each keeps generation's memory down
        self.var = sys.intern(self.var)
        self.args = tuple(sys.intern(a) for a in self.args)
        if self.h:
            self.h = sys.intern(self.h)


def _given(val: object, default: object, what: str) -> object:
    """``val`` when a template passes one, else the node's own literal (which must exist)."""
    if val is not None:
        return val
    if default is None:
        raise ValueError(f"{what}: the argument comes from another node, the template must pass it")
    return default


class Phrases:
    """The natural-language pieces of one node."""

    def __init__(self, p: NodeParams):
        self.p = p
        self.prim = p.prim
        self.link = {
            "filter_gt": "among", "top_k": "among", "filter_gt_c": "among", "kth_argmax": "among",
            "kth_max": "of", "sum": "of", "count": "of", "hop": "of",
        }.get(p.prim, "")

    # ------------------------------------------------------------ set-valued nodes
    def leaf_scope(self) -> str:
        p = self.p
        if self.prim == "filter_gt":
            return f"the items that satisfy its {p.h} is greater than {p.val} among all items"
        if self.prim == "filter_gt_c":
            return f"the items that satisfy its {p.h} is greater than its {p.col} among all items"
        if self.prim == "top_k":
            return f"the top {p.k} items for {p.h} among all items"
        if self.prim == "kth_argmax":
            return f"the item that has the {ordinal(p.k or 0)} largest {p.h} among all items"
        raise ValueError(f"{self.prim} has no scope phrase")

    def scope(self, val: object = None) -> str:
        p = self.p
        if self.prim == "filter_gt":
            return f"the items that satisfy its {p.h} is greater than {_given(val, p.val, self.prim)}"
        if self.prim == "filter_gt_c":
            return f"the items that satisfy its {p.h} is greater than {_given(val, p.col, self.prim)}"
        if self.prim == "top_k":
            return f"the top {p.k} items for {p.h}"
        if self.prim == "kth_argmax":
            return f"the item that has {ordinal(p.k or 0)} largest {p.h}"
        raise ValueError(f"{self.prim} has no scope phrase")

    # ---------------------------------------------------------- value-valued nodes
    def leaf_value(self) -> str:
        p = self.p
        if self.prim == "kth_max":
            return f"the {ordinal(p.k or 0)} largest {p.h} of all items"
        if self.prim == "sum":
            return f"the sum of {p.h} of all items"
        if self.prim == "count":
            return "the number of all items"
        if self.prim == "hop":
            return f"the {p.h} of {p.row}"
        if self.prim == "add_c":
            return f"its {p.col_header} plus {p.val}"
        raise ValueError(f"{self.prim} has no leaf value phrase")

    def value(self, val: object = None, val2: object = None) -> str:
        p = self.p
        if self.prim == "kth_max":
            return f"the {ordinal(p.k or 0)} largest {p.h}"
        if self.prim == "sum":
            return f"the sum of {p.h}"
        if self.prim == "count":
            return "the number"
        if self.prim == "hop":
            return f"the {p.h}"
        if self.prim == "add":
            return f"{val} plus {_given(val2, p.val2, self.prim)}"
        if self.prim == "add_c":
            return f"its {p.col_header} plus {_given(val, p.val, self.prim)}"
        raise ValueError(f"{self.prim} has no value phrase")

    # ------------------------------------------------------------------ questions
    def question(self, val: object = None, val2: object = None) -> str:
        p = self.p
        if self.prim == "filter_gt":
            return f"which items satisfy its {p.h} is greater than {_given(val, p.val, self.prim)}"
        if self.prim == "filter_gt_c":
            return f"which items satisfy its {p.h} is greater than {_given(val, p.col, self.prim)}"
        if self.prim == "top_k":
            return f"which are the top {p.k} items for {p.h}"
        if self.prim == "kth_argmax":
            return f"which item has the {ordinal(p.k or 0)} largest {p.h}"
        if self.prim == "kth_max":
            return f"what is the {ordinal(p.k or 0)} largest {p.h}"
        if self.prim == "sum":
            return f"what is the sum of {p.h}"
        if self.prim == "count":
            return "what is the number"
        if self.prim == "hop":
            return f"what is the {p.h}"
        if self.prim == "add":
            return f"what is {val} plus {_given(val2, p.val2, self.prim)}"
        raise ValueError(f"{self.prim} cannot end a question")


Template = Callable[[list[Phrases]], str]

# Four-node templates (Table 8), keyed by (base graph, edge types of nodes 0..2).
# In the names below A = a node read as a scope, B = a node read as a value.
_FOUR: dict[tuple[int, tuple[str, ...]], Template] = {
    # 0-AAA
    (0, ("view", "view", "view")): lambda f: (
        f"Among {f[1].scope()} {f[1].link} {f[0].leaf_scope()}, "
        f"{f[3].question()} {f[3].link} {f[2].scope()} among them?"),
    # 0-AAB
    (0, ("view", "view", "value")): lambda f: (
        "Among all items, "
        + f[3].question(val=f"{f[2].value()} {f[2].link} {f[1].scope()} {f[1].link} {f[0].leaf_scope()}") + "?"),
    # 0-ABA
    (0, ("view", "value", "view")): lambda f: (
        f"{f[3].link} {f[2].scope(val=f'{f[1].value()} {f[1].link} {f[0].leaf_scope()}')}, {f[3].question()}?"),
    # 0-ABB
    (0, ("view", "value", "value")): lambda f: (
        "Among all items, "
        + f[3].question(val=f[2].value(val=f"{f[1].value()} {f[1].link} {f[0].leaf_scope()}")) + "?"),
    # 0-BAA
    (0, ("value", "view", "view")): lambda f: (
        f"Among {f[1].scope(val=f[0].leaf_value())}, "
        f"{f[3].question()} {f[3].link} {f[2].scope()} among them?"),
    # 0-BAB
    (0, ("value", "view", "value")): lambda f: (
        "Among all items, "
        + f[3].question(val=f"{f[2].value()} {f[2].link} {f[1].scope(val=f[0].leaf_value())}") + "?"),
    # 0-BBA
    (0, ("value", "value", "view")): lambda f: (
        f"{f[3].link} {f[2].scope(val=f[1].value(val=f[0].leaf_value()))}, {f[3].question()}?"),
    # 0-BBB
    (0, ("value", "value", "value")): lambda f: (
        "Among all items, " + f[3].question(val=f[2].value(val=f[1].value(val=f[0].leaf_value()))) + "?"),
    # 1-ABA
    (1, ("view", "value", "view")): lambda f: (
        f"Among {f[0].leaf_scope()}, {f[3].question()} {f[3].link} {f[2].scope(val=f[1].leaf_value())}?"),
    # 1-BBB
    (1, ("value", "value", "value")): lambda f: (
        "Among all items, " + f[3].question(val=f[2].value(val=f[0].leaf_value(), val2=f[1].leaf_value())) + "?"),
    # 2-AAB
    (2, ("view", "view", "value")): lambda f: (
        f"Among {f[1].scope()} {f[1].link} {f[0].leaf_scope()}, {f[3].question(val=f[2].leaf_value())}?"),
    # 2-ABA
    (2, ("view", "value", "view")): lambda f: (
        f"Among {f[2].leaf_scope()}, {f[3].question(val=f'{f[1].value()} {f[1].link} {f[0].leaf_scope()}')}?"),
    # 2-ABB
    (2, ("view", "value", "value")): lambda f: (
        f[3].question(val=f"{f[1].value()} {f[1].link} {f[0].leaf_scope()}", val2=f[2].leaf_value()) + "?"),
    # 2-BBA
    (2, ("value", "value", "view")): lambda f: (
        f"Among {f[2].leaf_scope()}, {f[3].question(val=f[1].value(val=f[0].leaf_value()))}?"),
    # 3-ABA
    (3, ("view", "value", "view")): lambda f: (
        f"Among {f[0].leaf_scope()}, "
        f"{f[3].question()} {f[3].link} {f[2].scope(val=f'{f[1].value()} {f[1].link} them')} among them?"),
    # 4-AAB
    (4, ("view", "view", "value")): lambda f: (
        f"Assuming that group A contains {f[0].leaf_scope()}, "
        f"{f[3].question(val=f'{f[2].value()} {f[2].link} group A')} {f[3].link} {f[1].scope()} among group A?"),
    # 4-ABB
    (4, ("view", "value", "value")): lambda f: (
        f"Among {f[0].leaf_scope()}, "
        f"{f[3].question(val=f'{f[1].value()} {f[1].link} them', val2=f'{f[2].value()} {f[2].link} them')}?"),
    # 5-AAB
    (5, ("view", "view", "value")): lambda f: (
        f"Among {f[1].scope()} {f[1].link} {f[0].leaf_scope()}, "
        f"{f[3].question(val=f'{f[2].value()} {f[2].link} them')}?"),
}


def _one(f: list[Phrases]) -> str:
    if f[0].prim == "hop":
        return f"what is {f[0].leaf_value()}?"
    return f"{f[0].question()} {f[0].link} all items?"


def _two(f: list[Phrases], types: tuple[str, ...]) -> str:
    if types[0] == "view":
        return f"{f[1].question()} {f[1].link} {f[0].scope()}?"
    return f"{f[1].question(val=f[0].leaf_value())}?"


def question(shape: int, nodes: list[NodeParams]) -> str:
    """The question of a sample (1, 2 or 4 nodes), first letter upper-cased."""
    phrases = [Phrases(p) for p in nodes]
    types = tuple(tag_type(out_type(p.prim)) for p in nodes[:-1])
    if len(nodes) == 1:
        q = _one(phrases)
    elif len(nodes) == 2:
        q = _two(phrases, types)
    elif len(nodes) == 4:
        try:
            template = _FOUR[(shape, types)]
        except KeyError:
            raise ValueError(f"no question template for graph {shape} with edge types {types}") from None
        q = template(phrases)
    else:
        raise ValueError(f"no question templates for {len(nodes)}-node graphs")
    return q[0].upper() + q[1:]

