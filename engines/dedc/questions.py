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


def _given(val: object, default: object, what: str) -> object:
    """``val`` when a template passes one, else the node's own literal (which must exist)."""
    if val is not None:
        return val
    if default is None:
        raise ValueError(f"{what}: the argument comes from another node, the template must pass it")
    return default


@dataclass(frozen=True)
class Wording:
    """One primitive's phrases as format strings over a node's fields (``_Fields``); None where
    the primitive has no such phrase. The strings are the released generator's words."""

    leaf_scope: str | None = None
    scope: str | None = None
    leaf_value: str | None = None
    value: str | None = None
    question: str | None = None


WORDINGS: dict[str, Wording] = {
    "filter_gt": Wording(leaf_scope="the items that satisfy its {h} is greater than {p_val} among all items",
                         scope="the items that satisfy its {h} is greater than {val}",
                         question="which items satisfy its {h} is greater than {val}"),
    "filter_gt_c": Wording(leaf_scope="the items that satisfy its {h} is greater than its {p_col} among all items",
                           scope="the items that satisfy its {h} is greater than {col}",
                           question="which items satisfy its {h} is greater than {col}"),
    "top_k": Wording(leaf_scope="the top {k} items for {h} among all items", scope="the top {k} items for {h}",
                     question="which are the top {k} items for {h}"),
    "kth_argmax": Wording(leaf_scope="the item that has the {kth} largest {h} among all items",
                          scope="the item that has {kth} largest {h}", question="which item has the {kth} largest {h}"),
    "kth_max": Wording(leaf_value="the {kth} largest {h} of all items", value="the {kth} largest {h}",
                       question="what is the {kth} largest {h}"),
    "sum": Wording(leaf_value="the sum of {h} of all items", value="the sum of {h}", question="what is the sum of {h}"),
    "count": Wording(leaf_value="the number of all items", value="the number", question="what is the number"),
    "hop": Wording(leaf_value="the {h} of {row}", value="the {h}", question="what is the {h}"),
    "add": Wording(value="{arg} plus {val2}", question="what is {arg} plus {val2}"),
    "add_c": Wording(leaf_value="its {col_header} plus {p_val}", value="its {col_header} plus {val}"),
}


class _Fields:
    """A node's fields for its wording (``str.format_map`` asks for the names the wording uses):
    ``val``, ``col`` and ``val2`` are what a template passes, else the node's own literal."""

    __slots__ = ("p", "val", "val2")

    def __init__(self, p: NodeParams, val: object, val2: object):
        self.p, self.val, self.val2 = p, val, val2

    def __getitem__(self, key: str) -> object:
        return _FIELD_GETTERS[key](self)


def _literal(field: str, given: str) -> Callable[[_Fields], object]:
    """The getter of ``given`` (what a template passes), else of the node's own literal ``field``."""
    return lambda f: _given(getattr(f, given), getattr(f.p, field), f.p.prim)


# Every name a wording may use, resolved only when it does: ``_given`` refuses a missing literal.
_FIELD_GETTERS: dict[str, Callable[[_Fields], object]] = {
    "h": lambda f: f.p.h, "k": lambda f: f.p.k, "kth": lambda f: ordinal(f.p.k or 0), "row": lambda f: f.p.row,
    "col_header": lambda f: f.p.col_header, "p_val": lambda f: f.p.val, "p_col": lambda f: f.p.col,
    "arg": lambda f: f.val, "val": _literal("val", "val"), "col": _literal("col", "val"), "val2": _literal("val2", "val2"),
}
_LINKS = {"filter_gt": "among", "top_k": "among", "filter_gt_c": "among", "kth_argmax": "among",
          "kth_max": "of", "sum": "of", "count": "of", "hop": "of"}
_NO_WORDING = Wording()


class Phrases:
    """The natural-language pieces of one node."""

    __slots__ = ("p", "prim", "wording", "link")

    def __init__(self, p: NodeParams):
        self.p = p
        self.prim = p.prim
        self.wording = WORDINGS.get(p.prim, _NO_WORDING)
        self.link = _LINKS.get(p.prim, "")

    def _say(self, template: str | None, missing: str, val: object = None, val2: object = None) -> str:
        if template is None:
            raise ValueError(f"{self.prim} {missing}")
        return template.format_map(_Fields(self.p, val, val2))

    # ------------------------------------------------------------ set-valued nodes
    def leaf_scope(self) -> str:
        return self._say(self.wording.leaf_scope, "has no scope phrase")

    def scope(self, val: object = None) -> str:
        return self._say(self.wording.scope, "has no scope phrase", val)

    # ---------------------------------------------------------- value-valued nodes
    def leaf_value(self) -> str:
        return self._say(self.wording.leaf_value, "has no leaf value phrase")

    def value(self, val: object = None, val2: object = None) -> str:
        return self._say(self.wording.value, "has no value phrase", val, val2)

    # ------------------------------------------------------------------ questions
    def question(self, val: object = None, val2: object = None) -> str:
        return self._say(self.wording.question, "cannot end a question", val, val2)


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

