"""The response cache: successful model replies keyed by what produced them.

A small sqlite3 key-value store (stdlib, WAL mode so readers never block the writer and
several processes may share one file). The key is the SHA-256 of a canonical JSON of
the key parts the caller passes -- the backends pass ``model``, ``base_url``,
``messages``, ``params`` and ``attempt`` -- never an API key. Values are small JSON
objects (``text``, ``usage``, the served model). Errors are never cached: callers only
``put`` successful completions. Each row keeps the key's ``model`` and its time, so
that ``n2f cache clear --model M --older-than 7d`` can pick rows, and an ``expire``
(seconds, the config's ``[cache] expire_days``) turns older rows into misses: a model
redeployed under the same name answers afresh. With ``refresh`` every lookup misses and
every reply is stored anew (``--refresh-cache``). The file lives under the user cache
directory (``sessions.paths.cache_path``).

Stores are written in batches: ``put`` keeps the entry in memory (where ``get`` finds
it at once) and one transaction writes every ``PUT_BATCH`` entries, or whatever waited
a second, or everything on ``flush``/``close``. A commit per reply cost ~70 us on the
event loop between a reply and the next request, the one place where every
microsecond delays other calls; a crash can lose at most one batch of cache entries,
never a result (those are in the run store).

The cache is an optimisation, so it degrades instead of failing a run: a file that is
not a database (or is damaged) is moved aside to ``<name>.corrupt-<timestamp>`` and a
fresh cache started, with a warning; a locked database turns a lookup into a miss and
a store into a no-op, also with a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Mapping

from sessions.errors import InputError

SCHEMA_VERSION = 2  # 2: the model column
PUT_BATCH = 64
PUT_SECONDS = 1.0
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def cache_key(key_parts: Any) -> str:
    """SHA-256 hex digest of the canonical JSON of ``key_parts`` (any JSON-serialisable value)."""
    canonical = json.dumps(key_parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return (code & 0xFF) in _CORRUPT_CODES
    # Older Pythons: corruption surfaces as the bare DatabaseError; "locked", "readonly"
    # and friends are OperationalError (a subclass) and must not be taken for corruption.
    return type(exc) is sqlite3.DatabaseError


class ResponseCache:
    """A sqlite3-backed map from key parts to a JSON object.

    Safe to share between asyncio tasks and threads of one process (a lock serialises the
    short statements on the one connection) and between processes (WAL, busy timeout).
    """

    def __init__(self, path: str | os.PathLike[str], busy_timeout: float = 5.0, *, refresh: bool = False,
                 expire: float | None = None):
        self.path = Path(path)
        self.refresh = refresh
        self.expire = expire
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._warned_busy = False
        self._pending: dict[str, tuple[str, float, str]] = {}  # key -> (value JSON, created, model), not yet written
        self._written_at = time.monotonic()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the cache folder {self.path.parent}: {exc.strerror or exc}") from None
        self._open()

    # ------------------------------------------------------------------ opening

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            str(self.path), timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL, model TEXT NOT NULL DEFAULT '')"
            )
            columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
            if "model" not in columns:  # a version 1 file
                conn.execute("ALTER TABLE responses ADD COLUMN model TEXT NOT NULL DEFAULT ''")
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("SELECT count(*) FROM responses WHERE key = ''").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> None:
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise InputError(f"cannot open the response cache {self.path}: {exc}") from None
            self._move_aside(exc)
            try:
                self._conn = self._connect()
            except sqlite3.DatabaseError as exc2:
                raise InputError(f"cannot open the response cache {self.path}: {exc2}") from None

    def _move_aside(self, exc: BaseException) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        try:
            os.replace(self.path, target)
        except FileNotFoundError:  # another process moved it first
            pass
        for suffix in ("-wal", "-shm"):
            try:
                os.replace(f"{self.path}{suffix}", f"{target}{suffix}")
            except FileNotFoundError:
                pass
        warnings.warn(
            f"response cache {self.path} is unreadable ({exc}); moved it to {target.name} and started a fresh one",
            RuntimeWarning,
            stacklevel=3,
        )

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        """A damaged file found after opening: move it aside and start fresh."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._move_aside(exc)
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc2:
            warnings.warn(f"response cache {self.path} disabled: {exc2}", RuntimeWarning, stacklevel=3)
            self._conn = None

    def _busy(self, exc: sqlite3.Error) -> None:
        if not self._warned_busy:
            self._warned_busy = True
            message = f"response cache {self.path} unavailable ({exc}); continuing without it"
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    # ------------------------------------------------------------------- access

    def get(self, key_parts: Any) -> dict[str, Any] | None:
        """The stored value for these key parts, or None on a miss (always, with ``refresh``)."""
        if self.refresh:
            return None
        key = cache_key(key_parts)
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                text = pending[0]
            else:
                if self._conn is None:
                    return None
                try:
                    row = self._conn.execute("SELECT value, created FROM responses WHERE key = ?", (key,)).fetchone()
                except sqlite3.DatabaseError as exc:
                    self._failed(exc)
                    return None
                if row is None or (self.expire is not None and row[1] < time.time() - self.expire):
                    return None
                text = row[0]
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def put(self, key_parts: Any, value: Mapping[str, Any]) -> None:
        """Store a JSON-serialisable mapping under these key parts (replacing any previous one)."""
        key = cache_key(key_parts)
        text = json.dumps(dict(value), ensure_ascii=False, separators=(",", ":"))
        model = str(key_parts.get("model", "")) if isinstance(key_parts, Mapping) else ""
        with self._lock:
            self._pending[key] = (text, time.time(), model)
            if len(self._pending) >= PUT_BATCH or time.monotonic() - self._written_at >= PUT_SECONDS:
                self._write_pending()

    def flush(self) -> None:
        """Write the entries still held in memory."""
        with self._lock:
            self._write_pending()

    def _write_pending(self) -> None:
        """One transaction for every pending entry (the caller holds the lock)."""
        rows = [(key, text, created, model) for key, (text, created, model) in self._pending.items()]
        self._pending.clear()
        self._written_at = time.monotonic()
        if not rows or self._conn is None:
            return
        try:
            with self._conn:
                self._conn.execute("BEGIN")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO responses (key, value, created, model) VALUES (?, ?, ?, ?)", rows
                )
        except sqlite3.DatabaseError as exc:
            self._failed(exc)

    def _failed(self, exc: sqlite3.DatabaseError) -> None:
        if _is_corruption(exc):
            self._recover(exc)
        else:
            self._busy(exc)

    def __len__(self) -> int:
        with self._lock:
            self._write_pending()
            if self._conn is None:
                return 0
            try:
                return int(self._conn.execute("SELECT count(*) FROM responses").fetchone()[0])
            except sqlite3.DatabaseError:
                return 0

    def info(self) -> dict[str, Any]:
        """Entries, bytes on disk, oldest and newest entry (Unix seconds) and entries per model."""
        with self._lock:
            self._write_pending()
            if self._conn is None:
                return {"path": str(self.path), "entries": 0, "bytes": 0, "oldest": None, "newest": None, "models": {}}
            count, oldest, newest = self._conn.execute(
                "SELECT count(*), min(created), max(created) FROM responses").fetchone()
            models = dict(self._conn.execute(
                "SELECT model, count(*) FROM responses GROUP BY model ORDER BY count(*) DESC").fetchall())
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {"path": str(self.path), "entries": int(count), "bytes": size, "oldest": oldest, "newest": newest,
                "models": models, "expire": self.expire}

    def clear(self, model: str | None = None, older_than: float | None = None) -> int:
        """Delete the entries of ``model`` (every model when None) older than ``older_than`` seconds; how many."""
        where: list[str] = []
        args: list[str | float] = []
        if model is not None:
            where.append("model = ?")
            args.append(model)
        if older_than is not None:
            where.append("created < ?")
            args.append(time.time() - older_than)
        with self._lock:
            self._write_pending()
            if self._conn is None:
                return 0
            deleted = self._conn.execute(
                "DELETE FROM responses" + (" WHERE " + " AND ".join(where) if where else ""), args).rowcount
            try:
                self._conn.execute("VACUUM")  # give the space back; another process reading it may prevent that
            except sqlite3.OperationalError:
                pass
        return int(deleted)

    def close(self) -> None:
        with self._lock:
            self._write_pending()
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
