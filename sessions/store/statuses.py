"""Each item's latest result as one byte, read from a run's index: what checks every item of a run keep.

The runner's closing check (every item recorded is on disk; finished only when every item has
a result) read a fresh store's summaries whole before, about 430 bytes an item; one byte an item
from the index scanned a block at a time (``ResultsLog.scan``) answers the same questions.
"""

from __future__ import annotations

from pathlib import Path

from sessions.store.results_log import ResultsLog

RESULT, ERROR = 1, 2  # an item's byte: a result, an infrastructure error; 0: no result


def stored_statuses(folder: Path, total: int) -> bytearray:
    """The byte of each of the ``total`` items of the run in ``folder``, read afresh as any reader would
    (the latest result of an item wins)."""
    stored = bytearray(total)
    for index, summary in ResultsLog(folder).scan():
        if 0 <= index < total:
            stored[index] = ERROR if summary.get("status") == "error" else RESULT
    return stored
