"""Snapshots of the main screens at 80x24 and 160x48 (pytest-textual-snapshot).

The data is a finished simulator run with a fixed seed; the app is given the ``STABLE``
formats, so dates, rates and run ids (which carry a timestamp) are written as
placeholders, and each snapshot is taken once the screen's workers are done (the same
code paths as in use). Update after an intended change with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and look at the SVGs in
tests/__snapshots__/.
"""

from __future__ import annotations

import pytest

from n2f_tui.app import N2FApp
from n2f_tui.screens.run import RunScreen
from n2f_tui.widgets.style import STABLE
from tui_support import make_run_sync, until

SIZES = [(80, 24), (160, 48)]


@pytest.fixture
def runs():
    make_run_sync("base", limit=40, seed=0)
    make_run_sync("gold", limit=40, seed=0, model="oracle")


async def settle(pilot) -> None:
    """The screen as a user sees it once nothing is left to compute: workers done, detail and metrics drawn."""
    await pilot.pause()
    if pilot.app.initial_run:  # opened on a run: its screen comes up after the home screen
        await until(pilot, lambda: len(pilot.app.screen_stack) > 2 or isinstance(pilot.app.screen, RunScreen))
    screen = pilot.app.screen
    if isinstance(screen, RunScreen):
        await until(pilot, lambda: screen.detail_ready and screen.metrics)
    await pilot.app.workers.wait_for_complete()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home(snap_compare, runs, size):
    assert snap_compare(N2FApp(formats=STABLE, demo=False), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_on_a_wrong_item(snap_compare, runs, size):
    async def wrong_item(pilot):
        await settle(pilot)
        pilot.app.screen.action_wrong(1)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=size, run_before=wrong_item)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_report(snap_compare, runs, size):
    async def report(pilot):
        await settle(pilot)
        pilot.app.open_report(pilot.app.screen.run_id)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=size, run_before=report)


def test_help(snap_compare, runs):
    async def help_screen(pilot):
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=(80, 24), run_before=help_screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_new_run_dialog_scrolled_to_the_last_setting(snap_compare, size):
    async def last_setting(pilot):
        await settle(pilot)
        pilot.app.screen.action_new()
        await until(pilot, lambda: pilot.app.screen.query("#settings .row"))
        pilot.app.screen.query_one("#engine").value = "robogrid"
        await until(pilot, lambda: pilot.app.screen.query("#set-extract"))
        await pilot.pause()
        pilot.app.screen.query_one("#set-extract").focus()  # focusing a field scrolls it into view
        await settle(pilot)

    assert snap_compare(N2FApp(formats=STABLE, demo=False), terminal_size=size, run_before=last_setting)
