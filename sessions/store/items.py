"""A run's items on disk, written once when the run is made and only read after.

  items.jsonl           each item's inputs and gold, one JSON object a line, its shared parts
                        as references into shared.jsonl (``sessions.store.shared``)
  items.idx             byte offset of each item's line (uint64, little-endian), so one
                        item is read without parsing the others
  items.brief.jsonl     each item's id and meta, one JSON object a line (lists, lookups
                        by id, reports: what they need without the items' inputs and gold)
  items.brief.idx       byte offset of each brief line, as items.idx
  items.ids             every item's id, joined, and where each starts (``sessions.store.item_ids``):
                        the list and lookups read it instead of searching the brief file
  shared.jsonl          the parts items share, each once

That is format 2 (``"items_format": 2`` in meta.json): each thing is written once, so the
files grow with what differs between items (a format-2 run written before items.ids
existed has none: its ids are found in the brief file). A run of format 1 (written by an earlier
version, no ``items_format``) has each whole item on its line of items.jsonl, meta
included, and no shared.jsonl; it may lack the index and the brief file too: readers then
work from items.jsonl, and the run's owner writes both (``RunItems.repair``).
"""

from __future__ import annotations

import json
import os
import re
import sys
from array import array
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, TypedDict

from engines.core import Item
from sessions.errors import InputError
from sessions.store.brief_meta import MetaReading
from sessions.store.item_ids import IdsWriter, ItemIds
from sessions.store.item_keys import ITEM_KEYS, KeysWriter
from sessions.store.files import atomic_files, atomic_write_bytes, from_little_endian, line_blocks, little_endian
from sessions.store.shared import SHARED, SharedBytes, SharedFile, SharedWriter, dumps

ITEMS = "items.jsonl"
ITEMS_INDEX = "items.idx"
ITEMS_BRIEF = "items.brief.jsonl"
BRIEF_INDEX = "items.brief.idx"
ITEM_IDS = "items.ids"
BRIEF_BLOCK = 256  # brief lines decoded as one JSON array (their keys shared, as one parse of the file shares them)
ITEMS_FORMAT = 2  # what write_items writes; a run without "items_format" in its meta is of format 1


class Brief(TypedDict):
    """One line of items.brief.jsonl: what lists, lookups and reports read of an item."""

    id: str
    meta: Mapping[str, Any]


def item_offsets(data: bytes) -> array[int]:
    """Start offset of every line of ``items.jsonl`` plus its end, for files written without ``items.idx``."""
    offsets = array("Q", [0])
    for match in re.finditer(b"\n", data):
        offsets.append(match.end())
    if offsets[-1] != len(data):
        offsets.append(len(data))
    return offsets


def brief_decoder() -> json.JSONDecoder:
    """A decoder of brief lines that shares what item metas repeat across thousands of items:
    one copy of each string (shapes, graph types, primitive names) and, within one reading, one
    list for equal lists of them (a dedc item's primitives), read-only like the rest of a brief.
    A 100,000-item brief in memory stays small (the lists alone were 8.6 MB)."""
    lists: dict[tuple[Any, ...], list[Any]] = {}

    def shared(obj: dict[str, Any]) -> dict[str, Any]:
        for key, value in obj.items():
            if isinstance(value, str):
                obj[key] = sys.intern(value)
            elif isinstance(value, list):
                members = [sys.intern(v) if isinstance(v, str) else v for v in value]
                try:
                    obj[key] = lists.setdefault(tuple(members), members)
                except TypeError:  # a member that is itself a list or an object
                    obj[key] = members
        return obj

    return json.JSONDecoder(object_hook=shared)


# brief_line writes the id first. Matched after a newline (the text read is given one in front): a literal
# start is searched for, where a line start (^) was tried at every byte (0.18 s against 0.07 s at 100,000 ids).
_BRIEF_ID = re.compile(rb'\n\{"id": ("(?:[^"\\]|\\.)*")')


def brief_line(item_id: str, meta: Mapping[str, Any]) -> bytes:
    return dumps({"id": item_id, "meta": meta}) + b"\n"


def write_items(folder: Path, items: Iterable[Item], engine: str, report_keys: Sequence[str] | None = None) -> int:
    """Write the item files of a new run of ``engine`` (format 2), streaming the items once; returns
    how many there are. Every line goes to its file as it is made: what is kept meanwhile is one
    digest and place per distinct shared part (``sessions.store.shared``), not the items. With
    ``report_keys`` (the engine's ``EngineParts.report_keys``), ``items.keys`` too."""
    keys = None if report_keys is None else KeysWriter(report_keys)
    with atomic_files(folder, (ITEMS, ITEMS_INDEX, ITEMS_BRIEF, BRIEF_INDEX, SHARED, ITEM_IDS)
                      + ((ITEM_KEYS,) if keys is not None else ())) as files:
        lines, index, briefs, brief_index, shared_file, ids_file = files[:6]
        shared, ids = SharedWriter(shared_file), IdsWriter(ids_file)
        ends = array("Q", [0, 0])  # where the next item line and brief line start
        count = 0
        for item in items:
            index.write(little_endian(ends[:1]))
            brief_index.write(little_endian(ends[1:]))
            body = {"inputs": shared.compact(item.inputs), "gold": shared.compact(item.gold)}
            if item.engine != engine:
                body["engine"] = item.engine
            line, brief = dumps(body) + b"\n", brief_line(item.id, item.meta)
            lines.write(line)
            briefs.write(brief)
            ids.add(item.id)
            if keys is not None:
                keys.add(item.meta)
            ends[0] += len(line)
            ends[1] += len(brief)
            count += 1
        index.write(little_endian(ends[:1]))
        brief_index.write(little_endian(ends[1:]))
        ids.close()
        if keys is not None:
            files[6].write(keys.to_bytes())
    return count


class RunItems:
    """Reads one run's items: all of them, one by its index, or only their ids and metas."""

    def __init__(self, folder: Path, engine: str, label: str, items_format: int = 1):
        self.folder = folder
        self.engine = engine
        self.label = label  # names the run in errors
        self.format = items_format
        self._fds: dict[str, int] = {}
        self._shared: SharedFile | None = None
        self._items: list[Item] | None = None
        self._offsets: array[int] | None = None
        self._ids: ItemIds | None = None

    def items(self) -> list[Item]:
        """Every item of the run (parsed once and kept)."""
        if self._items is None:
            lines = [line for line in self._items_bytes().splitlines() if line.strip()]
            if self._compact():
                shared = SharedBytes(self._read(SHARED), self.label)
                briefs = self.briefs()
                if len(briefs) != len(lines):
                    raise InputError(f"run {self.label}: {ITEMS} has {len(lines)} items and {ITEMS_BRIEF} "
                                     f"{len(briefs)}; the run cannot be read")
                self._items = [self._parse_compact(line, brief, shared.decoder, number)
                               for number, (line, brief) in enumerate(zip(lines, briefs))]
            else:
                self._items = [self._parse(line, number) for number, line in enumerate(lines)]
        return self._items

    def _compact(self) -> bool:
        """Whether the run's items are of format 2 (else 1); a later format is refused, not misread."""
        if self.format > ITEMS_FORMAT:
            raise InputError(f"run {self.label} was written by a later n2f (items format {self.format}); "
                             "upgrade n2f to read it")
        return self.format == ITEMS_FORMAT

    def _parse_compact(self, line: bytes, brief: Brief, decoder: json.JSONDecoder, index: int) -> Item:
        """A line of items.jsonl (format 2) and the item's brief as the item, or one InputError naming the damage."""
        try:
            body = decoder.decode(line.decode("utf-8"))
            inputs, gold = body["inputs"], body["gold"]
            if not isinstance(inputs, dict) or not isinstance(gold, dict):
                raise ValueError("inputs and gold must be objects")
            return Item(id=brief["id"], engine=body.get("engine", self.engine), inputs=inputs, gold=gold,
                        meta=brief["meta"])
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise InputError(f"run {self.label}: {ITEMS} is damaged at item {index + 1} ({exc}); "
                             "the run cannot be read") from None

    def _parse(self, line: bytes, index: int) -> Item:
        """One line of items.jsonl as an item, or one InputError naming the damage (a truncated file)."""
        try:
            return Item.from_json(json.loads(line))
        except ValueError as exc:
            raise InputError(f"run {self.label}: {ITEMS} is damaged at item {index + 1} ({exc}); "
                             "the run cannot be read") from None

    def item(self, index: int) -> Item:
        """One item, reading only its line (and, in format 2, its brief line and its shared parts)."""
        if self._items is not None:
            return self._items[index]
        if self._compact():
            if index < 0:
                raise IndexError(index)
            line = self._indexed_line(ITEMS, ITEMS_INDEX, index)
            try:
                brief: Brief = json.loads(self._indexed_line(ITEMS_BRIEF, BRIEF_INDEX, index))
            except ValueError as exc:
                raise InputError(f"run {self.label}: {ITEMS_BRIEF} is damaged at item {index + 1} ({exc}); "
                                 "the run cannot be read") from None
            if self._shared is None:
                self._shared = SharedFile(self._fd(SHARED), self.label)
            return self._parse_compact(line, brief, self._shared.decoder, index)
        offsets = self._item_offsets()
        if not 0 <= index < len(offsets) - 1:
            raise IndexError(index)
        with open(self.folder / ITEMS, "rb") as handle:
            handle.seek(offsets[index])
            return self._parse(handle.read(offsets[index + 1] - offsets[index]), index)

    def briefs(self) -> list[Brief]:
        """Every item's ``{"id", "meta"}`` in run order, without parsing the items' inputs and gold.

        Not kept: callers keep what they need (ids, or light items for a report).
        """
        try:
            handle = open(self.folder / ITEMS_BRIEF, "rb")
        except FileNotFoundError:  # written by an earlier version
            return [{"id": item.id, "meta": item.meta} for item in self.items()]
        briefs: list[Brief] = []
        with handle:  # a block of lines at a time: the whole file as text and joined was three times its size at once
            decoder = brief_decoder()
            while block := [line for line in islice(handle, BRIEF_BLOCK) if line.strip()]:
                briefs += decoder.decode("[" + b",".join(block).decode("utf-8") + "]")
        return briefs

    def iter_briefs(self) -> Iterator[Brief]:
        """Every item's ``{"id", "meta"}`` in run order, one line of the brief file at a time: for a reader
        that looks at each once (an export's columns), so memory does not follow the run."""
        try:
            handle = open(self.folder / ITEMS_BRIEF, "rb")
        except FileNotFoundError:  # written by an earlier version
            yield from self.briefs()
            return
        with handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)  # not interned: each brief is looked at once, and interning
                    # would grow the interpreter's table of strings with every id of the run

    def brief_items(self) -> list[Item]:
        """Every item with its id and meta only: what reports group and name items by.

        Their inputs and gold are one shared empty mapping, read-only like the rest of a brief.
        """
        engine = self.engine
        nothing: dict[str, Any] = {}
        return [Item(id=b["id"], engine=engine, inputs=nothing, gold=nothing, meta=b["meta"]) for b in self.briefs()]

    def iter_brief_items_at(self, indices: Iterable[int]) -> Iterator[tuple[int, Item]]:
        """The items at ``indices`` as ``brief_items`` makes them, in run order, parsing no other item's brief.

        A report reads the briefs of the items with a result only. The brief file is read a
        block of lines at a time and only the wanted lines of a block are decoded, so memory
        follows the items asked for: reading half of a 100,000-item run's briefs as the whole
        file and keeping half held the other half's metas at its peak (34 MB). The metas are
        kept compact (``sessions.store.brief_meta``).
        """
        wanted = bytearray()  # a byte an item, not a set of numbers (7 MB at 100,000)
        for index in indices:
            if index >= len(wanted):
                wanted.extend(bytes(index + 1 - len(wanted)))
            if index >= 0:
                wanted[index] = 1
        if not (self.folder / ITEMS_BRIEF).exists():
            every = self.brief_items()
            yield from ((i, item) for i, item in enumerate(every) if i < len(wanted) and wanted[i])
            return
        engine = self.engine
        nothing: dict[str, Any] = {}
        metas = MetaReading()
        with open(self.folder / ITEMS_BRIEF, "rb") as handle:
            first = 0
            while first < len(wanted) and (block := list(islice(handle, BRIEF_BLOCK))):
                picked = [n for n in range(first, min(first + len(block), len(wanted)))
                          if wanted[n] and block[n - first].strip()]
                if picked:
                    text = b",".join(block[n - first] for n in picked).decode("utf-8")
                    for number, brief in zip(picked, json.loads("[" + text + "]")):
                        yield number, Item(id=brief["id"], engine=engine, inputs=nothing, gold=nothing,
                                           meta=metas.meta(brief["meta"]))
                first += len(block)

    def item_ids(self) -> ItemIds:
        """Every item's id in run order, held joined (``sessions.store.item_ids``): from items.ids, or for a
        run without a whole one, the head of each brief line, without parsing the metas."""
        if self._ids is None:
            if not (self.folder / ITEMS_BRIEF).exists():  # written by an earlier version
                self._ids = ItemIds.of([[item.id for item in self.items()]])
            else:
                self._ids = self._stored_ids() or self._brief_ids()
        return self._ids

    def _stored_ids(self) -> ItemIds | None:
        """The ids of items.ids when it holds one for each brief line (None: missing, damaged or cut)."""
        try:
            count = os.stat(self.folder / BRIEF_INDEX).st_size // 8 - 1
            return ItemIds.from_bytes((self.folder / ITEM_IDS).read_bytes(), count)
        except FileNotFoundError:
            return None

    def _brief_ids(self) -> ItemIds:
        """The ids at the head of each brief line, a block at a time (the whole file at once was 25 MB held
        at 100,000 items)."""
        return ItemIds.of(json.loads(b"[" + b",".join(_BRIEF_ID.findall(b"\n" + data)) + b"]")
                          for data in line_blocks(self.folder / ITEMS_BRIEF, block=1 << 20))

    def find_item(self, item_id: str) -> int | None:
        """The index of the item with this id: a byte search of the brief file, whose lines start with the id."""
        if self._ids is not None or not (self.folder / ITEMS_BRIEF).exists():
            try:
                return self.item_ids().index(item_id)
            except ValueError:
                return None
        data = (self.folder / ITEMS_BRIEF).read_bytes()
        needle = brief_line(item_id, {})[: -len(b' "meta": {}}\n')]  # '{"id": "<id>",'
        at = data.find(needle)
        while at > 0 and data[at - 1] != 0x0A:
            at = data.find(needle, at + 1)
        return None if at < 0 else data.count(b"\n", 0, at)

    def repair(self) -> None:
        """Write what a run's readers look for and an earlier version did not write (the run's owner only):
        the index and the brief file of a run of format 1, items.ids of a run of format 2 (a damaged one is
        left: readers find the ids in the brief file then)."""
        if self.format == ITEMS_FORMAT and (self.folder / ITEMS_BRIEF).exists() and not (self.folder / ITEM_IDS).exists():
            with atomic_files(self.folder, (ITEM_IDS,)) as (handle,):
                ids = IdsWriter(handle)
                for item_id in self._brief_ids():
                    ids.add(item_id)
                ids.close()
        if self.format != 1:
            return
        if not (self.folder / ITEMS_INDEX).exists():
            atomic_write_bytes(self.folder / ITEMS_INDEX, little_endian(item_offsets(self._items_bytes())))
        if not (self.folder / ITEMS_BRIEF).exists():
            atomic_write_bytes(self.folder / ITEMS_BRIEF, b"".join(brief_line(b["id"], b["meta"]) for b in self.briefs()))

    def _items_bytes(self) -> bytes:
        return self._read(ITEMS)

    def _read(self, name: str) -> bytes:
        try:
            return (self.folder / name).read_bytes()
        except FileNotFoundError:
            raise InputError(f"run {self.label}: {name} is missing") from None

    def _indexed_line(self, name: str, index_name: str, index: int) -> bytes:
        """Line ``index`` of ``name``, found by two reads: its start and end in ``index_name``, then its bytes."""
        span = from_little_endian("Q", os.pread(self._fd(index_name), 16, 8 * index))
        if len(span) < 2:
            raise IndexError(index)
        return os.pread(self._fd(name), span[1] - span[0], span[0])

    def _fd(self, name: str) -> int:
        """A descriptor of one of the run's item files (format 2: never rewritten), opened once."""
        fd = self._fds.get(name)
        if fd is None:
            try:
                fd = self._fds[name] = os.open(self.folder / name, os.O_RDONLY)
            except FileNotFoundError:
                raise InputError(f"run {self.label}: {name} is missing; the run's items cannot be read") from None
        return fd

    def close(self) -> None:
        """Let go of the files ``item`` keeps open."""
        fds, self._fds, self._shared = self._fds, {}, None
        for fd in fds.values():
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    def _item_offsets(self) -> array[int]:
        if self._offsets is None:
            try:
                offsets = from_little_endian("Q", (self.folder / ITEMS_INDEX).read_bytes())
            except FileNotFoundError:
                offsets = item_offsets(self._items_bytes())
            self._offsets = offsets
        return self._offsets
