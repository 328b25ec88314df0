"""A run's items as export rows: one flat row per item, for spreadsheets, pandas, DuckDB and replay.

Every row carries the run (id, name, engine, model), the item (position, id, every ``meta``
field as a ``meta_<key>`` column, its gold), the prompt the model was asked and its reply,
the verdict (status, each score as ``score_<key>``, the automatic tags and their evidence),
the final tags and notes of the annotation log, and the tokens. With ``annotations`` each
annotator's labels, the settled labels and the manual changes are added. Values stay JSON
values here (lists, mappings); ``sessions.reports.export_formats`` flattens them per format.

Rows are made and handed on one at a time: a run is read item by item (its own line of the
items file, its own record found through ``sessions.store.places``: 16 bytes an item, not
its summary), never as a whole, so an export's memory does not grow with the run. The
columns are known before the first row (a CSV header, a Parquet schema) from a first pass
over what the store keeps light: the index (for the score keys, streamed) and the items'
brief file (one line at a time). A run with annotations also reads its labels, built from
its result summaries (``store_labels``). A JSON-lines export is also a replay file (``-m replay:FILE``): ``id``, ``outputs``
and ``finish_reasons`` per step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from engines import get_engine
from engines.core import Item, settings_from_json
from sessions.study.annotations import ItemMarks
from sessions.study.labels import RunLabels, store_labels
from sessions.store.places import records_in_item_order
from sessions.store.prompts import rebuilt_steps
from sessions.store.summary_line import finish_reasons
from sessions.store.runs import RunStore
from sessions.run.usage import Usage

STEP_BREAK = "\n\n---\n\n"  # between the prompts (and replies) of an item's model steps


@dataclass
class Columns:
    """What the rows of one export hold beyond the fixed columns, known before the first row."""

    scores: list[str] = field(default_factory=list)
    meta: dict[str, type] = field(default_factory=dict)  # key -> int, float, bool or str (anything else as JSON)
    annotators: list[str] = field(default_factory=list)  # with annotations: one labels_<name> column each
    annotations: bool = False

    def names(self) -> list[str]:
        head = ["run", "run_name", "engine", "model", "index", "id", "status"]
        head += [f"score_{k}" for k in self.scores] + [f"meta_{k}" for k in self.meta]
        head += ["prompt", "output", "gold", "tags", "tag_evidence", "final_tags", "final_source", "reviewed", "notes"]
        if self.annotations:
            head += ["manual_tags_added", "manual_tags_removed", "settled_tags", *(f"labels_{a}" for a in self.annotators)]
        return head + ["prompt_tokens", "completion_tokens", "cached_steps", "error", "finish_reasons", "outputs"]


def _kind(value: Any) -> type:
    if isinstance(value, bool):
        return bool
    if isinstance(value, (int, float, str)):
        return type(value)
    return dict  # lists and mappings travel as JSON text in flat formats


def _merged(old: type | None, new: type) -> type:
    if old is None or old is new:
        return new
    return float if {old, new} <= {int, float} else str


def plan_columns(stores: Sequence[RunStore], annotations: bool = False) -> Columns:
    """The score keys, meta keys (with one type each) and annotators of every run, in first-seen order."""
    columns = Columns(annotations=annotations)
    scores: dict[str, None] = {}
    for store in stores:
        places = store.record_places()
        if places is None:  # records buffered in this process, or an earlier version's run
            for summary in store.summaries().values():
                scores.update(dict.fromkeys(summary.get("scores", {})))
        else:
            scores.update(dict.fromkeys(places.score_keys))
        for brief in store.iter_briefs():
            for key, value in brief["meta"].items():
                columns.meta[key] = _merged(columns.meta.get(key), _kind(value))
        if annotations:
            for name in store_labels(store).annotators:
                if name not in columns.annotators:
                    columns.annotators.append(name)
    columns.scores = list(scores)
    columns.meta = {k: (str if v is dict else v) for k, v in columns.meta.items()}
    return columns


def _meta_value(value: Any, kind: type) -> Any:
    if value is None:
        return None
    if kind is str and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else str(value)
    return float(value) if kind is float else value


def _text(steps: list[dict[str, Any]], outputs: Sequence[str]) -> tuple[str, str]:
    """The model steps' prompts (each message's text) and their replies, steps apart by STEP_BREAK."""
    model = [(i, s) for i, s in enumerate(steps) if s["kind"] == "model"]
    prompt = STEP_BREAK.join("\n\n".join(m["content"] for m in s["messages"]) for _, s in model)
    output = STEP_BREAK.join(outputs[i] for i, _ in model if i < len(outputs))
    return prompt, output


@dataclass
class RunReader:
    """One run's rows, read item by item."""

    store: RunStore
    columns: Columns

    def rows(self) -> Iterator[dict[str, Any]]:
        return (row for row, _, _ in self.entries())

    def entries(self) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]]:
        """Per item: its row, its steps rebuilt (prompts as messages) and its stored record ({} if pending)."""
        store = self.store
        engine = get_engine(store.meta["engine"])
        settings = settings_from_json(engine.settings_type, store.meta.get("settings", {}))
        templates = store.meta.get("templates")
        log = store.annotations()
        try:
            marks = log.marks()
            annotated = bool(marks or log.settled())
        finally:
            log.close()
        labels = store_labels(store) if annotated else RunLabels(items={}, annotators=[], names={})
        for index, stored in enumerate(records_in_item_order(store)):
            item = store.item(index)
            record = stored or {}
            steps = rebuilt_steps(engine, settings, templates, item, list(record.get("outputs", [])))
            yield self.row(index, item, record, steps, labels, marks.get(item.id) or ItemMarks()), steps, record

    def row(self, index: int, item: Item, record: dict[str, Any], steps: list[dict[str, Any]], labels: RunLabels,
            mark: ItemMarks) -> dict[str, Any]:
        meta, columns = self.store.meta, self.columns
        outputs = list(record.get("outputs", []))
        prompt, output = _text(steps, outputs)
        tags = record.get("tags", [])
        codes = [str(t["code"]) for t in tags]
        scores = record.get("scores", {})
        usage = Usage()
        usage.add_steps(record.get("steps"))
        known = labels.items.get(item.id)
        row: dict[str, Any] = {
            "run": meta["id"], "run_name": meta.get("name", ""), "engine": meta["engine"], "model": meta.get("model", ""),
            "index": index + 1, "id": item.id, "status": record.get("status", "pending"),
            **{f"score_{k}": (None if scores.get(k) is None else float(scores[k])) for k in columns.scores},
            **{f"meta_{k}": _meta_value(item.meta.get(k), kind) for k, kind in columns.meta.items()},
            "prompt": prompt, "output": output, "gold": item.gold, "tags": codes,
            "tag_evidence": [f"{t['code']}: {t.get('evidence', '')}" for t in tags],
            "final_tags": sorted(labels.final(item.id, codes)), "final_source": known.source if known else "automatic",
            "reviewed": bool(known and known.reviewed), "notes": list(mark.notes),
        }
        if columns.annotations:
            by = known.by_annotator if known else {}
            row.update({"manual_tags_added": sorted(mark.added), "manual_tags_removed": sorted(mark.removed),
                        "settled_tags": sorted(known.settled) if known and known.settled is not None else None,
                        **{f"labels_{a}": sorted(by[a]) if a in by else None for a in columns.annotators}})
        row.update({"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                    "cached_steps": sum(bool(s.get("cached")) for s in record.get("steps", [])),
                    "error": record.get("error", ""), "finish_reasons": finish_reasons(record.get("steps", [])),
                    "outputs": outputs})
        return row


def export_rows(stores: Sequence[RunStore], columns: Columns) -> Iterator[dict[str, Any]]:
    """Every run's rows in turn, each run in its item order (items never run are ``pending``)."""
    for store in stores:
        yield from RunReader(store, columns).rows()
