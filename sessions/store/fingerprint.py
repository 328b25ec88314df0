"""Which items and outputs a label was made on: a run's fingerprint and each output's hash.

A label judges one output. Two runs can share every item id and still hold other outputs
(another seed, a real model's other reply), so a label is only meaningful next to the
output it was made on. Every annotation event therefore records

- ``output``: the hash of the stored outputs of the item it labels (``""`` while the item
  has none), and
- ``fingerprint``: the run's fingerprint when the event was written;

and ``annotations import`` takes events only when their ``output`` is the hash of what
this run holds for the item (``check_import``). ``--force`` takes the others too, each
marked ``"forced": true`` so that agreement and reports can say how many there are.
Events written before events carried a hash have none and are taken as they are.

Hashes are sha256 over canonical JSON (sorted keys, no spaces), cut to 16 hex digits
(64 bits: a collision between two runs' outputs is not a practical concern here):

- an output hash is over the item's list of step outputs;
- the fingerprint is over every item, in run order: its id, the hash of the item itself
  (inputs, gold, meta) and its output hash. Equal fingerprints mean the same items with
  the same outputs, whatever the run is called or where it was made.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from sessions.errors import InputError
from sessions.store.results_log import INDEX

if TYPE_CHECKING:
    from sessions.store.runs import RunStore

DIGITS = 16
SHOWN = 5  # items named in a refusal before "and N more"


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGITS]


def output_hash(record: dict[str, Any] | None) -> str:
    """The hash of a stored record's outputs; ``""`` for an item without a record (pending)."""
    return digest(list(record.get("outputs", []))) if record else ""


def output_hashes(store: RunStore) -> dict[str, str]:
    """Item id -> output hash, for every item of the run (reads every record once)."""
    ids = store.item_ids()
    hashes = dict.fromkeys(ids, "")
    for index, record in store.iter_results():
        hashes[ids[index]] = output_hash(record)
    return hashes


def run_fingerprint(store: RunStore, hashes: dict[str, str] | None = None) -> str:
    """The fingerprint of the run's items and outputs (see the module docstring)."""
    hashes = output_hashes(store) if hashes is None else hashes
    sha = hashlib.sha256()
    for item in store.items():
        sha.update(f"{item.id}\t{digest(item.to_json())}\t{hashes.get(item.id, '')}\n".encode("utf-8"))
    return sha.hexdigest()[:DIGITS]


class Stamper:
    """The ``fingerprint`` and ``output`` fields of a new event on one run.

    The fingerprint is worked out when the first event is written and again only when the
    run's results changed on disk since (its index grew), so labelling costs one record
    read per event.
    """

    def __init__(self, store: RunStore):
        self.store = store
        self._fingerprint = ""
        self._seen_size = -1

    def fingerprint(self) -> str:
        try:
            size = os.stat(self.store.folder / INDEX).st_size
        except FileNotFoundError:
            size = 0
        if size != self._seen_size:
            self._fingerprint, self._seen_size = run_fingerprint(self.store), size
        return self._fingerprint

    def __call__(self, item_id: str) -> dict[str, str]:
        index = self.store.find_item(item_id)
        record = self.store.record(index) if index is not None else None
        return {"fingerprint": self.fingerprint(), "output": output_hash(record)}


@dataclass
class ImportCheck:
    """What an import file holds against this run's outputs."""

    lines: list[str]  # the lines to import (events made on other outputs marked, when forced)
    foreign: dict[str, int] = field(default_factory=dict)  # item -> events made on other outputs
    unchecked: int = 0  # events without an output hash (written before events carried one)

    @property
    def foreign_events(self) -> int:
        return sum(self.foreign.values())


def check_import(lines: Sequence[str], hashes: dict[str, str]) -> ImportCheck:
    """Sort the events of ``lines`` by whether they were made on the outputs ``hashes`` (item -> hash) holds.

    Lines that are not events are passed on untouched: the log's import names what is wrong with them.
    """
    check = ImportCheck(lines=[])
    for line in lines:
        event = _event(line)
        if event is None or event.get("item") not in hashes:
            check.lines.append(line)
            continue
        made_on = event.get("output")
        if made_on is None:
            check.unchecked += 1
        elif made_on != hashes[event["item"]]:
            check.foreign[event["item"]] = check.foreign.get(event["item"], 0) + 1
            line = json.dumps({**event, "forced": True}, ensure_ascii=False)
        check.lines.append(line)
    return check


def refusal(check: ImportCheck, run: str, source: str) -> InputError:
    """The one line that refuses an import holding events made on other outputs."""
    items = list(check.foreign)
    named = ", ".join(items[:SHOWN]) + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
    return InputError(f"{source}: {check.foreign_events} event(s) on {len(items)} item(s) ({named}) were made on "
                      f"other outputs than run {run} holds (another run with the same item ids?); nothing imported. "
                      f"`n2f pack` / `n2f unpack` share the run itself; --force imports them marked forced")


def forced_events(events: Iterable[dict[str, Any]]) -> int:
    """How many events were imported with ``--force`` on other outputs."""
    return sum(1 for e in events if e.get("forced"))


def _event(line: str) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) else None
