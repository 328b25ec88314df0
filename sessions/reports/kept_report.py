"""A run's report figures kept beside it, so that reading a report costs what it shows.

What a report computes from a run's results (the engine's tables and metrics, the counts,
the accuracy and its interval, the review fields, the paper block) needs every result read
back: 50,000 of them were most of the report's time and memory (0.78 s and 52 MB, against
0.23 s and 30 MB at 1,615). Those figures change only with the results, the annotations,
the run's meta or the code that scores, tags and reports, so the process that builds a
report (``n2f run``'s closing report, a stopped run's too, or any reader) leaves them in
``report.json`` under a key of all of these, and the next report of the same run in the
same state reads them instead. A report against other runs is made afresh: the engine's
tables then depend on the others.

The key hashes every byte of the index (each result's status, scores and tags), the meta,
the annotation logs, the sizes of the records and item files, and the name, size and
modification time of every file of the code (``engines``, ``sessions`` and the engine's own
package): an edit of the code, a new result, a cut tail or a new tag each make a new key.
Figures are kept only when the key is the same after they were computed as before: a report
made while the owner appends results or someone annotates read no one state, and is not kept.
The file is a reader's copy: written without fsync (a crash loses it, and the next report
writes it again), replaced whole, skipped when damaged or of another key, never packed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engines
import sessions
from engines.contract import Engine
from engines.core import Chart, Report, Table
from sessions.store.files import file_size, replace_unsynced
from sessions.store.items import ITEMS, ITEMS_BRIEF
from sessions.store.results_log import INDEX, RECORDS
from sessions.store.runs import RunStore
from sessions.study.annotations import LEGACY as ANNOTATIONS_LEGACY, LOG as ANNOTATIONS

KEPT_REPORT = "report.json"
FORMAT = 1
HASHED = ("meta.json", INDEX, ANNOTATIONS, ANNOTATIONS_LEGACY)  # every byte
SIZED = (RECORDS, ITEMS, ITEMS_BRIEF)  # written once or appended: their size says what they hold
CHUNK = 1 << 20


@dataclass
class KeptReport:
    """The engine's report (its tables, charts and notes, the review's tables added) and the figures of the
    run's summary that come from its results: ``counts`` (without pending), ``done``, ``accuracy``,
    ``accuracy_ci``, the review fields and ``paper``."""

    report: Report
    figures: dict[str, Any]


def report_key(store: RunStore, engine: Engine[Any]) -> str:
    """The key of the run's report in its present state: its stored files and the code that reads them."""
    digest = hashlib.sha256(json.dumps([FORMAT, list(sys.version_info[:2]), code_key(type(engine).__module__)]).encode())
    for name in HASHED:
        digest.update(f"\n{name}:".encode())
        _hash_file(digest, store.folder / name)
    for name in SIZED:
        digest.update(f"\n{name}:{file_size(store.folder / name)}".encode())
    return digest.hexdigest()


@functools.cache
def code_key(engine_module: str) -> str:
    """A hash of the name, size and modification time of every file of ``engines``, ``sessions`` and the
    package of ``engine_module`` (an engine plugin's own code), data files included."""
    roots = {Path(engines.__file__).parent, Path(sessions.__file__).parent}
    module_file = getattr(sys.modules.get(engine_module), "__file__", None)
    if module_file:
        roots.add(Path(module_file).parent)
    digest = hashlib.sha256()
    for root in sorted(roots):
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            for name in sorted(files):
                try:
                    stat = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                digest.update(f"{folder}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def read_kept(store: RunStore, key: str) -> KeptReport | None:
    """The kept report when it was made under ``key``; None when there is none, another key or damage."""
    try:
        data = json.loads((store.folder / KEPT_REPORT).read_bytes())
        if data["format"] != FORMAT or data["key"] != key:
            return None
        report = data["report"]
        return KeptReport(Report(metrics=report["metrics"], tables=[Table(**t) for t in report["tables"]],
                                 charts=[Chart(**c) for c in report["charts"]], notes=report["notes"]),
                          data["figures"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def keep(store: RunStore, key: str, kept: KeptReport) -> None:
    """Leave ``kept`` under ``key`` beside the run. Best effort: a folder this process cannot write, or
    a figure JSON cannot hold, leaves things as they were (the next report computes its figures)."""
    try:
        text = json.dumps({"format": FORMAT, "key": key, "report": kept.report.to_json(), "figures": kept.figures},
                          ensure_ascii=False)
        replace_unsynced(store.folder / KEPT_REPORT, [text.encode("utf-8")])
    except (OSError, TypeError, ValueError):
        pass


def _hash_file(digest: Any, path: Path) -> None:
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        digest.update(b"-")
