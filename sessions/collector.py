"""When the cyclic garbage collector works during the harness's bulk phases, and why.

Building items, running them and building a report allocate hundreds of thousands of
objects (items, parse trees, records) and almost no reference cycles: reference counting
frees nearly all of them, and the collector's passes over a heap that only grows are
pure cost (a compost run spent a sixth of its CPU in them). Each phase therefore tunes
the collector for its length and puts it back as it was, so a long-lived process (the
inspector) collects normally between phases and nothing stays uncollectable.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

RUN_YOUNG_THRESHOLD = 10_000  # allocations between young passes while a run goes on (CPython's default: 700)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection at all: for a bounded burst of allocation (items, a report) whose objects outlive it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextmanager
def run_heap() -> Iterator[None]:
    """A run's collector: what is alive at its start (items, an engine's data such as compost's
    graph, parser tables, modules) outlives the run, so it is frozen and full passes skip it; young
    passes come every ``RUN_YOUNG_THRESHOLD`` allocations, so that short-lived parse trees and
    records are freed by reference counting before a pass walks them. Unfrozen at the end."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
