"""Runs on disk: one folder per run, every write atomic.

Layout of ``runs/<run id>/``:
  meta.json         engine, settings, seed, model, templates, status (atomic JSON)
  items.jsonl       the run's items, written once when the run is created
  results.json      TinyDB, one document per finished item (doc id = item index + 1)
  annotations.json  TinyDB, a person's tags and notes: rewriting results never touches it
  lock              held (flock) by the process running the run

A crash or ``kill -9`` can lose only results still buffered in memory (at most about
one second of work); ``resume`` re-runs whatever has no result or ended in ``error``.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from tinydb import TinyDB
from tinydb.storages import Storage
from tinydb.table import Document

from engines.core import Item
from sessions.errors import InputError
from sessions.paths import ensure_writable, runs_dir

FLUSH_SECONDS = 1.0
FLUSH_ITEMS = 2000
TMP_MARK = ".tmp-"


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temp file in the same folder, fsync, then rename over the target."""
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def clean_stale_temp_files(folder: Path) -> None:
    for stale in folder.glob(f"*{TMP_MARK}*"):
        stale.unlink(missing_ok=True)


class AtomicJSONStorage(Storage):
    """TinyDB storage whose every write is atomic, keeping the last state in memory.

    TinyDB re-reads storage on every operation; serving reads from memory keeps a
    batch insert O(batch) in parsing cost, and the atomic replace means a reader or a
    crash never sees a half-written file.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._data: dict[str, Any] | None = None

    def read(self) -> dict[str, Any] | None:
        if self._data is None:
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                return None
            if not text.strip():
                return None
            try:
                self._data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{self.path} is not valid JSON ({exc}); the run cannot be read") from None
        return self._data

    def write(self, data: dict[str, Any]) -> None:
        try:
            atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        except BaseException:
            self._data = None
            raise
        self._data = data

    def close(self) -> None:
        self._data = None


def open_db(path: Path) -> TinyDB:
    return TinyDB(path, storage=AtomicJSONStorage)


class RunLocked(InputError):
    pass


class RunStore:
    """One run's files, with buffered, batched, atomic result writes."""

    def __init__(self, folder: Path):
        self.folder = folder
        clean_stale_temp_files(folder)
        self.meta: dict[str, Any] = self._read_meta()
        self._db = open_db(folder / "results.json")
        self._results = self._db.table("results")
        self._buffer: dict[int, dict[str, Any]] = {}
        self._last_flush = time.monotonic()
        # A runner flushes from a worker thread so that rewriting a large results file
        # never stalls the event loop (and a UI on it); buffering only takes the short lock.
        self.auto_flush = True
        self._buffer_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._lock_handle = None
        self._items: list[Item] | None = None

    # ---------------------------------------------------------------- creation

    @classmethod
    def create(
        cls,
        engine: str,
        settings: Mapping[str, Any],
        seed: int,
        model: str,
        backend: Mapping[str, Any],
        items: list[Item],
        templates: Mapping[str, str],
        concurrency: int,
        name: str = "",
        extra: Mapping[str, Any] | None = None,
    ) -> "RunStore":
        base = ensure_writable(runs_dir())
        if name:
            validate_name(name)
            if any(m.get("name") == name for m in list_run_meta()):
                raise InputError(f"a run named {name!r} exists already; choose another --name")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        run_id = f"{engine}-{stamp}-{secrets.token_hex(2)}"
        folder = base / run_id
        folder.mkdir()
        atomic_write_text(folder / "items.jsonl", "".join(json.dumps(i.to_json(), ensure_ascii=False) + "\n" for i in items))
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
            "total": len(items),
            "status": "created",
            "created": now_iso(),
            "updated": now_iso(),
            **(extra or {}),
        }
        atomic_write_text(folder / "meta.json", json.dumps(meta, indent=2, ensure_ascii=False))
        store = cls(folder)
        store._items = items
        return store

    @classmethod
    def open(cls, ref: str) -> "RunStore":
        return cls(resolve_run(ref))

    # ------------------------------------------------------------------- meta

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def label(self) -> str:
        return self.meta.get("name") or self.meta["id"]

    def _read_meta(self) -> dict[str, Any]:
        path = self.folder / "meta.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"{self.folder.name}: not a run (meta.json missing)") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not valid JSON ({exc})") from None

    def update_meta(self, **values: Any) -> None:
        self.meta.update(values, updated=now_iso())
        atomic_write_text(self.folder / "meta.json", json.dumps(self.meta, indent=2, ensure_ascii=False))

    # ------------------------------------------------------------------ items

    def items(self) -> list[Item]:
        if self._items is None:
            path = self.folder / "items.jsonl"
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:
                raise InputError(f"run {self.label}: items.jsonl is missing") from None
            self._items = [Item.from_json(json.loads(line)) for line in lines if line.strip()]
        return self._items

    # ---------------------------------------------------------------- results

    def results(self) -> dict[int, dict[str, Any]]:
        """Item index -> stored record, including buffered ones."""
        with self._write_lock:
            stored = {doc.doc_id - 1: dict(doc) for doc in self._results.all()}
            with self._buffer_lock:
                stored.update(self._buffer)
        return stored

    def add_result(self, index: int, record: dict[str, Any]) -> None:
        """Buffer one item's record; flushed in batches at least once a second."""
        with self._buffer_lock:
            self._buffer[index] = record
            size = len(self._buffer)
        if self.auto_flush and (size >= FLUSH_ITEMS or time.monotonic() - self._last_flush >= FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        """Write buffered records in one atomic batch (safe to call from a worker thread)."""
        with self._write_lock:
            with self._buffer_lock:
                batch, self._buffer = self._buffer, {}
            self._last_flush = time.monotonic()
            if not batch:
                return
            replaced = [i + 1 for i in batch if self._results.contains(doc_id=i + 1)]
            if replaced:
                self._results.remove(doc_ids=replaced)
            self._results.insert_multiple(Document(record, doc_id=i + 1) for i, record in sorted(batch.items()))

    def replace_all_results(self, records: Mapping[int, dict[str, Any]]) -> None:
        """Rewrite every result in one atomic write (rescore)."""
        self.flush()
        with self._write_lock:
            self._results.truncate()
            self._results.insert_multiple(Document(r, doc_id=i + 1) for i, r in sorted(records.items()))

    def pending_indices(self) -> list[int]:
        """Items with no result yet or whose last attempt hit an infrastructure error."""
        done = self.results()
        return [i for i in range(len(self.items())) if i not in done or done[i].get("status") == "error"]

    # ------------------------------------------------------------------- lock

    def acquire(self) -> None:
        """Hold the run for this process so two processes never write it at once."""
        handle = open(self.folder / "lock", "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunLocked(f"run {self.label} is being written by another process") from None
        self._lock_handle = handle

    def close(self) -> None:
        self.flush()
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None
        self._db.close()

    def annotations(self) -> "AnnotationStore":
        return AnnotationStore(self.folder / "annotations.json")


class AnnotationStore:
    """A person's tags and notes for a run, as an event log in its own file.

    Every event is written immediately and atomically: a person's work is never
    buffered, and rescoring a run never opens this file.
    """

    KINDS = ("tag_add", "tag_remove", "note", "reviewed")

    def __init__(self, path: Path):
        clean_stale_temp_files(path.parent)
        self._db = open_db(path)
        self._events = self._db.table("events")

    def add(self, item_id: str, kind: str, code: str = "", text: str = "", label: str = "") -> None:
        if kind not in self.KINDS:
            raise ValueError(f"unknown annotation kind {kind!r}")
        self._events.insert(
            {"item": item_id, "kind": kind, "code": code, "label": label, "text": text, "time": now_iso(), "source": "manual"}
        )

    def events(self, item_id: str | None = None) -> list[dict[str, Any]]:
        events = [dict(e) for e in self._events.all()]
        return [e for e in events if item_id is None or e["item"] == item_id]

    def effective(self) -> dict[str, dict[str, Any]]:
        """Item id -> {"added": {code: label}, "removed": set, "notes": [...], "reviewed": bool}."""
        state: dict[str, dict[str, Any]] = {}
        for e in self.events():
            s = state.setdefault(e["item"], {"added": {}, "removed": set(), "notes": [], "reviewed": False})
            if e["kind"] == "tag_add":
                s["added"][e["code"]] = e.get("label") or e["code"]
                s["removed"].discard(e["code"])
            elif e["kind"] == "tag_remove":
                s["added"].pop(e["code"], None)
                s["removed"].add(e["code"])
            elif e["kind"] == "note":
                s["notes"].append(e["text"])
            elif e["kind"] == "reviewed":
                s["reviewed"] = True
        return state

    def close(self) -> None:
        self._db.close()


# ------------------------------------------------------------------ finding runs

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def validate_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise InputError(f"run name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")


def list_run_meta() -> list[dict[str, Any]]:
    """Metadata of every run in the store, oldest first; unreadable folders are skipped."""
    base = runs_dir()
    if not base.is_dir():
        return []
    metas = []
    for folder in base.iterdir():
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        meta["_folder"] = str(folder)
        metas.append(meta)
    return sorted(metas, key=lambda m: (m.get("created", ""), m.get("id", "")))


def resolve_run(ref: str) -> Path:
    """A run folder from its id, its name, a unique id prefix, or ``last``."""
    metas = list_run_meta()
    if not metas:
        raise InputError(f"no run {ref!r}: the store has no runs yet (n2f run ENGINE)")
    if ref in ("last", "latest"):
        return Path(metas[-1]["_folder"])
    for key in ("id", "name"):
        hits = [m for m in metas if m.get(key) == ref]
        if hits:
            return Path(hits[-1]["_folder"])
    hits = [m for m in metas if m["id"].startswith(ref)]
    if len(hits) == 1:
        return Path(hits[0]["_folder"])
    if len(hits) > 1:
        raise InputError(f"run {ref!r} is ambiguous: {', '.join(m['id'] for m in hits[:5])}")
    raise InputError(f"no run {ref!r}; see n2f runs")


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
