"""The official CompoST files (``compositionality_subgraph_{easy,medium,max}.json``) as items.

Item ids are ``<level>-o<id>-<depth>x<breadth>-g<gid>`` (level easy, medium or hard, as
the released results files name it; base ids repeat across the four base shapes), so
the results CSVs (``id``, ``base_depth``, ``base_breadth``, ``subid`` columns) replay
onto them. ``task=self-contained`` gives each val/test item an edge-set cover from the same
base's train items as shots, as the released ``*_10_fixed_*`` files do. Gold answers are
not released, so without an endpoint these items are scored
structurally. The sub-pattern edges are not in the files either; they are recovered
per base instance by matching each sub-pattern's relation triples to the full
pattern's (same property, same constant entities where both have one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engines.compost.generate import edge_cover
from engines.compost.parse import QueryError, parse_query
from engines.compost.settings import CompostSettings
from engines.core import DataError, Item

LEVELS = {"easy": "easy", "medium": "medium", "max": "hard", "hard": "hard"}
_NAME = re.compile(r"compositionality_subgraph_(easy|medium|max|hard)")


def level_of(path: Path) -> str:
    m = _NAME.search(path.name)
    if not m:
        raise DataError(f"{path}: expected a compositionality_subgraph_<easy|medium|max>.json file")
    return LEVELS[m.group(1)]


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
    parsed: dict[tuple, list[tuple[str, str, str]]] = {}
    for _, r in records:
        try:
            parsed[_key(r)] = parse_query(r["query"]).triples
        except (QueryError, KeyError) as exc:
            raise DataError(f"{path}: item {r.get('id')}/{r.get('gid')}: {exc}") from None
    edges = _edges(records, parsed)
    items = []
    for split, r in records:
        if settings.split != "all" and split != settings.split:
            continue
        if settings.task == "self-contained" and split == "train":
            continue
        key = _key(r)
        base = f"o{r['id']}-{r['base_depth']}x{r['base_breadth']}"
        meta: dict[str, Any] = {k: r.get(k) for k in ("gid", "depth", "breadth", "base_depth", "base_breadth",
                                                     "num_edges", "num_edges_full", "num_nodes")}
        meta.update(split=split, base=base, level=level, task=settings.task, source="official",
                    full=r.get("gid") == r.get("subgraphs"), edges=edges.get(key))
        items.append(Item(id=f"{level}-{base}-g{r['gid']}", engine="compost",
                          inputs={"question": r["question"], "shots": _shots(r, records, edges, settings)},
                          gold={"query": r["query"], "triples": [list(t) for t in parsed[key]],
                                "result": r.get("result")}, meta=meta))
    return items


def _shots(r: dict, records: list[tuple[str, dict]], edges: dict, settings: CompostSettings) -> list[dict]:
    """Self-contained task: an edge-set cover of the target from the same base's train items."""
    mine = edges.get(_key(r))
    if settings.task != "self-contained" or not mine:
        return []
    train = [rec for split, rec in records if split == "train" and _key(rec)[:3] == _key(r)[:3] and edges.get(_key(rec))]
    picked = edge_cover(frozenset(mine), [(frozenset(edges[_key(rec)]), i) for i, rec in enumerate(train)])
    return [{"question": train[i]["question"], "query": train[i]["query"]} for i in picked]


def _key(r: dict) -> tuple:
    return (r["id"], r["base_depth"], r["base_breadth"], r["gid"])


def _signature(t: tuple[str, str, str]) -> tuple[str, str, str]:
    return (t[0] if not t[0].startswith("?") else "?", t[1], t[2] if not t[2].startswith("?") else "?")


def _edges(records: list[tuple[str, dict]], parsed: dict) -> dict[tuple, list[str] | None]:
    """Edge ids of each sub-pattern: indices of the full pattern's relation triples it matches."""
    full = {_key(r)[:3]: _key(r) for _, r in records if r.get("gid") == r.get("subgraphs")}
    out: dict[tuple, list[str] | None] = {}
    for _, r in records:
        base = full.get(_key(r)[:3])
        if base is None:
            out[_key(r)] = None
            continue
        full_rel = [t for t in parsed[base] if not t[1].endswith("#type>")]
        mine = [t for t in parsed[_key(r)] if not t[1].endswith("#type>")]
        chosen: list[str] = []
        for t in mine:
            p = t[1]
            cands = [k for k, f in enumerate(full_rel) if f[1] == p and str(k) not in chosen
                     and all(a == "?" or b == "?" or a == b for a, b in zip(_signature(t), _signature(f)))]
            if not cands:
                chosen = []
                break
            chosen.append(str(cands[0]))
        out[_key(r)] = chosen or None
    return out
