"""The one owner of the cyclic garbage collector's policy; the CLI, the runner and the inspector all go through it.

Why the collector is tuned at all. Building items, running them and building a report
allocate hundreds of thousands of objects (items, parse trees, records) and almost no
reference cycles: reference counting frees nearly all of them, and the collector's passes
over a heap that only grows are pure cost. Measured when each rule came in:

* a compost sim run spent a sixth of its CPU in collector passes; freezing the heap alive
  at a run's start and raising the young threshold to ``RUN_YOUNG_THRESHOLD`` took that out;
* against a 200 ms loopback server at ``-j 64``, one full collection over the pre-run heap
  took 75 ms, a whole round of requests delayed;
* in the inspector, automatic collection during a live run stalled the event loop for
  50-150 ms a few times a second (full passes over an ever larger heap of records), and
  with a run screen open every full pass walked its items and metrics (tens of ms each);
  so while runs go on the app pauses automatic collection, collects the youngest
  generation on a timer and freezes the survivors (``refreeze``);
* at exit, the interpreter's last full collection walked every object (0.2 s of 7.8 s CPU
  after a compost run) to free memory the exit frees anyway (``freeze_for_exit``).

Why one owner. ``gc.freeze``/``gc.unfreeze`` and ``gc.disable``/``gc.enable`` do not nest:
a run ending with ``gc.unfreeze()`` thawed what the open run screen had frozen, and two
runs in one app restored each other's thresholds. Here each is counted: the heap is
unfrozen (and collected once) only when the last holder of ``hold()`` leaves, automatic
collection comes back only when the last ``pause()`` ends and only if it was on before the
first, and the run threshold is put back when the last run ends. Holders are the run
(``run_heap``) and each open run screen; the app pauses collection while its jobs go on.

Why the collection after a closed screen waits. Thawing the heap puts a closed run screen's
cycles where only a full pass frees them; that pass took 0.35-0.4 s in a test process's
heap, paid on the key that closed the screen and again at every app exit, where the exit
frees everything anyway. So ``release(collect=True)`` only marks a collection as pending;
the app runs it a moment later (``collect_pending``), and the next ``hold`` runs it first if
it comes sooner, so that the closed screen's garbage is never frozen in with the new one. An
app that ends waives what it still owes (``waive_pending``): the process ends next. Left
owed, it fell to the next app's first run screen: in a test process, which opens an app a
test, 0.43 s a test (19 passes, 8.2 s of a 39 s file of pilot tests, cProfile).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

RUN_YOUNG_THRESHOLD = 10_000  # allocations between young passes while a run goes on (CPython's default: 700)


class CollectorPolicy:
    """Counted freezes, pauses and run thresholds over the process's one collector."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.holders = 0  # who wants what is frozen kept frozen
        self.pauses = 0  # who wants automatic collection off
        self.runs = 0  # runs going on (the young threshold is raised while there is one)
        self.pending = False  # the last release thawed a heap with garbage in it: a full pass is owed
        self._was_enabled = True
        self._thresholds: tuple[int, ...] = gc.get_threshold()

    def hold(self) -> None:
        """Freeze what is alive now (it outlives the holder's work) until every holder has let go;
        a pending collection comes first, so that what died before is not frozen with it."""
        self.collect_pending()
        with self._lock:
            self.holders += 1
            gc.freeze()

    def release(self, collect: bool = False) -> None:
        """One holder lets go; the last one unfreezes the heap (and with ``collect``, owes a full pass
        to free what died meanwhile: ``collect_pending`` or the next ``hold`` runs it)."""
        with self._lock:
            if self.holders == 0:
                raise RuntimeError("the collector was released more often than held")
            self.holders -= 1
            if self.holders:
                return
            gc.unfreeze()
            self.pending = self.pending or collect

    def collect_pending(self) -> None:
        """The full pass the last release owes, once; nothing when none is owed."""
        with self._lock:
            owed, self.pending = self.pending, False
        if owed:
            gc.collect()

    def waive_pending(self) -> None:
        """Forget the pass owed: its garbage is freed by the process's end (or a later automatic pass)."""
        with self._lock:
            self.pending = False

    def refreeze(self) -> None:
        """Freeze what survived since the last freeze, if someone holds the heap (who will thaw it)."""
        with self._lock:
            if self.holders:
                gc.freeze()

    def collect_young(self) -> None:
        """One pass over the youngest generation (where cyclic garbage dies), also while paused."""
        gc.collect(0)

    def pause(self) -> None:
        """Automatic collection off until every pause has ended."""
        with self._lock:
            if self.pauses == 0:
                self._was_enabled = gc.isenabled()
            self.pauses += 1
            gc.disable()

    def unpause(self) -> None:
        with self._lock:
            if self.pauses == 0:
                raise RuntimeError("the collector was unpaused more often than paused")
            self.pauses -= 1
            if self.pauses == 0 and self._was_enabled:
                gc.enable()

    def _run_starts(self) -> None:
        with self._lock:
            if self.runs == 0:
                self._thresholds = gc.get_threshold()
                gc.set_threshold(RUN_YOUNG_THRESHOLD, *self._thresholds[1:])
            self.runs += 1

    def _run_ends(self) -> None:
        with self._lock:
            self.runs -= 1
            if self.runs == 0:
                gc.set_threshold(*self._thresholds)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No collection at all: for a bounded burst of allocation (items, a report) whose objects outlive it."""
        self.pause()
        try:
            yield
        finally:
            self.unpause()

    @contextmanager
    def run_heap(self) -> Iterator[None]:
        """A run's collector: what is alive at its start (items, an engine's data such as compost's
        graph, parser tables, modules) outlives the run, so it is held frozen and full passes skip it;
        young passes come every ``RUN_YOUNG_THRESHOLD`` allocations, so that short-lived parse trees
        and records are freed by reference counting before a pass walks them."""
        self.hold()
        self._run_starts()
        try:
            yield
        finally:
            self._run_ends()
            self.release()


COLLECTOR = CollectorPolicy()  # the process has one collector, so one policy
collector_paused = COLLECTOR.paused
run_heap = COLLECTOR.run_heap


def freeze_for_exit() -> None:
    """The process ends next: freeze everything so the interpreter's last collection walks nothing."""
    gc.freeze()
