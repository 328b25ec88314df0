"""A stored run in a few figures: what a list of runs shows for each (home screen, ``n2f runs``).

``summary.json`` holds them, kept current by the run's writer so that a list reads one small
file per run instead of parsing every run's whole index:

  {"index_bytes": size of results.index.jsonl it covers, "records_bytes": size of
   results.jsonl then, "statuses": {status: items}, "usage": {prompt, completion, cached}}

The owner (``ResultsLog``) keeps a ``RunTally`` (one byte of status and, once a step reports
tokens, three counters per item, so a re-run item replaces its old figures) and replaces
the file after every batch it appends (a batch ends at most a second or ``FLUSH_ITEMS``
results after it began) and when it takes over a run. The file is replaced without fsync:
a crash can lose or empty it, and then readers read the index, as they do for a run written
before this file existed (until its next owner writes it).

A reader trusts the file only when it covers the whole index (``index_bytes`` equal to the
index's size now, and the records at least ``records_bytes`` long): the owner appends the
index first and the summary after, so a reader that comes between the two, or reads a run
being written by an earlier version, sees sizes that differ and parses the index instead.
Figures from either path are the same.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from engines.core import SCORER_ERROR
from sessions.run.usage import Usage
from sessions.store.files import replace_unsynced
from sessions.store.summary_table import SummaryTable

SUMMARY = "summary.json"
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens")


@dataclass(frozen=True)
class RunSummary:
    """Items judged, items whose last attempt hit an infrastructure error, accuracy over the judged, tokens."""

    done: int = 0
    errors: int = 0
    accuracy: float | None = None
    usage: Usage = field(default_factory=Usage)

    @property
    def finished(self) -> int:
        """Items with a result of any status."""
        return self.done + self.errors


def summarize(summaries: SummaryTable) -> RunSummary:
    """The figures of a run from its result summaries."""
    statuses: dict[str, int] = {}
    for status in summaries.column("status", "error"):
        statuses[status] = statuses.get(status, 0) + 1
    return from_statuses(statuses, summaries.usage())


def from_statuses(statuses: Mapping[str, int], usage: Usage) -> RunSummary:
    """The figures from the count of items per latest status."""
    errors = statuses.get("error", 0)
    judged = sum(statuses.values()) - errors
    scored = judged - statuses.get(SCORER_ERROR, 0)  # a scorer failure is not a mistake
    return RunSummary(done=judged, errors=errors, accuracy=statuses.get("correct", 0) / scored if scored else None,
                      usage=usage)


class RunTally:
    """The owner's running figures of a run: each item's latest status and tokens, compactly."""

    def __init__(self) -> None:
        self.names: list[str] = [""]  # status code -> name; 0: no result
        self.codes: dict[str, int] = {}
        self.status = bytearray()  # item index -> status code
        self.tokens = array("q")  # item index * 3 + k -> USAGE_KEYS[k], allocated once a step reports tokens
        self.statuses: dict[str, int] = {}
        self.usage = Usage()

    def add(self, index: int, summary: Mapping[str, Any]) -> None:
        """The item's latest summary (``results_log.summary_of``), replacing what it had."""
        if index >= len(self.status):
            self.status.extend(bytes(index + 1 - len(self.status)))
        old = self.names[self.status[index]]
        if old:
            self.statuses[old] -= 1
        name = str(summary.get("status", "error"))
        code = self.codes.get(name)
        if code is None:
            code = self.codes[name] = len(self.names)
            self.names.append(name)
        self.status[index] = code
        self.statuses[name] = self.statuses.get(name, 0) + 1
        self._add_tokens(index, summary.get("usage") or {})

    def _add_tokens(self, index: int, usage: Mapping[str, Any]) -> None:
        if not usage and 3 * index >= len(self.tokens):
            return
        if 3 * index + 3 > len(self.tokens):
            self.tokens.extend([0] * (3 * index + 3 - len(self.tokens)))
        new = [int(usage.get(key, 0) or 0) for key in USAGE_KEYS]
        old = self.tokens[3 * index: 3 * index + 3]
        self.usage.add(dict(zip(USAGE_KEYS, (n - o for n, o in zip(new, old)))))
        self.tokens[3 * index: 3 * index + 3] = array("q", new)

    def to_json(self, index_bytes: int, records_bytes: int) -> dict[str, Any]:
        return {"index_bytes": index_bytes, "records_bytes": records_bytes,
                "statuses": {k: v for k, v in self.statuses.items() if v},
                "usage": {key: getattr(self.usage, key) for key in USAGE_KEYS}}


def write_summary(folder: Path, tally: RunTally, index_bytes: int, records_bytes: int) -> None:
    """Replace ``summary.json`` (no fsync: readers fall back to the index when it is lost)."""
    replace_unsynced(folder / SUMMARY, [json.dumps(tally.to_json(index_bytes, records_bytes)).encode("utf-8")])


def read_summary(folder: Path, index_bytes: int, records_bytes: int) -> RunSummary | None:
    """The figures in ``summary.json`` when it covers an index of ``index_bytes`` (and records of at
    least ``records_bytes``), else None: the caller reads the index."""
    try:
        stored = json.loads((folder / SUMMARY).read_bytes())
        if stored["index_bytes"] != index_bytes or stored["records_bytes"] > records_bytes:
            return None
        usage = Usage(**{key: int(stored["usage"].get(key, 0)) for key in USAGE_KEYS})
        return from_statuses({str(k): int(v) for k, v in stored["statuses"].items()}, usage)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
