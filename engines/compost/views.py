"""Inspector panes of one item: question, queries, aligned triples, result sets, sub-patterns."""

from __future__ import annotations

from typing import Any, Sequence

from lark import ParseTree, Token

from engines.compost.compare import align
from engines.compost.parse import Parsed
from engines.sparql.pattern import Triple
from engines.compost.patterns import sub_patterns
from engines.compost.tags import short, show
from engines.contract import Metric
from engines.core import Item, View
from engines.trees import tree_data

MAX_ROWS = 200


def tree_view(node: ParseTree | Token) -> dict[str, Any]:
    """The grammar's parse tree as the inspector's tree data: rules as labels, tokens as leaves (bounded:
    a long triples block is a deep right-recursive tree)."""
    return tree_data(node, lambda n: f"{n.type} {n}" if isinstance(n, Token) else str(n.data),
                     lambda n: [] if isinstance(n, Token) else n.children)


def alignment_rows(parsed: Parsed, gold: list[Triple]) -> list[list[str]]:
    alignment = align(parsed.triples, gold, parsed.projection)
    rows = []
    for pair in alignment.pairs:
        if pair.gold is None or pair.output is None:
            how = "missing" if pair.output is None else "extra"
        elif pair.cost == 0:
            how = "="
        elif pair.paraphrase:
            how = "inverse-property paraphrase"
        elif pair.inverted:
            how = "inverted"
        else:
            how = "differs"
        rows.append([show(pair.gold) if pair.gold else "", show(pair.output) if pair.output else "", how])
    return rows


def build_views(item: Item, parsed: Parsed | None, execution: dict[str, Any] | None,
                outputs: Sequence[str], diagnosis: bool = False) -> list[View]:
    """``diagnosis``: ``parsed`` is the lenient reading of a reply the strict reading rejected."""
    gold = [tuple(t) for t in item.gold["triples"]]
    reading = " (as it would have been read; unparseable for the authors' scorer)" if diagnosis else ""
    views = [View("text", "Question", item.inputs["question"]),
             View("code", "Output query", outputs[0] if outputs else ""),
             View("code", "Gold query", item.gold["query"])]
    if parsed is not None:
        views.append(View("tree", "Parsed query" + reading, tree_view(parsed.tree)))
        views.append(View("table", "Triples (gold | output)" + reading,
                          {"columns": ["gold", "output", "alignment"], "rows": alignment_rows(parsed, gold)}))
    if execution is not None:
        views.append(result_view(execution))
    views.append(lattice_view(item))
    return views


def result_view(execution: dict[str, Any]) -> View:
    gold = {v for row in execution["gold"].get("rows", []) for v in row if v}
    side = execution["output"]
    if "error" in side:
        return View("key-value", "Result sets", [["gold rows", str(len(gold))], ["output", side["error"]],
                                                  ["backend", execution.get("backend", "")]])
    out = {v for row in side.get("rows", []) for v in row if v}
    rows = [[short(v), "✓" if v in gold else "", "✓" if v in out else ""]
            for v in sorted(gold | out, key=lambda v: (v not in gold & out, v))[:MAX_ROWS]]
    return View("table", f"Result sets ({len(gold & out)} shared, {len(gold - out)} missing, "
                         f"{len(out - gold)} extra; {execution.get('backend', '')})",
                {"columns": ["value", "gold", "output"], "rows": rows})


def lattice_view(item: Item) -> View:
    """The item's sub-patterns (the part of Figure 5's lattice below it), from the item's own data."""
    meta = item.meta
    if meta.get("edges") is None:
        return View("key-value", "Sub-patterns", [["base", str(meta.get("base", "?"))],
                                                  ["gid", str(meta.get("gid", "?"))],
                                                  ["edges", str(meta.get("num_edges", "?"))]])
    mine = frozenset(meta["edges"])
    subs = [sp for sp in sub_patterns(int(meta["base_depth"]), int(meta["base_breadth"]))
            if frozenset(f"{b}.{lvl}" for b, lvl in sp.edges) <= mine]
    by_size: dict[int, list[str]] = {}
    for sp in subs:
        by_size.setdefault(len(sp.edges), []).append(" ".join(sorted(f"{b}.{lvl}" for b, lvl in sp.edges)))
    children = [{"label": f"{size} edge(s)", "children": [{"label": e, "children": []} for e in sorted(labels)]}
                for size, labels in sorted(by_size.items(), reverse=True)]
    return View("tree", "Sub-patterns", {"label": f"base {meta.get('base')} gid {meta.get('gid')} "
                                                  f"({meta.get('split')}): edges {' '.join(sorted(mine))}",
                                         "children": children})


METRICS: tuple[Metric, ...] = (
    Metric("macro_f1", "macro F1", "score", True),
    Metric("compositionality_f1", "compositionality F1 (Table 1 rule)", "score", True),
    Metric("compositionality_f1_def", "compositionality F1 (prose definition)", "score"),
    Metric("macro_f1_{}", "macro F1 {}", "score"),
    Metric("compositionality_f1_def_{}", "compositionality F1 (prose definition) {}", "score"),
    Metric("compositionality_f1_{}", "compositionality F1 (authors' rule) {}", "score"),
    Metric("items", "items", "count"),
    Metric("n_{}", "items {}", "count"),
)
