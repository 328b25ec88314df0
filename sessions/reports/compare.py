"""Two runs of one engine over the same items, side by side.

Items are matched by id (a fork, a rerun with another model or other settings keep the
ids); items only one run has are not compared but counted (``unmatched``), so a run of 323
items against one of 300 says so. An item without a result is ``pending``. Tags are each
run's final tags (``sessions.study.labels``): a person's review counts here as in the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from engines import get_engine
from engines.core import UNJUDGED as CORE_UNJUDGED
from sessions.errors import InputError
from sessions.study.labels import RunLabels, store_labels
from sessions.store.runs import RunStore

UNJUDGED = ("pending", *CORE_UNJUDGED)


@dataclass
class ItemComparison:
    id: str
    index_a: int
    index_b: int
    status_a: str
    status_b: str
    scores_a: dict[str, float]
    scores_b: dict[str, float]
    tags_a: list[str]  # tag codes
    tags_b: list[str]
    main_score: str  # the engine's headline per-item score (engines.core.Engine.main_score)

    @property
    def different(self) -> bool:
        """The verdicts differ: another status, or another main score."""
        key = self.main_score
        return self.status_a != self.status_b or self.scores_a.get(key) != self.scores_b.get(key)


def _side(store: RunStore) -> tuple[dict[str, int], dict[int, dict[str, Any]], RunLabels]:
    results = store.results()
    return ({item_id: index for index, item_id in enumerate(store.item_ids())}, results,
            store_labels(store, {i: {"tags": [t["code"] for t in r.get("tags", [])]} for i, r in results.items()}))


def _final_codes(record: dict[str, Any], item_id: str, labels: RunLabels) -> list[str]:
    auto = [t["code"] for t in record.get("tags", [])]
    final = labels.final(item_id, auto)
    return [c for c in auto if c in final] + sorted(final - set(auto))


def compare_runs(a: RunStore, b: RunStore) -> list[ItemComparison]:
    """One row per item id both runs have, in run ``a``'s order."""
    if a.meta["engine"] != b.meta["engine"]:
        raise InputError(
            f"run {a.label} is a {a.meta['engine']} run and {b.label} a {b.meta['engine']} run; cannot compare them"
        )
    main_score = get_engine(a.meta["engine"]).main_score
    ids_a, results_a, labels_a = _side(a)
    ids_b, results_b, labels_b = _side(b)
    rows = []
    for item_id, index_a in ids_a.items():
        index_b = ids_b.get(item_id)
        if index_b is None:
            continue
        record_a = results_a.get(index_a) or {}
        record_b = results_b.get(index_b) or {}
        rows.append(
            ItemComparison(
                id=item_id,
                index_a=index_a,
                index_b=index_b,
                status_a=record_a.get("status", "pending"),
                status_b=record_b.get("status", "pending"),
                scores_a=dict(record_a.get("scores", {})),
                scores_b=dict(record_b.get("scores", {})),
                tags_a=_final_codes(record_a, item_id, labels_a),
                tags_b=_final_codes(record_b, item_id, labels_b),
                main_score=main_score,
            )
        )
    if not rows:
        raise InputError(f"runs {a.label} and {b.label} share no items")
    return rows


def unmatched(a: RunStore, b: RunStore) -> dict[str, int]:
    """How many items only one of the two runs has (by id)."""
    ids_a, ids_b = set(a.item_ids()), set(b.item_ids())
    return {"only_in_a": len(ids_a - ids_b), "only_in_b": len(ids_b - ids_a)}


def comparison_summary(rows: Iterable[ItemComparison]) -> dict[str, int]:
    """Counts over the matched items.

    ``both_correct``, ``only_a``, ``only_b`` and ``neither`` partition the items judged
    in both runs; ``unjudged`` counts items pending or in infrastructure ``error`` in
    either run; ``different`` counts items whose verdicts differ (any status).
    """
    counts = dict.fromkeys(("items", "both_correct", "only_a", "only_b", "neither", "unjudged", "different"), 0)
    for row in rows:
        counts["items"] += 1
        counts["different"] += row.different
        if row.status_a in UNJUDGED or row.status_b in UNJUDGED:
            counts["unjudged"] += 1
            continue
        a_ok, b_ok = row.status_a == "correct", row.status_b == "correct"
        key = "both_correct" if a_ok and b_ok else "only_a" if a_ok else "only_b" if b_ok else "neither"
        counts[key] += 1
    return counts
