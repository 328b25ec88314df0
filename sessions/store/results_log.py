"""One run's results as two append-only logs, so that cost follows the batch, not the run.

  results.jsonl        one full record per line (outputs, steps, tags with evidence)
  results.index.jsonl  one short summary per record: ``{"i": item index, "at": byte offset
                       in results.jsonl, "len": bytes, "status", "scores", "tags": [codes],
                       "attempt"}``

The latest line of an item wins: a retried ``error`` item or a rescore appends anew.

- Appending a batch writes the records (one write, fsync), then their summaries (one
  write, fsync), so a summary never points at bytes that are not on disk.
- A reader tails the index: each call parses only what was appended since its last one,
  ignoring a partial last line; one item's record is one seek and one read.
- Only the run's owner (the process holding its lock) appends, and at ``recover`` it cuts
  what a dead writer left half done: a torn index line, and record bytes no summary
  points at (their items are pending again and ``resume`` runs them).

Measured on 2 cores (``python benchmarks/store_scale.py``, see its docstring): at 100,000
dedc items the index is about 11 MB and parses in about 0.2 s, where the single TinyDB
file this replaces was 220 MB, rewritten whole on every flush and parsed whole to show
one item. Runs written by earlier versions (``results.json``, a TinyDB document table)
are read as they are and converted by their next owner.
"""

from __future__ import annotations

import json
import os
from array import array
from contextlib import suppress
from pathlib import Path
from typing import Any, Iterator, Mapping

from sessions.collector import collector_paused
from sessions.errors import InputError
from sessions.store.files import (append_durably, atomic_write_bytes, complete_lines, cut_after, cut_torn_tail, fsync_folder,
                                  json_line_blocks, read_from, whole_lines_backwards)
from sessions.store.summary import RunTally, write_summary
from sessions.store.summary_line import Summary, summary_of
from sessions.store.summary_snapshot import read_snapshot, write_snapshot
from sessions.store.summary_table import SummaryTable

RECORDS = "results.jsonl"
INDEX = "results.index.jsonl"
LEGACY = "results.json"


LegacyRecords = dict[int, dict[str, Any]]  # item index -> record, as an earlier version's results.json held them


def _inside(line: bytes, size: int) -> bool:
    """Whether an index line is whole and points inside the first ``size`` bytes of the records."""
    try:
        summary = json.loads(line)
        return bool(summary["at"] + summary["len"] + 1 <= size)
    except (ValueError, KeyError, TypeError):
        return False


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # one encoder, not one a line


def _dumps(value: Any) -> bytes:
    return _ENCODE(value).encode("utf-8")


class ResultsLog:
    """Reader (any process) and, for the run's owner, writer of a run's result logs."""

    def __init__(self, folder: Path, items: int | None = None):
        self.folder = folder
        self.items = items  # how many items the run has (None: not known); a line naming another is ignored
        self.records_path = folder / RECORDS
        self.index_path = folder / INDEX
        self._summaries = SummaryTable()
        self._read_to = 0  # bytes of the index parsed so far
        self._unfollowed = array("q")  # items read since the last ``take_unfollowed`` (as a list: 3.6 MB at 100,000)
        self._legacy: LegacyRecords | None = None
        self._fds: tuple[int, int] | None = None  # results.jsonl and the index, opened for appending
        self._end = 0  # size of results.jsonl as the owner wrote it
        self._broken = ""
        self._short: set[int] = set()  # items whose latest index line points past the records' end
        self._foreign = 0  # index lines naming no item of the run
        self._tally: RunTally | None = None  # the owner's figures of the run (summary.json), from ``recover`` on
        self.damage = ""  # what a reader found wrong with the files (shown by ``n2f runs``)

    # ------------------------------------------------------------------ reading

    def summaries(self) -> SummaryTable:
        """Item index -> latest summary (with ``at``/``len``); reads only the index's new lines."""
        if not self.index_path.exists() and (legacy := self._read_legacy()) is not None:
            table = SummaryTable()
            for i, r in legacy.items():
                table[i] = {**summary_of(r), "legacy": True}
            return table
        self.tail()
        return self._summaries

    def take_unfollowed(self, hand_over: bool = True) -> dict[int, Summary]:
        """The summaries read since the last call, whoever made them be read (item index -> summary).

        What a reader following another process's run calls when the index grew: only the new
        lines are parsed, so following a 10,000-item run costs its batches, not its size; lines
        a report or a lookup read meanwhile (``summaries``) are handed over too, not lost. Not
        ``hand_over``: they are marked taken and none is returned (a reader about to read them all).
        """
        self.tail()
        taken, self._unfollowed = self._unfollowed, array("q")
        if not hand_over:
            return {}
        return {i: self._summaries[i] for i in taken}  # each item once, its latest summary

    def tail(self) -> None:
        """Take the summaries appended since the last look into ``summaries``, a block of lines at a time; a
        first look loads the snapshot a reader left (``sessions.store.summary_snapshot``), if it still holds,
        and parses only what came after it; a look that parsed more than was held before it leaves a new one
        (a follower's batches do not: snapshots are written as the index doubles, at most)."""
        if not self.index_path.exists():
            return
        size = self._records_size()
        if not self._read_to and (snapshot := read_snapshot(self.folder, self.index_path, size, self.items)):
            self._summaries, self._read_to = snapshot
            self._unfollowed += array("q", self._summaries)
        table, fresh, consumed, covered = self._summaries, array("q"), 0, self._read_to
        with collector_paused():  # what is parsed is kept or freed by reference counting: no pass to walk it
            for parsed, used in json_line_blocks(self.index_path, self._read_to):
                if not table.take_lines(parsed, size, fresh, self.items):  # a block at once when it can
                    for summary in parsed:
                        if self._readable(index := summary.pop("i"), summary, size):
                            table[index] = summary
                            fresh.append(index)
                consumed += used
        self._read_to += consumed  # only once every block parsed: after a damaged line the next look parses
        # these lines again, and setting an item's latest summary again changes nothing
        self._unfollowed += fresh  # their indices: a reader that never follows keeps no second table
        if consumed > covered and table and not self.damage:  # more parsed now than held before: from the
            write_snapshot(self.folder, table, self.index_path, self._read_to)  # start, or past a short snapshot

    def scan(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every readable line of the index as (item index, summary) in file order, parsed a block at a
        time and kept by nobody; lines past the end of results.jsonl are left out (``damage`` says so)."""
        size = self._records_size()
        for parsed, _ in json_line_blocks(self.index_path, 0, block=1 << 16):
            for summary in parsed:
                if self._readable(index := summary.pop("i"), summary, size):
                    yield index, summary

    def record(self, index: int) -> dict[str, Any] | None:
        """One item's full record, parsing nothing else of the run.

        A reader that keeps the summaries (an inspector) looks the record up in them; a
        one-off reader (``n2f show``) finds the item's last index line by a byte search
        instead of parsing the whole index.
        """
        if self._read_to or not self.index_path.exists():
            summary = self.summaries().get(index)
        else:
            summary = self._find_summary(index)
        if summary is None:
            return None
        if summary.get("legacy"):
            return dict(self._loaded_legacy()[index])
        with open(self.records_path, "rb") as handle:
            return self._read_one(handle, summary)

    def _find_summary(self, index: int) -> Summary | None:
        """The item's latest readable summary: the last whole index line that starts with its number
        and points inside results.jsonl."""
        needle = b'{"i":%d,' % index  # _dumps writes "i" first, without spaces
        size = self._records_size()
        for data in whole_lines_backwards(self.index_path):  # a block at a time: the index is 12 MB at 100,000
            at = len(data)
            while (at := data.rfind(needle, 0, at)) >= 0:
                if at > 0 and data[at - 1] != 0x0A:
                    continue
                try:
                    line = json.loads(data[at: data.index(b"\n", at)])
                except ValueError as exc:
                    raise InputError(f"{self.index_path} has a damaged line ({exc}); the run cannot be read") from None
                if line["at"] + line["len"] + 1 <= size:
                    line.pop("i")
                    summary: Summary = line
                    return summary
                self._note_short(index)
        return None

    def _readable(self, index: Any, summary: Mapping[str, Any], size: int) -> bool:
        """Whether an index line names an item of the run and a record inside ``size`` bytes (else noted)."""
        if not self._names_an_item(index):
            return False
        if summary["at"] + summary["len"] + 1 > size:
            self._note_short(index)
            return False
        return True

    def _names_an_item(self, index: Any) -> bool:
        """Whether a line's item number is one of the run's items; one that is not (a string, -3, 10**12: taken,
        every reader allocated a row up to it) is ignored and said in ``damage``."""
        if type(index) is int and 0 <= index and (self.items is None or index < self.items):
            return True
        self._foreign += 1
        self.damage = f"{self.index_path.name} names {self._foreign:,} item(s) the run does not have: ignored"
        return False

    def _note_short(self, index: int) -> None:
        """An index line past the end of results.jsonl (shortened or deleted): not read; the item's
        earlier result, if any, is its latest, as it will be once the owner cuts the index back."""
        self._short.add(index)
        self.damage = (f"{self.records_path.name} is shorter than its index: {len(self._short):,} result(s) unreadable; "
                       "`n2f resume` re-runs them")

    def iter_records(self, summaries: SummaryTable | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """The latest full record of every item (or of those ``summaries`` name), read in file order."""
        summaries = self.summaries() if summaries is None else summaries
        if any(summaries.value(i, "legacy") for i in summaries):
            legacy = self._loaded_legacy()
            yield from ((i, dict(legacy[i])) for i in sorted(summaries))
            return
        if not summaries:
            return
        with open(self.records_path, "rb") as handle:
            for index in sorted(summaries, key=lambda i: summaries.value(i, "at")):
                yield index, self._read_one(handle, summaries[index])

    def _read_one(self, handle: Any, summary: Mapping[str, Any]) -> dict[str, Any]:
        handle.seek(summary["at"])
        data = handle.read(summary["len"])
        try:
            record: dict[str, Any] = json.loads(data)
        except ValueError as exc:
            raise InputError(f"{self.records_path} is damaged at byte {summary['at']} ({exc})") from None
        return record

    def _read_legacy(self) -> LegacyRecords | None:
        """Load an earlier version's ``results.json``; None when there is none (or it just became the new layout)."""
        if self._legacy is not None:
            return self._legacy
        try:
            text = (self.folder / LEGACY).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            table = json.loads(text).get("results", {}) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise InputError(f"{self.folder / LEGACY} is not valid JSON ({exc}); the run cannot be read") from None
        self._legacy = {int(doc_id) - 1: record for doc_id, record in table.items()}
        return self._legacy

    def _loaded_legacy(self) -> LegacyRecords:
        """The earlier version's records that ``summaries`` read (what a ``legacy`` summary points at)."""
        assert self._legacy is not None, "a legacy summary comes from a loaded results.json"
        return self._legacy

    # ------------------------------------------------------------------ writing (owner only)

    def recover(self) -> None:
        """Make the logs whole again after a crash, or convert an earlier version's file; owner only."""
        if not self.index_path.exists() and (legacy := self._read_legacy()) is not None:
            self._convert_legacy(legacy)
        cut_torn_tail(self.index_path)
        cut_after(self.index_path, self._index_end_within(self._records_size()))
        self._summaries, self._read_to, self.damage, self._unfollowed, self._foreign = SummaryTable(), 0, "", array("q"), 0
        summaries = self.summaries()
        self._end = max((s["at"] + s["len"] + 1 for s in summaries.values()), default=0)
        if self._records_size() > self._end:
            cut_after(self.records_path, self._end)
        self._tally = RunTally()
        for item_index, summary in summaries.items():
            self._tally.add(item_index, summary)
        self._write_summary()

    def _write_summary(self) -> None:
        """``summary.json`` for the index as it stands (``sessions.store.summary``); owner only. One that cannot
        be written is no error of the run: the one on disk no longer covers the index, so readers read that."""
        if self._tally is not None:
            with suppress(OSError):
                write_summary(self.folder, self._tally, self.index_path.stat().st_size, self._end)

    def _records_size(self) -> int:
        try:
            return self.records_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _index_end_within(self, size: int) -> int:
        """The length of the index's lines that point inside the first ``size`` bytes of the records.

        Offsets grow line by line (every batch is appended at the end), so the lines past a
        shortened (or deleted) results.jsonl are the last ones: they are cut, and their
        items are pending again."""
        data = read_from(self.index_path, 0)
        lines, used = complete_lines(data)
        if not lines or _inside(lines[-1], size):
            return used
        offset = 0
        for line in lines:
            if not _inside(line, size):
                return offset
            offset += len(line) + 1
        return used

    def _convert_legacy(self, legacy: LegacyRecords) -> None:
        """Write the new logs from ``results.json``: records first, the index (the switch readers look for) last."""
        records, index = bytearray(), bytearray()
        for item_index, record in sorted(legacy.items()):
            line = _dumps(record)
            index += _dumps({"i": item_index, "at": len(records), "len": len(line), **summary_of(record)}) + b"\n"
            records += line + b"\n"
        atomic_write_bytes(self.records_path, bytes(records))
        atomic_write_bytes(self.index_path, bytes(index))
        (self.folder / LEGACY).unlink(missing_ok=True)
        fsync_folder(self.folder)
        self._legacy = None

    def append(self, batch: Mapping[int, Mapping[str, Any]]) -> None:
        """Store a batch durably; raise OSError (and refuse later batches) if any part fails."""
        if self._broken:
            raise OSError(f"an earlier write failed ({self._broken})")
        if not batch:
            return
        records, index = bytearray(), bytearray()
        offset = self._end
        summaries: dict[int, Any] = {}
        for item_index, record in sorted(batch.items()):
            line = _dumps(record)
            summaries[item_index] = summary = summary_of(record)
            index += _dumps({"i": item_index, "at": offset + len(records), "len": len(line), **summary}) + b"\n"
            records += line + b"\n"
        try:
            fd_records, fd_index = self._fds or self._open_for_append()
            append_durably(fd_records, bytes(records))
            self._end += len(records)
            append_durably(fd_index, bytes(index))
        except OSError as exc:
            self._broken = exc.strerror or str(exc)
            raise
        # the summaries are not kept here: whoever asks (a live inspector) tails them from
        # the file like any reader; a headless run holds only its tally (a byte or so per item)
        if self._tally is not None:
            for item_index, summary in summaries.items():
                self._tally.add(item_index, summary)
            self._write_summary()

    def _open_for_append(self) -> tuple[int, int]:
        created = not self.records_path.exists() or not self.index_path.exists()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd_records = os.open(self.records_path, flags, 0o644)
        try:
            self._fds = fd_records, os.open(self.index_path, flags, 0o644)
        except OSError:
            os.close(fd_records)
            raise
        if created:
            fsync_folder(self.folder)
        return self._fds

    def close(self) -> None:
        for fd in self._fds or ():
            os.close(fd)
        self._fds = None
