"""The 10 primitives of DEDC (paper Table 6) and the symbolic name mappings (Figure 4).

Index i is the primitive's position, so its opaque name is ``f{i}``. ``inputs`` are the
argument types of Table 6 (the four kinds that flow along DAG edges: view, value, row,
column). ``slots`` refine them as the authors' generator does: a literal header
(``attr_N``) is a ``header`` slot, a ``column`` slot may also take an add_c output, and a
``k`` slot only ever takes a literal number, never a predecessor's value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Primitive:
    index: int
    name: str  # the meaning's canonical name, e.g. filter_gt
    inputs: tuple[str, ...]  # argument types in order (Table 6)
    slots: tuple[str, ...]  # the generator's slot kinds for the same arguments
    output: str
    meaning: str

    @property
    def opaque(self) -> str:
        return f"f{self.index}"


PRIMITIVES: tuple[Primitive, ...] = (
    Primitive(0, "filter_gt", ("view", "column", "value"), ("view", "header", "value"), "view",
              "the subview of view where values under the column are greater than value"),
    Primitive(1, "top_k", ("view", "column", "value"), ("view", "header", "k"), "view",
              "the subview of view where values under the column are in the top k"),
    Primitive(2, "filter_gt_c", ("view", "column", "column"), ("view", "header", "column"), "view",
              "the subview of view where values under column1 are greater than values under column2"),
    Primitive(3, "kth_max", ("view", "column", "value"), ("view", "header", "k"), "value",
              "the kth-max value under the column in the view"),
    Primitive(4, "sum", ("view", "column"), ("view", "header"), "value", "the sum of values under the column in the view"),
    Primitive(5, "count", ("view",), ("view",), "value", "the number of rows in the view"),
    Primitive(6, "kth_argmax", ("view", "column", "value"), ("view", "header", "k"), "row",
              "the row with the kth-max value under the column in the view"),
    Primitive(7, "hop", ("row", "column"), ("row", "header"), "value", "the value of the column in the row"),
    Primitive(8, "add", ("value", "value"), ("value", "value"), "value", "value1 + value2"),
    Primitive(9, "add_c", ("column", "value"), ("header", "value"), "column", "the column in which all values increase by value"),
)

BY_NAME: dict[str, Primitive] = {p.name: p for p in PRIMITIVES}

#: Primitives whose two arguments may be swapped (paper A.4: currently only add).
COMMUTATIVE: frozenset[str] = frozenset({"add"})

#: Display name per meaning under each naming setting (paper section 4.2, Figure 4).
NAME_MAPPINGS: dict[str, dict[str, str]] = {
    "opaque": {p.name: p.opaque for p in PRIMITIVES},
    "anomalous": {
        "filter_gt": "filter_lt", "top_k": "bottom_k", "filter_gt_c": "filter_lt_c", "kth_max": "kth_min",
        "sum": "std", "count": "unique", "kth_argmax": "kth_argmin", "hop": "join", "add": "sub",
        "add_c": "sub_c",
    },
    "cross": {
        "filter_gt": "add_c", "top_k": "add", "filter_gt_c": "hop", "kth_max": "kth_argmax", "sum": "count",
        "count": "sum", "kth_argmax": "kth_max", "hop": "filter_gt_c", "add": "top_k", "add_c": "filter_gt",
    },
}


def display_names(names: str) -> dict[str, str]:
    """Meaning -> the symbol the prompt uses for it under a naming setting."""
    return NAME_MAPPINGS[names]


def meanings_by_symbol(names: str) -> dict[str, str]:
    """Symbol -> meaning: how to read a model's expression back under a naming setting."""
    return {symbol: meaning for meaning, symbol in NAME_MAPPINGS[names].items()}
