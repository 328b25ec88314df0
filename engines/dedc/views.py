"""The inspector's DEDC panes, as data (engines.core.View).

For a parsed answer: the expressions of output and gold as tables (variable, primitive
symbol, meaning, arguments), the substituted single expressions side by side (diff), both
DAGs as trees rooted at ``result`` (children are the antecedent nodes, literal arguments
are leaves) and a key-value summary (status, matched variant, steps, format notes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.contract import Metric
from engines.core import Status, View
from engines.dedc.graph import Arg, Graph, Ref, Undefined, describe_arg
from engines.dedc.parse import Parsed
from engines.parsing import ParseFailure

if TYPE_CHECKING:
    from engines.dedc.score import Check

MAX_TREE_NODES = 200


def expression_table(title: str, graph: Graph) -> View:
    rows = []
    for node in graph.nodes:
        args = ", ".join(
            f"{a.name} (undefined)" if isinstance(a, Undefined) else describe_arg(graph, a) for a in node.args)
        rows.append([node.var or "(nested)", node.symbol, node.meaning or "(unknown)", args])
    if graph.result is not None:
        rows.append(["result", "", "", describe_arg(graph, graph.result)])
    return View("table", title, {"columns": ["variable", "primitive", "meaning", "arguments"], "rows": rows})


def dag_tree(title: str, graph: Graph) -> View:
    budget = [MAX_TREE_NODES]

    def leaf(label: str) -> dict[str, Any]:
        return {"label": label, "children": []}

    def arg_tree(arg: Arg, depth: int) -> dict[str, Any]:
        if isinstance(arg, Ref):
            return node_tree(arg.node, depth)
        if isinstance(arg, Undefined):
            return leaf(f"{arg.name} (undefined: {arg.why})")
        return leaf(arg.text)

    def node_tree(i: int, depth: int) -> dict[str, Any]:
        budget[0] -= 1
        node = graph.nodes[i]
        label = f"{node.var + ' := ' if node.var else ''}{node.symbol}" + (
            f" [{node.meaning}]" if node.meaning else " [unknown]")
        if budget[0] <= 0 or depth > 12:
            return {"label": label + " ...", "children": []}
        return {"label": label, "children": [arg_tree(a, depth + 1) for a in node.args]}

    if graph.result is None:
        root = {"label": "result (not assigned)", "children": [node_tree(i, 1) for i in _roots(graph)]}
    else:
        root = {"label": "result", "children": [arg_tree(graph.result, 1)]}
    return View("tree", title, root)


def _roots(graph: Graph) -> list[int]:
    cons = graph.consumers()
    return [n.index for n in graph.nodes if not cons[n.index]][:8]


def verdict_views(status: Status, parsed: Parsed, graph: Graph, gold_graph: Graph, result: Check,
                  names: str, authors: str = "") -> list[View]:
    """``authors``: what the authors' checker read (the strict verdict's), shown beside the statement reading."""
    summary = [
        ["status", status],
        *([["authors' checker reads", authors]] if authors else []),
        ["matched variant", result.matched or "-"],
        ["output steps", str(len(graph.nodes))],
        ["gold steps", str(len(gold_graph.nodes))],
        ["naming", names],
        ["format", "clean" if parsed.clean else "removed: " + " | ".join(parsed.removed)],
    ]
    if result.note:
        summary.append(["note", result.note])
    return [
        View("key-value", "Summary", summary),
        View("diff", "Substituted expression (statement by statement)", {
            "left": result.output_expr or "(no result)", "right": result.gold_expr,
            "left_title": "output", "right_title": "gold" + (" (matched variant)" if result.matched else "")}),
        expression_table("Output expressions", graph),
        expression_table("Gold expressions", gold_graph),
        dag_tree("Output DAG", graph),
        dag_tree("Gold DAG", gold_graph),
    ]


def unparseable_views(text: str, failure: ParseFailure, gold_graph: Graph, gold_expr: str) -> list[View]:
    return [
        View("key-value", "Summary", [["status", "unparseable"], ["line", str(failure.line)],
                                      ["column", str(failure.column)], ["error", failure.message]]),
        View("code", "Parse error", failure.context),
        View("code", "Output", text),
        View("diff", "Substituted expression", {"left": "(unparseable)", "right": gold_expr,
                                                "left_title": "output", "right_title": "gold"}),
        expression_table("Gold expressions", gold_graph),
        dag_tree("Gold DAG", gold_graph),
    ]


METRICS: tuple[Metric, ...] = (
    Metric("P_dc", "P_dc", "percent", True),
    Metric("P_c", "P_c", "percent", True),
    Metric("accuracy", "accuracy", "fraction", True),
    Metric("D_c", "D_c", "percent"),
    Metric("D_d", "D_d", "percent"),
    Metric("Delta_c", "Δ_c", "percent"),
    Metric("Delta_d", "Δ_d", "percent"),
)
