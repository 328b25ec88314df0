"""The collector's tuning during bulk phases is undone after them, also when they fail, and it nests:
one owner (sessions.collector) counts who froze the heap, who paused collection and which runs go on."""

from __future__ import annotations

import gc
import weakref

import pytest

from sessions.collector import COLLECTOR, RUN_YOUNG_THRESHOLD, collector_paused, run_heap


def test_run_heap_freezes_and_raises_the_young_threshold_then_puts_both_back():
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(RuntimeError):
        with run_heap():
            assert gc.get_threshold()[0] == RUN_YOUNG_THRESHOLD
            assert gc.get_threshold()[1:] == before[1:]
            assert gc.get_freeze_count() > frozen
            raise RuntimeError("the run failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_collector_paused_restores_the_state_it_found():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # paused by someone else before: left paused
    finally:
        gc.enable()


def test_a_run_ending_leaves_frozen_what_another_holder_froze():
    """The bug this owner fixes: run_heap ended with gc.unfreeze(), thawing an open run screen's heap."""
    screen_objects = [[i] for i in range(1000)]  # lists: tracked by the collector
    COLLECTOR.hold()  # the run screen opens
    try:
        assert gc.get_freeze_count() > len(screen_objects)
        with run_heap():
            pass
        assert gc.get_freeze_count() > len(screen_objects)  # the screen's objects are still out of the passes
    finally:
        COLLECTOR.release(collect=True)
    assert gc.get_freeze_count() == 0 and COLLECTOR.holders == 0


class Node:
    """An object in a reference cycle with itself: only a collector pass frees it."""

    def __init__(self) -> None:
        self.me = self


def frozen_cyclic_garbage() -> weakref.ref[Node]:
    """Cyclic garbage that a holder froze in (a closed screen's widgets), then the last holder's release."""
    with collector_paused():  # no automatic pass frees it before the test looks
        node = Node()
        alive = weakref.ref(node)
        COLLECTOR.hold()
        del node
        COLLECTOR.release(collect=True)
    return alive


def test_the_last_release_owes_one_full_pass_which_collect_pending_pays_later_not_at_once():
    alive = frozen_cyclic_garbage()
    assert alive() is not None and COLLECTOR.pending  # the key that closed the screen paid nothing
    COLLECTOR.collect_pending()
    assert alive() is None and not COLLECTOR.pending
    COLLECTOR.collect_pending()  # owed once: a second call has nothing to do
    assert not COLLECTOR.pending


def test_a_waived_pass_is_not_paid_by_the_next_hold():
    alive = frozen_cyclic_garbage()
    COLLECTOR.waive_pending()  # the app ended: its closed screens' garbage goes with the process
    COLLECTOR.hold()
    try:
        assert alive() is not None and not COLLECTOR.pending
    finally:
        COLLECTOR.release()
    gc.collect()
    assert alive() is None  # not leaked: thawed, an ordinary pass frees it


def test_a_hold_that_comes_before_the_owed_pass_runs_it_first():
    alive = frozen_cyclic_garbage()
    COLLECTOR.hold()  # another run screen opens at once: the closed one's garbage must not be frozen with it
    try:
        assert alive() is None and not COLLECTOR.pending
    finally:
        COLLECTOR.release()
    assert not COLLECTOR.pending  # a release without collect owes nothing


def test_two_runs_at_once_put_the_threshold_back_only_when_the_last_ends():
    before = gc.get_threshold()
    first, second = run_heap(), run_heap()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == RUN_YOUNG_THRESHOLD and gc.get_freeze_count() > 0  # the second run goes on
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_pauses_nest_and_the_last_one_restores_collection():
    COLLECTOR.pause()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the outer pause (a job of the app) still holds
    COLLECTOR.unpause()
    assert gc.isenabled() and COLLECTOR.pauses == 0


def test_refreeze_without_a_holder_freezes_nothing_nobody_would_thaw():
    COLLECTOR.refreeze()
    assert gc.get_freeze_count() == 0


def test_unbalanced_release_is_refused():
    with pytest.raises(RuntimeError):
        COLLECTOR.release()
    with pytest.raises(RuntimeError):
        COLLECTOR.unpause()
