"""A run's summary table as a reader last built it, so that the next reader loads it instead of parsing the index.

Parsing results.index.jsonl is what opening a 100,000-item run cost most (0.2 s of JSON
and 0.1 s of building the table, of CPU): ``results.index.snap`` holds the table a reader
built, in the columns it keeps (``SummaryTable.coded``), and the next reader loads it and
parses only the index lines appended after it. Loading is a JSON header and a few arrays.

  one JSON line   {"format": 1, "index_bytes": bytes of the index it covers, "tail": sha256 of
                  the last (up to) TAIL_BYTES of those, "records_end": the end of the last record
                  it points at, "items": number of items, "shapes": [[keys, placed], ...],
                  "columns": [[key, values, coded], ...]}
  then            each item's shape number (uint32), the places (int64, two an item) and each
                  coded column's codes (uint32 an item), little-endian, in the header's order

A reader that parsed more of the index at one look than it held before writes it (a
report, an inspector, ``n2f run``'s closing report, reading from the start or past a
snapshot that covered less than what followed it) when it found nothing wrong, replacing
the file without fsync: a crash can lose it, and then the next reader parses the index. It is
trusted only while it is a true copy of a prefix of the index: the index is at least
``index_bytes`` long and its bytes before there end as they did, and the records reach
``records_end``. The index only grows, except when the run's owner cuts the lines a crash
left past the records (``recover``): a snapshot of lines cut covers more than the index
holds, and once new lines grow it past that, their bytes differ from those hashed (each
line names its record's offset). A run with damage (lines naming no item, or past the end
of the records) gets none, so what a reader says of the damage is found anew.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from operator import add
from pathlib import Path
from typing import Any

from sessions.store.files import from_little_endian, little_endian, replace_unsynced
from sessions.store.summary_table import SummaryTable

SNAPSHOT = "results.index.snap"
FORMAT = 1
TAIL_BYTES = 4096  # the index bytes before the snapshot's end whose hash it keeps: about 30 lines


def write_snapshot(folder: Path, table: SummaryTable, index_path: Path, index_bytes: int) -> None:
    """Replace the snapshot with ``table``, read from the first ``index_bytes`` of the index. Best effort: a
    folder this process cannot write keeps what it had (readers then parse the index)."""
    tail = _tail_hash(index_path, index_bytes)
    if not tail:
        return
    kinds, places, shapes, columns = table.coded()
    places_end = max(max(map(add, places[0::2], places[1::2]), default=-1) + 1, 0)  # items with no place: -1, -1
    header = {"format": FORMAT, "index_bytes": index_bytes, "tail": tail,
              "records_end": places_end, "items": len(kinds), "shapes": [[shape.keys, shape.placed] for shape in shapes],
              "columns": [[key, values, codes is not None] for key, values, codes in columns]}
    try:
        head = json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n"
    except (TypeError, ValueError):  # a value JSON cannot hold: this table is not written
        return
    parts = [head, little_endian(kinds), little_endian(places),
             *(little_endian(codes) for _, _, codes in columns if codes is not None)]
    try:
        replace_unsynced(folder / SNAPSHOT, parts)
    except OSError:
        pass


def read_snapshot(folder: Path, index_path: Path, records_size: int, items: int | None) -> tuple[SummaryTable, int] | None:
    """The table the snapshot holds and how many bytes of the index it covers, or None when there is no
    snapshot that is a true copy of the index as it is now (the caller parses the index)."""
    try:
        data = (folder / SNAPSHOT).read_bytes()
        header = json.loads(data[:data.index(b"\n")])
        if (header["format"] != FORMAT or header["records_end"] > records_size
                or (items is not None and header["items"] > items)
                or not header["tail"] or header["tail"] != _tail_hash(index_path, header["index_bytes"])):
            return None
        return _table(header, memoryview(data)[data.index(b"\n") + 1:]), int(header["index_bytes"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _table(header: dict[str, Any], body: memoryview) -> SummaryTable:
    count = int(header["items"])
    kinds, at = _take("I", body, 0, count)
    places, at = _take("q", body, at, 2 * count)
    columns: list[tuple[str, list[Any], array[int] | None]] = []
    for key, values, coded in header["columns"]:
        codes = None
        if coded:
            codes, at = _take("I", body, at, count)
        columns.append((str(key), list(values), codes))
    if at != len(body):
        raise ValueError("the snapshot is longer than its header says")
    return SummaryTable.of_coded(kinds, places, [(tuple(keys), bool(placed)) for keys, placed in header["shapes"]],
                                 columns)


def _take(typecode: str, body: memoryview, at: int, count: int) -> tuple[array[int], int]:
    """``count`` numbers of ``typecode`` from ``body`` at ``at``, and where they end."""
    end = at + count * array(typecode).itemsize
    if count < 0 or end > len(body):
        raise ValueError("the snapshot is cut short")
    return from_little_endian(typecode, body[at:end]), end


def _tail_hash(index_path: Path, index_bytes: int) -> str:
    """The sha256 of the index's last (up to) TAIL_BYTES before ``index_bytes``; "" when it is shorter or
    cannot be read (no snapshot is written, or trusted, for it)."""
    start = max(0, index_bytes - TAIL_BYTES)
    try:
        with open(index_path, "rb") as handle:
            data = os.pread(handle.fileno(), index_bytes - start, start)
    except (OSError, ValueError):
        return ""
    return hashlib.sha256(data).hexdigest() if index_bytes > 0 and len(data) == index_bytes - start else ""
