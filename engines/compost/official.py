"""The official CompoST files (``compositionality_subgraph_{easy,medium,max}.json``) as items.

Item ids are ``<level>-o<id>-<depth>x<breadth>-g<gid>`` (level easy, medium or hard, as
the released results files name it; base ids repeat across the four base shapes), so
the results CSVs (``id``, ``base_depth``, ``base_breadth``, ``subid`` columns) replay
onto them. Gold answers are not released, so without an endpoint these items are
scored structurally.

Sub-pattern edges come from the file's ``powersetgraphs``: one networkx node-link graph
per base shape whose node ``gid`` holds that sub-pattern as a graph of placeholders
(its links are the strict sub-pattern relation). A placeholder edge ``?p1qb<j>d<k>``
is branch ``j``, counted from the outer end, so its level from the centre is
``max_depth + 1 - k``; edge ids are ``branch.level`` as for generated items. An item's
edges are those of node ``gid`` in its base shape's graph.

``task=self-contained`` gives each val/test item shots from the same base's train items
by ``patterns.self_contained_cover``, the rule generated items use too.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from engines.compost.generate import edge_id
from engines.compost.parse import QueryError, parse_query
from engines.compost.patterns import PatternNode, self_contained_cover
from engines.compost.settings import CompostSettings
from engines.core import DataError, Item

LEVELS = {"easy": "easy", "medium": "medium", "max": "hard", "hard": "hard"}
_NAME = re.compile(r"compositionality_subgraph_(easy|medium|max|hard)")
_EDGE_LABEL = re.compile(r"\?p\d+qb(\d+)d(\d+)")

Shape = tuple[int, int]  # (depth, breadth) of a base pattern


def level_of(path: Path) -> str:
    m = _NAME.search(path.name)
    if not m:
        raise DataError(f"{path}: expected a compositionality_subgraph_<easy|medium|max>.json file")
    return LEVELS[m.group(1)]


def edge_of(label: str, max_depth: int) -> str:
    """The ``branch.level`` id of a placeholder edge label such as ``?p1qb2d3``."""
    m = _EDGE_LABEL.fullmatch(label)
    if not m:
        raise DataError(f"unexpected edge label {label!r} in a powersetgraph")
    return edge_id((int(m.group(1)), max_depth + 1 - int(m.group(2))))


def lattices(data: dict[str, Any]) -> dict[Shape, dict[int, PatternNode]]:
    """Every base shape's sub-patterns by gid, read from the file's ``powersetgraphs``."""
    out: dict[Shape, dict[int, PatternNode]] = {}
    for shape in data.get("powersetgraphs", []):
        depth = int(shape["max_depth"])
        nodes: dict[int, PatternNode] = {}
        for node in json.loads(shape["powersetgraph"])["nodes"]:
            edges = frozenset(edge_of(link["label"], depth) for link in json.loads(node["graphjson"])["links"])
            if len(edges) != node["num_edges"]:
                raise DataError(f"powersetgraph {depth}x{shape['max_breadth']} gid {node['gid']}: "
                                f"{len(edges)} distinct edges, num_edges {node['num_edges']}")
            nodes[int(node["gid"])] = PatternNode(int(node["gid"]), edges, int(node["depth"]), int(node["breadth"]))
        out[(depth, int(shape["max_breadth"]))] = nodes
    return out


def node_of(r: dict[str, Any], shapes: dict[Shape, dict[int, PatternNode]]) -> PatternNode:
    """The record's node in its base shape's powersetgraph, checked against the record's own counts."""
    node = shapes.get((r["base_depth"], r["base_breadth"]), {}).get(r["gid"])
    if node is None:
        raise DataError(f"item {r['id']}/{r['gid']}: no gid {r['gid']} in the {r['base_depth']}x{r['base_breadth']} "
                        f"powersetgraph")
    if (len(node.edges), node.depth, node.breadth) != (r["num_edges"], r["depth"], r["breadth"]):
        raise DataError(f"item {r['id']}/{r['gid']}: num_edges/depth/breadth {r['num_edges']}/{r['depth']}/"
                        f"{r['breadth']} but the powersetgraph has {len(node.edges)}/{node.depth}/{node.breadth}")
    return node


def load_official(settings: CompostSettings) -> list[Item]:
    path = Path(settings.dataset).expanduser()
    level = level_of(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: {exc}") from None
    records = [(split, r) for split in ("train", "val", "test") for r in data.get(split, [])]
    if not records:
        raise DataError(f"{path}: no train/val/test items")
    try:
        shapes = lattices(data)
        entries = [(split, r, node_of(r, shapes), parse_query(r["query"]).triples) for split, r in records]
    except (QueryError, KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: {exc}") from None
    train: dict[str, list[tuple[dict[str, Any], PatternNode]]] = defaultdict(list)
    for split, r, node, _ in entries:
        if split == "train":
            train[_base(r)].append((r, node))
    items = []
    for split, r, node, triples in entries:
        if settings.split != "all" and split != settings.split:
            continue
        if settings.task == "self-contained" and split == "train":
            continue
        base = _base(r)
        meta: dict[str, Any] = {k: r.get(k) for k in ("gid", "depth", "breadth", "base_depth", "base_breadth",
                                                     "num_edges", "num_edges_full", "num_nodes")}
        meta.update(split=split, base=base, level=level, task=settings.task, source="official",
                    full=r["gid"] == r.get("subgraphs"), edges=sorted(node.edges))
        shots = _shots(r, node, train[base]) if settings.task == "self-contained" else []
        items.append(Item(id=f"{level}-{base}-g{r['gid']}", engine="compost",
                          inputs={"question": r["question"], "shots": shots},
                          gold={"query": r["query"], "triples": [list(t) for t in triples],
                                "result": r.get("result")}, meta=meta))
    return items


def _base(r: dict[str, Any]) -> str:
    return f"o{r['id']}-{r['base_depth']}x{r['base_breadth']}"


def _shots(r: dict[str, Any], node: PatternNode, train: list[tuple[dict[str, Any], PatternNode]]) -> list[dict[str, str]]:
    """Self-contained shots for ``r`` from its base's train items (never one with the same question or query)."""
    pool = {n.gid: (t, n) for t, n in train if t["question"] != r["question"] and t["query"] != r["query"]}
    picked = self_contained_cover(node, [n for _, n in pool.values()])
    return [{"question": pool[n.gid][0]["question"], "query": pool[n.gid][0]["query"]} for n in picked]
