"""The collector's tuning during bulk phases is undone after them, also when they fail."""

from __future__ import annotations

import gc

import pytest

from sessions.collector import RUN_YOUNG_THRESHOLD, collector_paused, run_heap


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
