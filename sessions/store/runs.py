"""Runs on disk: one folder per run, each file with one owner.

Layout of ``runs/<run id>/``:
  meta.json             engine, settings, seed, model, templates, status (atomic JSON)
  items.jsonl, items.idx, items.brief.jsonl, items.brief.idx, items.ids, items.keys, shared.jsonl
                        the items, written once, each shared part once  (sessions.store.items)
  results.jsonl         full result records, append-only   } see sessions.store.results_log
  results.index.jsonl   one short summary per record       } (and .snap: a reader's copy, summary_snapshot)
  summary.json          the run's figures for lists of runs (sessions.store.summary), replaced per batch
  annotations.jsonl     people's tags and notes, append-only, several writers (sessions.study.annotations)
  report.json           the last report's figures, keyed by what they came from (sessions.reports.kept_report)
  attempts.json         re-runs from the prompt editor (sessions.run.attempts)
  lock                  held (flock) by the process that owns the run's results

Only the owner (the process holding ``lock``) appends results, cuts what a dead writer
left half done and removes temp files, and only those of dead processes. Readers (the
inspector, ``show``, ``report``, ``runs``) never delete, move or rewrite the run's data;
one that read the whole index may replace results.index.snap, one that made a report report.json.

The owner buffers finished records for at most a second; a crash or ``kill -9`` can lose
only those, and ``resume`` re-runs whatever has no result or ended in ``error``. A write
that fails (disk full, permissions, a vanished folder) raises ``PersistError``: the run
stops with what was stored kept.
"""

from __future__ import annotations

import fcntl
import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from engines.core import Item
from sessions.study.annotations import AnnotationLog
from sessions.errors import InputError, RuntimeFailure
from sessions.store.files import atomic_write_text, clean_dead_temp_files, file_size, now_iso, overwrite_in_place
from sessions.paths import ensure_writable, runs_dir
from sessions.reports.describe import describe_run
from sessions.store.places import RecordPlaces, record_places
from sessions.store.results_log import INDEX, LEGACY, RECORDS, ResultsLog
from sessions.store.summary_line import Summary, summary_of
from sessions.store.watch import run_signature
from sessions.store.index import list_run_meta, resolve_run, validate_name
from sessions.store.items import ITEMS_FORMAT, Brief, RunItems, write_items
from sessions.store.summary import RunSummary, read_summary, summarize
from sessions.store.summary_table import SummaryTable

META_SLACK = 256  # spaces after meta.json's JSON: room for a last status when the disk is full
FLUSH_SECONDS = 1.0
FLUSH_ITEMS = 2000


class RunLocked(InputError):
    pass


class PersistError(RuntimeFailure):
    """Results could not be written: the run stops, keeping what was stored."""


class RunStore:
    """One run's files: readable by any process, results written only by the lock holder."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.meta: dict[str, Any] = self._read_meta()
        self._log = ResultsLog(folder, int(self.meta["total"]) if "total" in self.meta else None)
        self._buffer: dict[int, dict[str, Any]] = {}
        self._last_flush = time.monotonic()
        # A runner flushes from a worker thread so that appending never stalls the event
        # loop (and a UI on it); one lock orders the log's reads and writes across threads.
        self.auto_flush = True
        self._buffer_lock = threading.Lock()
        self._log_lock = threading.Lock()
        self._lock_handle: Any = None
        self._followed: tuple[tuple[int, int], ...] | None = None  # run_signature at the last ``follow``
        self.item_files = RunItems(folder, self.meta.get("engine", ""), self.label, int(self.meta.get("items_format", 1)))

    # ---------------------------------------------------------------- creation

    @classmethod
    def create(
        cls,
        engine: str,
        settings: Mapping[str, Any],
        seed: int,
        model: str,
        backend: Mapping[str, Any],
        items: Iterable[Item],
        templates: Mapping[str, str],
        concurrency: int,
        name: str = "", extra: Mapping[str, Any] | None = None,
        report_keys: Sequence[str] | None = None,  # the engine's (EngineParts.report_keys): items.keys is written
    ) -> "RunStore":
        base = ensure_writable(runs_dir())
        if name:
            validate_name(name)
            if any(m.get("name") == name for m in list_run_meta()):
                raise InputError(f"a run named {name!r} exists already; choose another --name")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_id = f"{engine}-{stamp}-{secrets.token_hex(2)}"
        folder = base / run_id
        folder.mkdir()
        total = write_items(folder, items, engine, report_keys)
        meta = {
            "id": run_id,
            "name": name,
            "engine": engine,
            "settings": dict(settings),
            "seed": seed,
            "model": model,
            "backend": dict(backend),
            "templates": dict(templates),
            "concurrency": concurrency,
            "total": total,
            "items_format": ITEMS_FORMAT,
            "status": "created",
            "created": now_iso(),
            "updated": now_iso(),
            **(extra or {}),
        }
        meta["description"] = describe_run(meta).to_json()  # lists of runs show it without importing the engine
        atomic_write_text(folder / "meta.json", json.dumps(meta, indent=2, ensure_ascii=False))
        return cls(folder)

    @classmethod
    def open(cls, ref: str) -> "RunStore":
        return cls(resolve_run(ref))

    # ------------------------------------------------------------------- meta

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def label(self) -> str:
        return str(self.meta.get("name") or self.meta["id"])

    def _read_meta(self) -> dict[str, Any]:
        path = self.folder / "meta.json"
        try:
            meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"{self.folder.name}: not a run (meta.json missing)") from None
        except ValueError as exc:
            raise InputError(f"{path} is not valid JSON ({exc})") from None
        return meta

    def refresh_meta(self) -> bool:
        """Re-read meta.json (another process's status); whether it changed. Reads nothing else."""
        try:
            meta = self._read_meta()
        except InputError:  # being replaced this instant: read again on the next look
            return False
        changed, self.meta = meta != self.meta, meta
        return changed

    def update_meta(self, **values: Any) -> None:
        """Save the metadata atomically. On a full disk (no room for the temp file) a status still
        reaches the disk: the file is rewritten in place, into the slack of spaces every save leaves
        at its end (JSON ignores them), so a stopped run is never left saying ``running``."""
        self.meta.update(values, updated=now_iso())
        text = json.dumps(self.meta, indent=2, ensure_ascii=False) + "\n"
        try:
            atomic_write_text(self.folder / "meta.json", text + " " * META_SLACK)
        except OSError as exc:
            if not overwrite_in_place(self.folder / "meta.json", text.encode("utf-8")):
                raise PersistError(f"run {self.label}: could not save its metadata ({exc.strerror or exc})") from None

    # ------------------------------------------------------------------ items
    # read by ``item_files`` (sessions.store.items), written once by ``create``

    @property
    def total(self) -> int:
        return int(self.meta.get("total", 0))

    def items(self) -> list[Item]:
        return self.item_files.items()

    def item(self, index: int) -> Item:
        return self.item_files.item(index)

    def briefs(self) -> list[Brief]:
        return self.item_files.briefs()

    def iter_briefs(self) -> Iterator[Brief]:
        return self.item_files.iter_briefs()

    def brief_items(self) -> list[Item]:
        return self.item_files.brief_items()

    def iter_brief_items_at(self, indices: Iterable[int]) -> Iterator[tuple[int, Item]]:
        return self.item_files.iter_brief_items_at(indices)

    def item_ids(self) -> Sequence[str]:
        return self.item_files.item_ids()

    def find_item(self, item_id: str) -> int | None:
        return self.item_files.find_item(item_id)

    # ---------------------------------------------------------------- results

    def summaries(self) -> SummaryTable:
        """Item index -> the latest result's summary (status, scores, tag codes, attempt), buffered ones included."""
        with self._log_lock:
            stored = self._log.summaries().copy()
        with self._buffer_lock:
            stored.update((i, summary_of(r)) for i, r in self._buffer.items())
        return stored

    def record(self, index: int) -> dict[str, Any] | None:
        """One item's latest full record, reading nothing else."""
        with self._buffer_lock:
            if index in self._buffer:
                return self._buffer[index]
        with self._log_lock:
            return self._log.record(index)

    def results(self) -> dict[int, dict[str, Any]]:
        """Item index -> latest full record, buffered ones included (reads the whole log: reports, exports)."""
        return dict(self.iter_results())

    def iter_results(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(item index, latest full record) pairs read one at a time in file order, buffered ones last.

        Reads a snapshot of the index, then the records it points at: appends meanwhile
        never move those bytes, so the log's lock is not held while the caller works.
        """
        with self._buffer_lock:
            buffered = dict(self._buffer)
        with self._log_lock:
            snapshot = self._log.summaries().copy()
        for index in buffered:
            snapshot.pop(index, None)
        yield from self._log.iter_records(snapshot)
        yield from buffered.items()

    def record_places(self) -> RecordPlaces | None:
        """Where each item's latest record lies (16 bytes an item, ``RecordPlaces``), from one pass over
        the index; None while this process holds records not yet flushed, or for an earlier version's run."""
        with self._buffer_lock:
            if self._buffer:
                return None
        with self._log_lock:
            return record_places(self._log)

    def add_result(self, index: int, record: dict[str, Any]) -> None:
        """Buffer one item's record; flushed in batches at least once a second."""
        with self._buffer_lock:
            self._buffer[index] = record
            size = len(self._buffer)
        if self.auto_flush and (size >= FLUSH_ITEMS or time.monotonic() - self._last_flush >= FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        """Append buffered records in one durable batch (safe from a worker thread); owner only. The batch
        leaves the buffer only once it is on disk; a failed write raises PersistError and the log refuses
        further writes until the run is reopened."""
        self._require_owner()
        with self._log_lock:
            with self._buffer_lock:
                batch = dict(self._buffer)
            self._last_flush = time.monotonic()
            if not batch:
                return
            try:
                self._log.append(batch)
            except OSError as exc:
                raise PersistError(
                    f"run {self.label}: could not save results ({exc.strerror or exc}); what was saved is kept, "
                    f"`n2f resume {self.label}` finishes the run"
                ) from None
            with self._buffer_lock:
                for index, record in batch.items():
                    if self._buffer.get(index) is record:
                        del self._buffer[index]

    def discard_buffer(self) -> None:
        """Forget records that could not be stored; their items stay pending."""
        with self._buffer_lock:
            self._buffer.clear()

    def replace_all_results(self, records: Mapping[int, dict[str, Any]]) -> None:
        """Store new versions of these records (rescore): appended, so the latest wins and nothing is rewritten."""
        with self._buffer_lock:
            self._buffer.update(records)
        self.flush()

    def pending_indices(self) -> list[int]:
        """Items with no result yet or whose last attempt hit an infrastructure error."""
        done = self.summaries()
        return [i for i in range(self.total) if done.value(i, "status", "error") == "error"]

    @property
    def damage(self) -> str:
        """What reading the results found damaged (a results.jsonl shorter than its index), or ``""``."""
        return self._log.damage

    def follow(self, hand_over: bool = True) -> tuple[bool, dict[int, Summary]]:
        """What another process wrote since the last call: (the metadata changed and was re-read, the result
        summaries appended meanwhile). A stat of the files a writer changes first: when none changed nothing
        is read, so a reader may call this every second on any run. Not ``hand_over``: the summaries are read
        and marked followed, none returned (a reader reading them all next, ``summaries``, follows from here)."""
        signature = run_signature(self.folder)
        if signature == self._followed:
            return False, {}
        meta_changed = self._followed is None or signature[0] != self._followed[0]
        self._followed = signature
        if meta_changed:
            try:
                self.meta = self._read_meta()
            except InputError:  # being replaced this instant: read again on the next look
                self._followed = None
                meta_changed = False
        with self._log_lock:
            fresh = self._log.take_unfollowed(hand_over)
        return meta_changed, fresh

    def summary(self) -> RunSummary:
        """Done count, errors, accuracy and token usage (home screen, ``n2f runs``): from summary.json when it
        covers the whole index (one small file, ``sessions.store.summary``), else from the index's summaries."""
        with self._buffer_lock:
            buffered = bool(self._buffer)
        sizes = [file_size(self.folder / name) for name in (INDEX, RECORDS, LEGACY)]
        if not buffered and sizes[2] < 0:
            stored = read_summary(self.folder, max(sizes[0], 0), max(sizes[1], 0))
            if stored is not None:
                return stored
        return summarize(self.summaries())

    # ------------------------------------------------------------------- lock

    def acquire(self) -> None:
        """Own the run: hold its lock, then make its files whole after whatever a dead owner left."""
        handle = open(self.folder / "lock", "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunLocked(f"run {self.label} is being written by another process") from None
        self._lock_handle = handle
        try:
            clean_dead_temp_files(self.folder)
            with self._log_lock:
                self._log.recover()
            self.item_files.repair()
        except OSError as exc:
            self.close()
            raise PersistError(f"run {self.label}: its files cannot be repaired ({exc.strerror or exc})") from None

    @property
    def owned(self) -> bool:
        return self._lock_handle is not None

    def _require_owner(self) -> None:
        if self._lock_handle is None:
            raise RuntimeError(f"run {self.label}: results are written only by the process holding its lock")

    def close(self) -> None:
        """Flush (if owner) and let the run go; the lock is released even when the flush fails."""
        try:
            if self._lock_handle is not None:
                self.flush()
        finally:
            with self._log_lock:
                self._log.close()
            self.item_files.close()
            if self._lock_handle is not None:
                fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
                self._lock_handle.close()
                self._lock_handle = None

    def annotations(self, annotator: str = "") -> AnnotationLog:
        """The run's annotation log; the events it writes record the run's fingerprint and the labelled output."""
        from sessions.store.fingerprint import Stamper

        return AnnotationLog(self.folder, annotator, stamp=Stamper(self))


# ------------------------------------------------------------------ finding runs

def iter_runs() -> Iterable[RunStore]:
    for meta in list_run_meta():
        yield RunStore(Path(meta["_folder"]))


def delete_run(ref: str) -> str:
    """Remove a run folder (results, items and annotations); refused while a process runs it."""
    import shutil

    store = RunStore.open(ref)
    store.acquire()
    label = store.label
    store.close()
    shutil.rmtree(store.folder)
    return label
