"""Runs written by another process: the home list and a run screen follow them (issue 26, point 1).

The writer is a real headless ``n2f run`` in a subprocess; the inspector is a Pilot app in
this process. Both screens must show the run's final counts, read back from its files,
within two seconds of the writer's exit: the README suggests watching a headless run with
a second inspector, and a list that froze at ``20/400`` for half an hour is the bug fixed.
Here the final counts must appear at all, within a timeout that only turns a frozen list into a
failure; the two seconds are a speed figure, measured by benchmarks/tui_figures.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from textual.widgets import DataTable

from n2f_tui.app import N2FApp
from n2f_tui.widgets.progress import RunHeader
from n2f_tui.widgets.style import STABLE
from sessions.store.runs import RunStore, list_run_meta
from tui_support import screen_named, until

ITEMS = 300
# Seconds from the writer's exit to the final counts on screen before a list is taken as frozen, with room for
# a busy machine: the 2 s target is benchmarks/tui_figures.py's (home 16 ms, run screen 192 ms, quiet).
FOLLOW_WITHIN = 15.0


def headless(name: str) -> subprocess.Popen:
    """``n2f run dedc`` in another process, slow enough (simulated latency) to be watched."""
    return subprocess.Popen([sys.executable, "-m", "n2f_tui", "run", "dedc", "-n", str(ITEMS), "-m",
                             "sim:latency=0.02", "-j", "8", "--name", name, "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


async def exited(pilot, writer: subprocess.Popen) -> None:
    """Wait for the writer to end (successfully)."""
    await until(pilot, lambda: writer.poll() is not None, timeout=180)
    assert writer.returncode == 0, writer.stderr.read()


def home_cells(app, run_id: str) -> str:
    table = app.screen.query_one(DataTable)
    return f"{table.get_cell(run_id, 'progress').plain} {table.get_cell(run_id, 'accuracy').plain}"


@pytest.mark.slow
async def test_home_list_follows_a_headless_run_to_its_final_counts():
    writer = headless("other")
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: any(m.get("name") == "other" for m in list_run_meta()), timeout=60)
        await until(pilot, lambda: any(m.get("name") == "other" for m in app.screen.metas), timeout=5)
        run_id = next(m["id"] for m in app.screen.metas if m.get("name") == "other")
        await until(pilot, lambda: "running" in home_cells(app, run_id) and not home_cells(app, run_id).startswith("…"),
                    timeout=30)
        await exited(pilot, writer)
        final = RunStore.open("other").summary()
        expected = f"{final.done}/{ITEMS} finished {100 * final.accuracy:.1f}%"
        await until(pilot, lambda: home_cells(app, run_id) == expected, timeout=FOLLOW_WITHIN)


@pytest.mark.slow
async def test_run_screen_follows_a_headless_run_to_its_final_counts():
    writer = headless("watched")
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: any(m.get("name") == "watched" for m in list_run_meta()), timeout=60)
        app.open_run("watched")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        screen = app.screen
        assert not app.jobs  # the run is the other process's: this inspector only reads it
        header = lambda: str(screen.query_one(RunHeader).render())  # noqa: E731
        await until(pilot, lambda: "running" in header(), timeout=30)
        await exited(pilot, writer)
        final = RunStore.open("watched")
        counts = {s: 0 for s in ("correct", "wrong", "unparseable")}
        for summary in final.summaries().values():
            counts[summary["status"]] = counts.get(summary["status"], 0) + 1

        def final_shown() -> bool:
            text = header()
            return (f" {ITEMS}/{ITEMS}" in text and "finished" in text
                    and all(f"{k} {v}" in text for k, v in counts.items() if v)
                    and screen.state.counts()["pending"] == 0)

        try:
            await until(pilot, final_shown, timeout=FOLLOW_WITHIN)
        except AssertionError:
            raise AssertionError(f"not the final counts {counts}: {header()!r}") from None
        assert screen.vlist.count == ITEMS
