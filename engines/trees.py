"""Tree views of any shape as bounded data: what an engine hands the inspector for a parse tree.

A parse tree can be as deep as its reply is long (SPARQL's triples block nests each next
triple a level down), so a view is built with a stack, never recursion, and cut to a depth
and a node count every reader (JSON, the renderers) walks quickly.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")

TREE_DEPTH = 40  # levels of a tree view: deeper nodes are summed up in one "…" leaf
TREE_NODES = 2_000  # nodes of a tree view, likewise


def tree_data(root: T, label: Callable[[T], str], children: Callable[[T], Sequence[T]],
              max_depth: int = TREE_DEPTH, max_nodes: int = TREE_NODES) -> dict[str, Any]:
    """A tree view's data (``{"label", "children"}``) built without recursion and cut to ``max_depth``
    levels and ``max_nodes`` nodes, so that a parse tree of any shape makes a view any reader can walk."""
    top: dict[str, Any] = {"label": label(root), "children": []}
    stack = [(root, top, 1)]
    count = 1
    while stack:
        node, out, depth = stack.pop()
        kids = children(node)
        if kids and (depth >= max_depth or count >= max_nodes):
            out["children"].append({"label": f"… {len(kids):,} more node(s) below", "children": []})
            continue
        for kid in kids:
            entry: dict[str, Any] = {"label": label(kid), "children": []}
            out["children"].append(entry)
            count += 1
            stack.append((kid, entry, depth + 1))
    return top
