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
from n2f_tui.screens.newrun import FormScroll
from n2f_tui.screens.run import RunScreen
from n2f_tui.widgets.style import STABLE
from tui_support import make_run_sync, terminal_sizes, until

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


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_home(snap_compare, runs, size):
    assert snap_compare(N2FApp(formats=STABLE, demo=False), terminal_size=size, run_before=settle)


@pytest.mark.slow
@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_run_on_a_wrong_item(snap_compare, runs, size):
    async def wrong_item(pilot):
        await settle(pilot)
        pilot.app.screen.action_wrong(1)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=size, run_before=wrong_item)


@pytest.mark.slow
@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_report(snap_compare, runs, size):
    async def report(pilot):
        await settle(pilot)
        pilot.app.open_report(pilot.app.screen.run_id)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=size, run_before=report)


@pytest.mark.slow
def test_help(snap_compare, runs):
    async def help_screen(pilot):
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=(80, 24), run_before=help_screen)


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_new_run_dialog_scrolled_to_the_last_setting(snap_compare, size):
    async def last_setting(pilot):
        await settle(pilot)
        pilot.app.screen.action_new()
        await until(pilot, lambda: pilot.app.screen.query("#settings .row"))
        pilot.app.screen.query_one("#engine").value = "robogrid"
        # dedc has an extract field too: wait for robogrid's own rows (cot), laid out, before focusing its
        # extract (under load the old field could be focused, then replaced: no scroll, a flaky snapshot)
        await until(pilot, lambda: pilot.app.screen.query("#set-cot") and pilot.app.screen.query_one("#set-extract").region)
        field = pilot.app.screen.query_one("#set-extract")
        field.focus()  # focusing a field scrolls it into view
        form = pilot.app.screen.query_one(FormScroll)
        await until(pilot, lambda: form.region.contains_region(field.region))
        await settle(pilot)

    assert snap_compare(N2FApp(formats=STABLE, demo=False), terminal_size=size, run_before=last_setting)


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_report_after_review(snap_compare, runs, size):
    """After omission is removed and redundancy added on one item: the summary says what was reviewed,
    and the report is scrolled to the automatic vs final counts."""
    from sessions.store.runs import RunStore

    store = RunStore.open("base")
    summaries = store.summaries()
    index = next(i for i, s in sorted(summaries.items()) if "omission" in s["tags"] and "redundancy" not in s["tags"])
    log = store.annotations()
    log.add(store.item_ids()[index], "tag_remove", code="omission")
    log.add(store.item_ids()[index], "tag_add", code="redundancy", label="Redundancy")

    async def report(pilot):
        await settle(pilot)
        pilot.app.open_report(pilot.app.screen.run_id)
        await settle(pilot)
        pane = pilot.app.screen.query_one("#report")
        line = next(k for k, text in enumerate(pane.plain.splitlines()) if "automatic vs final" in text)
        pane.scroll_to(y=line, animate=False, immediate=True)
        await settle(pilot)

    assert snap_compare(N2FApp(run="base", formats=STABLE, demo=False), terminal_size=size, run_before=report)


@pytest.fixture
def engine_runs():
    make_run_sync("kg", limit=8, seed=0, engine="compost")
    make_run_sync("grids", limit=2, seed=0, engine="rgp")
    make_run_sync("instruct", limit=12, seed=0, engine="robogrid")


def on_item(index: int | None, scroll_to: str = ""):
    """Open the run's item ``index`` (None: the first wrong one); stacked, scroll to the line starting ``scroll_to``."""
    async def run_before(pilot):
        await settle(pilot)
        screen = pilot.app.screen
        if index is None:
            screen.action_wrong(1)
        else:
            screen.vlist.move(index - screen.vlist.cursor)
        await settle(pilot)
        detail = screen.query_one("#detail")
        if scroll_to and detail.stacked:
            pane = detail.query_one("#col-prompt")
            line = next(i for i, text in enumerate(pane.plain.splitlines()) if text.strip().startswith(scroll_to))
            pane.scroll_to(0, line, animate=False, immediate=True)
        await settle(pilot)
    return run_before


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_compost_item_with_its_query_results(snap_compare, engine_runs, size):
    assert snap_compare(N2FApp(run="kg", formats=STABLE, demo=False), terminal_size=size, run_before=on_item(6))


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_rgp_item_with_its_grids(snap_compare, engine_runs, size):
    assert snap_compare(N2FApp(run="grids", formats=STABLE, demo=False), terminal_size=size,
                        run_before=on_item(0, scroll_to="Samples"))


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
def test_robogrid_instruct_item(snap_compare, engine_runs, size):
    assert snap_compare(N2FApp(run="instruct", formats=STABLE, demo=False), terminal_size=size, run_before=on_item(None))
