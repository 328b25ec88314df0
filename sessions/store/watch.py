"""A run's changes as a stat: what readers following runs (the inspector, the home screen) look at.

A reader of another process's run calls ``run_signature`` every second or so; only when it
changed does it read anything (the metadata, the index's new lines, summary.json).
"""

from __future__ import annotations

import os
from pathlib import Path

from sessions.store.results_log import INDEX, LEGACY

WATCHED = ("meta.json", INDEX, LEGACY)  # what a run's writer changes: status and counts, its results


def run_signature(folder: Path) -> tuple[tuple[int, int], ...]:
    """(size, change time in ns) of each file in ``WATCHED``; (-1, -1) for one not there."""
    stamps = []
    for name in WATCHED:
        try:
            stat = os.stat(folder / name)
        except OSError:
            stamps.append((-1, -1))
        else:
            stamps.append((stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)
