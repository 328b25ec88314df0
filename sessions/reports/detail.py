"""One item as the inspector and ``n2f show`` display it: prompts rebuilt, the verdict re-judged.

Reading and rebuilding the prompts is quick; re-judging can take seconds (a solver at its
timeout), so the two are separate calls and the inspector does the second in a worker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from engines.core import Item
from sessions.errors import InputError
from sessions.store.prompts import rebuilt_steps
from sessions.store.results import run_settings
from sessions.store.summary_line import finish_reasons
from sessions.store.runs import RunStore


@dataclass
class ItemDetail:
    """Everything the inspector and ``n2f show`` display for one item."""

    index: int
    item: Item
    record: dict[str, Any] | None
    prompts: list[dict[str, Any]]  # per step, as ``item_steps`` returns them
    verdict: Any  # engines.core.Verdict, re-judged from the stored outputs (None if not scored)
    annotations: list[dict[str, Any]]

    @property
    def status(self) -> str:
        return self.record.get("status", "pending") if self.record else "pending"

    @property
    def needs_scoring(self) -> bool:
        """A stored answer not re-judged yet (pending items have none; error items are never judged)."""
        return self.verdict is None and self.record is not None and self.record.get("status") != "error"


def item_steps(store: RunStore, item: Item, outputs: Sequence[str]) -> list[dict[str, Any]]:
    """The item's steps rebuilt from the run's templates (``sessions.run.steps.rebuilt_steps``)."""
    engine, settings = run_settings(store)
    return rebuilt_steps(engine, settings, store.meta.get("templates"), item, outputs)


def item_detail(store: RunStore, index: int, record: dict[str, Any] | None = None,
                annotations: list[dict[str, Any]] | None = None, scored: bool = True) -> ItemDetail:
    """Prompts rebuilt from the run's templates and a fresh verdict with views from stored outputs.

    ``record`` is the item's stored record when the caller has it already; None reads it
    from the store, and ``{}`` means the item has none yet (pending) without reading.
    ``annotations`` are the item's events when the caller keeps the run's log open (the
    inspector); None reads the log. ``scored=False`` leaves the verdict for ``score_detail``:
    re-judging can take seconds (a solver at its timeout), reading and prompts do not.
    """
    item = store.item(index)
    if record is None:
        record = store.record(index)
    record = record or None
    outputs = list(record.get("outputs", [])) if record else []
    prompts = item_steps(store, item, outputs)
    detail = ItemDetail(index=index, item=item, record=record, prompts=prompts, verdict=None,
                        annotations=store.annotations().events(item.id) if annotations is None else annotations)
    return score_detail(store, detail) if scored else detail


def score_detail(store: RunStore, detail: ItemDetail) -> ItemDetail:
    """The detail with its verdict re-judged from the stored outputs (none for a pending or error item)."""
    record = detail.record
    if not detail.needs_scoring or record is None:  # needs_scoring implies a record
        return detail
    engine, settings = run_settings(store)
    verdict = engine.score(detail.item, list(record.get("outputs", [])), settings,
                           finish_reasons=finish_reasons(record.get("steps", [])), templates=store.meta.get("templates"))
    return replace(detail, verdict=verdict)


def find_item(store: RunStore, ref: str) -> tuple[int, Item]:
    """An item by its 1-based position in the run, or by id (engines' ids are never bare numbers)."""
    index = int(ref) - 1 if ref.isdigit() and 1 <= int(ref) <= store.total else store.find_item(ref)
    if index is None:
        example = store.item(0).id if store.total else "-"
        raise InputError(f"run {store.label} has no item {ref!r} (ids like {example}, or 1..{store.total})")
    return index, store.item(index)

