"""What a run's report reads of each item's meta, kept once beside its items.

An engine names the meta keys its report reads (``EngineParts.report_keys``: dedc's graph type
and gap, logic's dataset and operators...). ``items.keys`` holds, for every item of the run,
which of the distinct tuples of those keys' values it has, so that a report counts a run's
results by them without reading an item (``sessions.store.results.report_rows``):

  one JSON line   {"format": 1, "keys": [name, ...], "items": N,
                   "values": [[the value of each name, null where the item has none], ...]}
  then            each item's number among the values (uint32, little-endian), in item order

It is written with the items when a run is made (``write_items``: four bytes an item are held
meanwhile, as for the ids), and, for a run made before it existed or under code whose report
read other keys, made by the first report that wants it, from the brief items, and left as a
reader's copy (replaced whole without fsync: a crash loses it, and the next report makes it
again). Items never change once written, so the file is good while its names are the engine's
and its count the run's.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from sessions.store.files import from_little_endian, little_endian, replace_unsynced

if TYPE_CHECKING:
    from sessions.store.runs import RunStore

ITEM_KEYS = "items.keys"
FORMAT = 1


@dataclass(frozen=True)
class ItemKeys:
    """The distinct values of a run's report keys (a dict each: name -> value, None where an item has none)
    and each item's number among them."""

    values: list[dict[str, Any]]
    codes: array[int]


class KeysWriter:
    """Numbers each item's values of ``names`` as the items come, and writes the file at the end."""

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)
        self.codes = array("I")
        self._numbers: dict[str, int] = {}

    def add(self, meta: Mapping[str, Any]) -> None:
        values = json.dumps([meta.get(name) for name in self.names], ensure_ascii=False)  # as the file holds them
        self.codes.append(self._numbers.setdefault(values, len(self._numbers)))

    def to_bytes(self) -> bytes:
        """The file: its header line, then the codes."""
        header = {"format": FORMAT, "keys": list(self.names), "items": len(self.codes),
                  "values": [json.loads(values) for values in self._numbers]}
        return json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n" + little_endian(self.codes)

    def item_keys(self) -> ItemKeys:
        return _item_keys(self.names, map(json.loads, self._numbers), self.codes)


def _item_keys(names: Sequence[str], rows: Iterable[Sequence[Any]], codes: array[int]) -> ItemKeys:
    """``ItemKeys`` of the distinct rows of values, each named by ``names``."""
    return ItemKeys([dict(zip(names, row)) for row in rows], codes)


def read_item_keys(store: RunStore, names: Sequence[str]) -> ItemKeys | None:
    """The run's ``items.keys`` when it holds ``names`` for every item; None when there is none, another
    set of names, another count or damage."""
    try:
        data = (store.folder / ITEM_KEYS).read_bytes()
        end = data.index(b"\n")
        header = json.loads(data[:end])
        codes = from_little_endian("I", data[end + 1:])
        values = header["values"]
        if header["format"] != FORMAT or header["keys"] != list(names) or not header["items"] == len(codes) == store.total:
            return None
        if codes and max(codes) >= len(values):
            return None
        return _item_keys(names, values, codes)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def item_keys(store: RunStore, names: Sequence[str]) -> ItemKeys:
    """The run's item keys of ``names``: its ``items.keys``, or made from its brief items and kept (best
    effort: a store this process cannot write makes them again next time)."""
    found = read_item_keys(store, names)
    if found is not None:
        return found
    writer = KeysWriter(names)
    for _, item in store.iter_brief_items_at(range(store.total)):
        writer.add(item.meta)
    try:
        replace_unsynced(store.folder / ITEM_KEYS, [writer.to_bytes()])
    except OSError:
        pass
    return writer.item_keys()
