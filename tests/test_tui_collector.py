"""The inspector shares the one collector policy (sessions.collector) with the runner: a run ending
inside it no longer thaws the open run screen's heap, and every hold and pause it takes ends."""

from __future__ import annotations

import gc

from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from sessions import api
from sessions.collector import COLLECTOR
from tui_support import make_run, screen_named, until


async def test_a_run_ending_under_its_open_screen_leaves_the_screens_heap_frozen_and_quitting_balances_all():
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 36)) as pilot:
        prepared = await api.prepare_run("dedc", [], model="sim", limit=12, concurrency=2, name="live")
        job = app.start_job(prepared)
        app.open_run(prepared.store.id)
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert COLLECTOR.pauses == 1 and not gc.isenabled()  # automatic collection off while the job goes on
        await until(pilot, lambda: job.done and not app.jobs)
        assert COLLECTOR.holders == 1 and gc.get_freeze_count() > 0  # the screen still holds its heap
        assert COLLECTOR.pauses == 0 and gc.isenabled()
        await pilot.press("escape")  # back to the runs: the last holder lets go
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        assert COLLECTOR.holders == 0 and gc.get_freeze_count() == 0
        await until(pilot, lambda: not COLLECTOR.pending)  # the closed screen's heap is collected a moment later


async def test_quitting_while_a_run_goes_on_ends_its_pause_and_the_screens_hold():
    await make_run("done", limit=4)
    app = N2FApp(run="done", formats=STABLE, demo=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        prepared = await api.prepare_run("dedc", [], model="sim:latency=0.2", limit=40, concurrency=2, name="slow")
        app.start_job(prepared)
        assert COLLECTOR.pauses == 1 and COLLECTOR.holders == 1
        await app.quit_now()
    assert COLLECTOR.pauses == 0 and COLLECTOR.holders == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0 and COLLECTOR.runs == 0
    assert not COLLECTOR.pending  # the app that ended waived the pass for its closed run screen
