"""Watching a run live: the demo on a fresh store, progress, pause, cancel, resume, quit (points 1, 2, 8)."""

from __future__ import annotations

import pytest

from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from n2f_tui.cli import main as cli_main
from n2f_tui.widgets.progress import RunHeader
from sessions import api
from sessions.store.runs import RunStore, list_run_meta
from tui_support import screen_named, until


def header_text(app) -> str:
    return str(app.screen.query_one(RunHeader).render())


@pytest.mark.slow
async def test_fresh_store_lands_in_the_live_demo_and_quit_cancels_it_cleanly():
    assert not list_run_meta()
    app = N2FApp(formats=STABLE, demo_model="sim:latency=0.5")  # what bare `n2f` runs, slowed so quit finds it going
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: screen_named(app, "RunScreen") and app.jobs)
        job = next(iter(app.jobs.values()))
        assert job.store.meta["name"] == "demo" and job.store.meta["engine"] == "dedc"
        assert job.store.meta["model"].startswith("sim") and "latency" in job.store.meta["model"]
        await until(pilot, lambda: job.progress.done >= 8)
        await until(pilot, lambda: app.screen.state.counts()["pending"] < app.screen.state.total)
        assert "running" in header_text(app)
        await pilot.press("q")  # asks first: a run is going on
        await until(pilot, lambda: screen_named(app, "ConfirmDialog"))
        await pilot.press("n")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert app.jobs and not job.done
        await pilot.press("q", "y")  # quits; the run is cancelled cleanly, left for resume
    assert not app.jobs and job.task.done()
    meta = RunStore.open("demo").meta
    assert meta["status"] == "cancelled"
    store = RunStore.open("demo")
    assert 0 < len(store.results()) < store.meta["total"]
    prepared = await api.prepare_resume("demo")  # resumable: not locked, pending items left
    assert prepared.store.pending_indices()
    prepared.store.close()


@pytest.mark.slow
async def test_progress_updates_on_a_timer_and_pause_cancel_resume():
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        prepared = await api.prepare_run("dedc", [], model="sim:latency=0.03", limit=80, concurrency=2, name="live")
        job = app.start_job(prepared)
        app.open_run(prepared.store.id)
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        screen = app.screen
        await until(pilot, lambda: screen.state.counts()["pending"] < 80 and job.progress.done >= 6)
        # pause from the screen: nothing more finishes while paused
        await pilot.press("space")
        assert job.paused and "paused" in header_text(app)
        await pilot.pause(0.15)
        done = job.progress.done
        elapsed = job.progress.elapsed
        await pilot.pause(0.3)
        assert job.progress.done <= done + 2  # at most the items in flight
        assert job.progress.elapsed == elapsed  # the clock of items/s and ETA stands still while paused
        # c asks before cancelling: n keeps the run
        await pilot.press("c")
        await until(pilot, lambda: screen_named(app, "ConfirmDialog"))
        await pilot.press("n")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert app.jobs and not job.done
        screen.action_pause()
        assert not job.paused
        await until(pilot, lambda: job.progress.done >= done + 6)
        # cancel: the runner stops, the screen reads the run back
        await pilot.press("c", "y")
        await until(pilot, lambda: not app.jobs and not screen.was_live)
        assert screen.state.store.meta["status"] == "cancelled"
        finished = len(screen.state.records)
        assert 0 < finished < 80
        # resume from the screen: the rest runs, the list fills
        await pilot.press("r")
        await until(pilot, lambda: not app.jobs and not screen.was_live and len(screen.state.records) == 80)
        assert screen.state.store.meta["status"] == "finished"
        assert screen.state.counts()["pending"] == 0
        assert "finished" in header_text(app) and "80/80" in header_text(app)
        assert screen.metrics.get("accuracy") is not None  # the engine's headline metrics


async def test_n2f_tui_with_a_bad_run_is_one_line_and_status_2(capsys):
    assert cli_main(["tui", "no-such-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("n2f: error:") and len(err.strip().splitlines()) == 1
