"""Snapshots of the main screens at 80x24 and 160x48 (pytest-textual-snapshot).

The data is a finished simulator run with a fixed seed; the app runs with ``frozen=True``
so dates, rates and run ids (which carry a timestamp) are replaced by placeholders.
Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the SVGs in tests/__snapshots__/.
"""

from __future__ import annotations

import pytest

from n2f_tui.app import N2FApp
from tui_support import make_run_sync

SIZES = [(80, 24), (160, 48)]


@pytest.fixture
def runs():
    make_run_sync("base", limit=40, seed=0)
    make_run_sync("gold", limit=40, seed=0, model="oracle")


async def settle(pilot) -> None:
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_home(snap_compare, runs, size):
    assert snap_compare(N2FApp(frozen=True, demo=False), terminal_size=size, run_before=settle)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_run_on_a_wrong_item(snap_compare, runs, size):
    async def wrong_item(pilot):
        await settle(pilot)
        pilot.app.screen.action_wrong(1)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", frozen=True, demo=False), terminal_size=size, run_before=wrong_item)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_report(snap_compare, runs, size):
    async def report(pilot):
        await settle(pilot)
        pilot.app.open_report(pilot.app.screen.run_id)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", frozen=True, demo=False), terminal_size=size, run_before=report)


@pytest.mark.slow
def test_help(snap_compare, runs):
    async def help_screen(pilot):
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", frozen=True, demo=False), terminal_size=(80, 24), run_before=help_screen)
