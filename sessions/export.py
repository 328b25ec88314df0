"""Export a run as JSON lines or CSV: one record per item."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterator

from sessions.results_log import finish_reasons
from sessions.store import RunStore


def export_records(store: RunStore, with_annotations: bool = False) -> Iterator[dict[str, Any]]:
    """One record per item in run order; items never run appear with status ``pending``.

    A JSON-lines export is also a replay file (``-m replay:FILE``): ``id``, ``outputs`` and
    the backend's ``finish_reasons`` per step.
    """
    results = store.results()
    manual = store.annotations().effective() if with_annotations else {}
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
            state = manual.get(item.id, {"added": {}, "removed": set(), "notes": [], "reviewed": False})
            row["manual_tags_added"] = sorted(state["added"])
            row["manual_tags_removed"] = sorted(state["removed"])
            row["final_tags"] = sorted((set(tags) - state["removed"]) | set(state["added"]))
            row["notes"] = state["notes"]
            row["reviewed"] = state["reviewed"]
        yield row


def to_jsonl(records: Iterator[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def to_csv(records: Iterator[dict[str, Any]]) -> str:
    """Flat columns: scores as ``score_<key>``, lists joined with ``;``, outputs as JSON."""
    rows = list(records)
    score_keys = sorted({k for r in rows for k in r["scores"]})
    list_keys = [k for k in ("tags", "manual_tags_added", "manual_tags_removed", "final_tags", "notes") if rows and k in rows[0]]
    header = ["id", "status", *(f"score_{k}" for k in score_keys), *list_keys]
    header += [k for k in ("reviewed", "error") if any(k in r for r in rows)] + ["outputs"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        line = [r["id"], r["status"], *(r["scores"].get(k, "") for k in score_keys)]
        line += [";".join(r[k]) for k in list_keys]
        line += [r.get(k, "") for k in ("reviewed", "error") if k in header]
        line.append(json.dumps(r["outputs"], ensure_ascii=False))
        writer.writerow(line)
    return buffer.getvalue()
