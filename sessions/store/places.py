"""Where each item's latest record lies in results.jsonl: what a reader of every record keeps.

An export reads every item's latest record in item order. Holding the index's summaries for
that (one dict per item) would make its memory grow with the run; ``RecordPlaces`` holds
two numbers per item (offset and length, 16 bytes), filled by one pass over the index read
a block at a time (``ResultsLog.scan``), plus the score keys the export's columns need.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator

from sessions.errors import InputError
from sessions.store.results_log import LEGACY, RECORDS, ResultsLog

if TYPE_CHECKING:
    from sessions.store.runs import RunStore


@dataclass
class RecordPlaces:
    """Item index -> (byte offset, length) of its latest record; the score keys of those records."""

    at: array[int] = field(default_factory=lambda: array("q"))  # -1: no result
    length: array[int] = field(default_factory=lambda: array("q"))
    score_keys: list[str] = field(default_factory=list)  # of the latest records, in first-seen order

    def place(self, index: int) -> tuple[int, int] | None:
        if index >= len(self.at) or self.at[index] < 0:
            return None
        return self.at[index], self.length[index]


def record_places(log: ResultsLog) -> RecordPlaces | None:
    """The places of the run's latest records, from one pass over its index; None for a run of an
    earlier version (no index, a ``results.json``: its records are read whole)."""
    if not log.index_path.exists():
        return None if (log.folder / LEGACY).exists() else RecordPlaces()
    places, keysets = RecordPlaces(), dict[tuple[str, ...], int]()  # score keys -> their number, first seen first
    keyset_of = array("l")
    for index, summary in log.scan():
        if index >= len(places.at):
            grow = index + 1 - len(places.at)
            places.at.extend([-1] * grow)
            places.length.extend([0] * grow)
            keyset_of.extend([-1] * grow)
        places.at[index], places.length[index] = summary["at"], summary["len"]
        keyset_of[index] = keysets.setdefault(tuple(summary.get("scores") or ()), len(keysets))
    used = set(keyset_of)
    places.score_keys = list(dict.fromkeys(k for keys, n in keysets.items() if n in used for k in keys))
    return places


def records_in_item_order(store: RunStore, places: RecordPlaces | None = None) -> Iterator[dict[str, Any] | None]:
    """Each item's latest full record (None while pending), item by item in run order, keeping only
    where the records lie (``RunStore.record_places``), not their summaries: what an export reads."""
    places = places or store.record_places()
    if places is None:
        yield from (store.record(index) for index in range(store.total))
        return
    path = store.folder / RECORDS
    handle: BinaryIO | None = None
    try:
        for index in range(store.total):
            place = places.place(index)
            if place is None:
                yield None
                continue
            handle = handle or open(path, "rb")
            handle.seek(place[0])
            try:
                yield json.loads(handle.read(place[1]))
            except ValueError as exc:
                raise InputError(f"{path} is damaged at byte {place[0]} ({exc})") from None
    finally:
        if handle is not None:
            handle.close()
