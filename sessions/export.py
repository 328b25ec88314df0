"""Export a run as JSON lines or CSV: one record per item."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterator

from sessions.annotations import ItemMarks
from sessions.labels import RunLabels, store_labels
from sessions.results_log import finish_reasons
from sessions.store import RunStore


def export_records(store: RunStore, with_annotations: bool = False) -> Iterator[dict[str, Any]]:
    """One record per item in run order; items never run appear with status ``pending``.

    A JSON-lines export is also a replay file (``-m replay:FILE``): ``id``, ``outputs`` and
    the backend's ``finish_reasons`` per step. With annotations, each record also has every
    annotator's labels (``labels`` by name, empty for items they did not review), the
    settled labels, and the final tags and ``reviewed`` of ``sessions.labels``.
    """
    results = store.results()
    log = store.annotations()
    marks = log.marks() if with_annotations else {}
    labels = store_labels(store, {i: {"tags": [t["code"] for t in r.get("tags", [])]} for i, r in results.items()})
    for index, item in enumerate(store.brief_items()):
        record = results.get(index, {})
        tags = [t["code"] for t in record.get("tags", [])]
        row: dict[str, Any] = {
            "id": item.id,
            "status": record.get("status", "pending"),
            "scores": record.get("scores", {}),
            "tags": tags,
            "outputs": record.get("outputs", []),
            "finish_reasons": finish_reasons(record.get("steps", [])),
            "meta": item.meta,
        }
        if record.get("error"):
            row["error"] = record["error"]
        if with_annotations:
            row.update(_annotation_fields(item.id, tags, marks.get(item.id) or ItemMarks(), labels))
        yield row


def _annotation_fields(item_id: str, tags: list[str], mark: ItemMarks, labels: RunLabels) -> dict[str, Any]:
    item = labels.items.get(item_id)
    by = item.by_annotator if item else {}
    return {
        "manual_tags_added": sorted(mark.added),
        "manual_tags_removed": sorted(mark.removed),
        "labels": {name: sorted(by[name]) if name in by else None for name in labels.annotators},
        "settled_tags": sorted(item.settled) if item and item.settled is not None else None,
        "final_tags": sorted(labels.final(item_id, tags)),
        "final_source": item.source if item else "automatic",
        "notes": mark.notes,
        "reviewed": bool(item and item.reviewed),
    }


def to_jsonl(records: Iterator[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def to_csv(records: Iterator[dict[str, Any]]) -> str:
    """Flat columns: scores as ``score_<key>``, lists joined with ``;``, one ``labels_<annotator>`` column
    each (empty: not reviewed by them; ``-``: reviewed, no label), outputs as JSON."""
    rows = list(records)
    score_keys = sorted({k for r in rows for k in r["scores"]})
    list_keys = [k for k in ("tags", "manual_tags_added", "manual_tags_removed", "final_tags", "notes") if rows and k in rows[0]]
    annotators = list(rows[0].get("labels", {})) if rows else []
    plain_keys = [k for k in ("settled_tags", "final_source", "reviewed", "error") if any(k in r for r in rows)]
    header = ["id", "status", *(f"score_{k}" for k in score_keys), *list_keys, *(f"labels_{a}" for a in annotators)]
    header += plain_keys + ["outputs"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        line = [r["id"], r["status"], *(r["scores"].get(k, "") for k in score_keys)]
        line += [";".join(r[k]) for k in list_keys]
        line += ["" if r["labels"][a] is None else ";".join(r["labels"][a]) or "-" for a in annotators]
        line += [_cell(r.get(k, "")) for k in plain_keys]
        line.append(json.dumps(r["outputs"], ensure_ascii=False))
        writer.writerow(line)
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    """A list as ``a;b``, None (no labels at all) as empty."""
    if value is None:
        return ""
    return ";".join(value) if isinstance(value, list) else value
