"""People's tags and notes on a run: an append-only event log that several processes write at once.

``annotations.jsonl`` holds one event per line::

    {"id": "5f0c…", "item": "dedc-004", "kind": "tag_add", "code": "omission", "label": "Omission",
     "text": "", "time": "2026-12-01T20:41:07.123+00:00", "source": "manual", "annotator": "ada",
     "blind": false, "fingerprint": "9c1d…", "output": "4e07…"}

Kinds: ``tag_add`` / ``tag_remove`` (a person's correction of the automatic tags, or with
``blind`` their own label from scratch), ``reviewed`` (the item is done: its labels are the
person's judgement), ``note``, and ``settle`` (an adjudicator's final labels, ``codes``; the
latest settle of an item wins). An item is *reviewed by* a person once they tag, untag or
mark it; a note alone is not a review. That one definition is used by every count.
``fingerprint`` and ``output`` say which run and which output the event was made on
(``sessions.store.fingerprint``); an event imported with ``--force`` on other outputs has
``"forced": true``.

A writer takes an exclusive ``flock`` on ``annotations.lock``, appends its lines in one
write and fsyncs before letting go, so two app windows (or the app and a script) never
lose or interleave each other's events. Nothing is ever rewritten: a person's work is
never buffered, and rescoring a run never opens this file. Readers take no lock; they
tail the file from where they last stopped, so events written by another process show
up on the next ``refresh``. Every event has an id, and an id seen twice counts once.

A run written by an earlier version keeps its events in ``annotations.json`` (a TinyDB
table); it is read as it is, and the first writer converts it under the lock.
"""

from __future__ import annotations

import fcntl
import getpass
import json
import os
import secrets
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from sessions.errors import InputError, RuntimeFailure
from sessions.store.files import append_durably, atomic_write_bytes, complete_lines, cut_torn_tail, now_iso, read_from

LOG = "annotations.jsonl"
LOCK = "annotations.lock"
LEGACY = "annotations.json"
KINDS = ("tag_add", "tag_remove", "note", "reviewed", "settle")
REQUIRED = ("id", "item", "kind", "annotator", "time")  # non-empty text in every event
REVIEW_KINDS = ("tag_add", "tag_remove", "reviewed")


def login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def resolve_annotator(name: str | None = None) -> str:
    """Who annotation events are recorded for: ``--annotator``, else the config's ``annotator``, else the login name.

    A config file that cannot be read falls back to the login name here: it is reported
    by the commands that need the rest of it (starting runs)."""
    from sessions.config import load_config
    from sessions.errors import N2FError

    chosen = (name or "").strip()
    if not chosen:
        try:
            chosen = load_config().annotator.strip()
        except N2FError:
            chosen = ""
    chosen = chosen or login_name()
    if any(ch.isspace() or not ch.isprintable() for ch in chosen) or len(chosen) > 64:
        raise InputError(f"annotator name {chosen!r} must be up to 64 printable characters without spaces")
    return chosen


@dataclass
class ItemMarks:
    """What people's events say about one item, in the order they were written."""

    added: dict[str, str] = field(default_factory=dict)  # code -> label
    removed: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    reviewed: bool = False  # tagged, untagged or marked done (see the module docstring)
    blind: bool = False  # labelled without seeing the automatic tags: the labels start from none

    def apply(self, event: dict[str, Any]) -> None:
        kind, code = event["kind"], event.get("code", "")
        if kind in REVIEW_KINDS:
            self.reviewed = True
            self.blind = self.blind or bool(event.get("blind"))
        if kind == "tag_add":
            self.added[code] = event.get("label") or code
            self.removed.discard(code)
        elif kind == "tag_remove":
            self.added.pop(code, None)
            self.removed.add(code)
        elif kind == "note":
            self.notes.append(event.get("text", ""))

    def labels(self, auto: Iterable[str]) -> set[str]:
        """This person's label set for the item: the automatic codes corrected, or their own when blind."""
        return ((set() if self.blind else set(auto)) - self.removed) | set(self.added)


class AnnotationLog:
    """One run's annotation events: append from any process, read what every process wrote."""

    def __init__(self, folder: Path, annotator: str = "", stamp: Callable[[str], dict[str, str]] | None = None):
        self.folder = folder
        self._stamp = stamp  # item id -> the fields saying what the event was made on (sessions.store.fingerprint)
        self.path = folder / LOG
        self._annotator = annotator
        self._events: list[dict[str, Any]] = []
        self._ids: set[str] = set()
        self._marks: dict[str, ItemMarks] = {}  # every person's events applied in log order
        self._by_annotator: dict[str, dict[str, ItemMarks]] = {}
        self._settled: dict[str, dict[str, str]] = {}  # item -> the latest settle's code -> label
        self._read_to = 0
        self._lines = 0  # lines of the log read so far (damaged lines are named by number)
        self.damaged: list[str] = []  # the damaged lines skipped, each named
        self._legacy_read = False

    @property
    def annotator(self) -> str:
        """Whose events ``add`` writes: the name given, else ``resolve_annotator``'s (looked up when first needed)."""
        if not self._annotator:
            self._annotator = resolve_annotator()
        return self._annotator

    # ------------------------------------------------------------------ writing

    def add(self, item_id: str, kind: str, code: str = "", text: str = "", label: str = "", blind: bool = False,
            codes: dict[str, str] | None = None) -> dict[str, Any]:
        """Append one event now, durably; return it. ``codes`` (code -> label) are a settle's final labels."""
        if kind not in KINDS:
            raise ValueError(f"unknown annotation kind {kind!r}")
        event = {"id": secrets.token_hex(8), "item": item_id, "kind": kind, "code": code, "label": label,
                 "text": text, "time": now_iso(), "source": "manual", "annotator": self.annotator, "blind": blind}
        if kind == "settle":
            event["codes"] = dict(codes or {})
        if self._stamp is not None:
            event.update(self._stamp(item_id))
        self.append([event])
        return event

    def append(self, events: Iterable[dict[str, Any]]) -> int:
        """Append events (each with an ``id``) in one locked, fsynced write; ids already in the log are skipped.

        All or nothing: a torn tail a crash or a full disk left is first cut (and kept in
        ``annotations.jsonl.torn``), and a write that fails part-way is cut back, so the log
        holds all of these events or none of them. Returns how many were written."""
        with self._locked():
            self.refresh()
            fresh = list({e["id"]: e for e in events if e["id"] not in self._ids}.values())
            if not fresh:
                return 0
            data = b"".join(json.dumps(e, ensure_ascii=False).encode("utf-8") + b"\n" for e in fresh)
            try:
                cut_torn_tail(self.path)
                start = self.path.stat().st_size if self.path.exists() else 0
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    append_durably(fd, data)
                except OSError:
                    os.truncate(self.path, start)
                    raise
                finally:
                    os.close(fd)
            except OSError as exc:
                raise RuntimeFailure(f"{self.path}: could not save {len(fresh)} annotation event(s) "
                                     f"({exc.strerror or exc}); none of them was added") from None
            self.refresh()
            return len(fresh)

    def _locked(self) -> "_FileLock":
        return _FileLock(self.folder / LOCK, on_acquire=self._convert_legacy)

    def _convert_legacy(self) -> None:
        """Under the lock: turn an earlier version's ``annotations.json`` into the log, then remove it."""
        legacy = self.folder / LEGACY
        if self.path.exists() or not legacy.exists():
            return
        events = _legacy_events(legacy)
        atomic_write_bytes(self.path, b"".join(json.dumps(e, ensure_ascii=False).encode("utf-8") + b"\n" for e in events))
        legacy.unlink()

    # ------------------------------------------------------------------ reading

    def refresh(self) -> list[dict[str, Any]]:
        """Take in events appended since the last read (by any process); return the new ones."""
        if not self.path.exists():
            if self._legacy_read or not (self.folder / LEGACY).exists():
                return []
            self._legacy_read = True
            return self._take(_legacy_events(self.folder / LEGACY))
        if self._legacy_read:  # converted by another process meanwhile: the log holds the same events
            self._legacy_read = False
        data = read_from(self.path, self._read_to)
        lines, used = complete_lines(data)
        self._read_to += used
        events = []
        for line in lines:
            self._lines += 1
            if not line.strip():
                continue
            event, problem = parse_event(line)
            if problem:  # one damaged line costs its own event, never the run
                self.damaged.append(f"{self.path.name} line {self._lines}: {problem}")
                warnings.warn(DamagedLog(f"skipped {self.damaged[-1]}"), stacklevel=2)
                continue
            events.append(event)
        return self._take(events)

    def _take(self, events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        fresh = []
        for event in events:
            if event["id"] in self._ids:
                continue
            self._ids.add(event["id"])
            self._events.append(event)
            item = event["item"]
            if event["kind"] == "settle":
                self._settled[item] = dict(event.get("codes") or {})
            else:
                self._marks.setdefault(item, ItemMarks()).apply(event)
                person = self._by_annotator.setdefault(event.get("annotator", ""), {})
                person.setdefault(item, ItemMarks()).apply(event)
            fresh.append(event)
        return fresh

    def events(self, item_id: str | None = None, annotator: str | None = None) -> list[dict[str, Any]]:
        self.refresh()
        return [dict(e) for e in self._events if (item_id is None or e["item"] == item_id)
                and (annotator is None or e.get("annotator", "") == annotator)]

    def marks(self, annotator: str | None = None) -> dict[str, ItemMarks]:
        """Item id -> the marks one person's events (None: everyone's, in log order) leave on it."""
        self.refresh()
        return self._marks if annotator is None else self._by_annotator.setdefault(annotator, {})

    def by_annotator(self) -> dict[str, dict[str, ItemMarks]]:
        """Annotator -> item id -> that person's marks (annotators with no review event included)."""
        self.refresh()
        return self._by_annotator

    def settled(self) -> dict[str, dict[str, str]]:
        """Item id -> the adjudicated labels (code -> label) of the item's latest settle event."""
        self.refresh()
        return self._settled

    def import_lines(self, lines: Iterable[str], known_items: set[str], source: str) -> int:
        """Merge another log's events (JSON lines); return how many were new. Ids already here are skipped.

        Every line is checked (``event_problem``) before anything is written and the events
        are appended in one write (``append``), so a bad file or a failed write adds nothing.
        """
        events = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            event, problem = parse_event(line)
            if not problem and event["item"] not in known_items:
                problem = f"item {event['item']!r} is not in this run"
            if problem:
                raise InputError(f"{source} line {number}: {problem}; nothing was imported")
            events.append(event)
        return self.append(events)

    def effective(self) -> dict[str, dict[str, Any]]:
        """Item id -> {"added": {code: label}, "removed": set, "notes": [...], "reviewed": bool}."""
        return {item: {"added": dict(m.added), "removed": set(m.removed), "notes": list(m.notes), "reviewed": m.reviewed}
                for item, m in self.marks().items()}

    def close(self) -> None:
        """Nothing is held open between calls; kept so callers can release a log like any store."""


class _FileLock:
    """An exclusive ``flock`` held for a ``with`` block; ``on_acquire`` runs once it is held."""

    def __init__(self, path: Path, on_acquire: Any = None):
        self.path = path
        self.on_acquire = on_acquire
        self._handle: Any = None

    def __enter__(self) -> "_FileLock":
        self._handle = open(self.path, "a+")
        fcntl.flock(self._handle, fcntl.LOCK_EX)
        if self.on_acquire is not None:
            self.on_acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()


def _legacy_events(path: Path) -> list[dict[str, Any]]:
    """An earlier version's TinyDB events, in write order, with ids that stay the same on every read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        table = json.loads(text).get("events", {}) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON ({exc})") from None
    return [{"id": f"legacy-{doc_id}", "annotator": login_name(), **event}
            for doc_id, event in sorted(table.items(), key=lambda pair: int(pair[0]))]


class DamagedLog(UserWarning):
    """A line of an annotation log that is not an event: skipped, named once, the rest read."""


def parse_event(line: str | bytes) -> tuple[dict[str, Any], str]:
    """One log line as an event and ``""``, or ``{}`` and what is wrong with it."""
    try:
        event = json.loads(line)
    except ValueError as exc:  # not JSON, or not UTF-8
        return {}, f"not JSON ({getattr(exc, 'msg', exc)})"
    problem = event_problem(event)
    return (event, "") if not problem else ({}, problem)


def event_problem(event: Any) -> str:
    """What makes ``event`` not an annotation event every reader can use, or ``""``.

    The one check of an event's fields, for the lines read and the lines imported alike."""
    if not isinstance(event, dict):
        return f"not an annotation event (a JSON {type(event).__name__}, not an object)"
    missing = [k for k in REQUIRED if not isinstance(event.get(k), str) or not event.get(k)]
    if missing:
        return f"not an annotation event (needs {', '.join(REQUIRED)}; missing or empty: {', '.join(missing)})"
    if event["kind"] not in KINDS:
        return f"unknown kind {event['kind']!r} (known: {', '.join(KINDS)})"
    if not isinstance(event.get("code", ""), str) or event["kind"] in ("tag_add", "tag_remove") and not event.get("code"):
        return f"a {event['kind']} event needs a tag code"
    for key in ("label", "text", "source"):
        if not isinstance(event.get(key, ""), str):
            return f"{key} must be text"
    codes = event.get("codes", {})
    if not isinstance(codes, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in codes.items()):
        return "codes must map tag codes to labels"
    return ""
