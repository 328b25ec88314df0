"""Hours of annotation without friction (issue 16, points 7 and 8): search, Escape, accept,
runs made elsewhere, the fork dialog, -j 0, wide panes, the zoom key and the footer.

Cancel and quit asking first, and paused runs keeping their rate, are in test_tui_live.py;
bidi controls in test_tui_hostile.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Footer, Input

from n2f_tui.app import N2FApp
from n2f_tui.cli import main as cli_main
from n2f_tui.screens.editor import EditorScreen
from n2f_tui.widgets.style import STABLE
from sessions.store.runs import list_run_meta
from tui_support import detail_shown, make_run, screen_named, terminal_sizes, until

ROOT = Path(__file__).resolve().parent.parent


async def open_run(pilot, app):
    await until(pilot, lambda: screen_named(app, "RunScreen"))
    screen = app.screen
    await detail_shown(pilot, screen)
    return screen


async def test_search_starts_empty_and_escape_clears_the_filter_then_goes_back():
    await make_run("calm", limit=30)
    app = N2FApp(run="calm", formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_run(pilot, app)
        state = screen.state
        await pilot.press("slash", *"dedc-01", "enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and state.query == "dedc-01")
        narrowed = len(state.order)
        assert 0 < narrowed < state.total
        # `/` again: the field is empty (the search in force is named), Enter does not re-apply it unseen
        await pilot.press("slash")
        await until(pilot, lambda: screen_named(app, "TextDialog"))
        assert app.screen.query_one(Input).value == ""
        assert "dedc-01" in str(app.screen.query_one(".title").render())
        await pilot.press("escape")  # cancelled: the search stays
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert state.query == "dedc-01" and len(state.order) == narrowed
        # Escape: first the search and filter go (and it says what the next Escape does)
        await pilot.press("escape")
        assert screen_named(app, "RunScreen") and state.query == "" and len(state.order) == state.total
        assert any("Escape again" in n.message for n in app._notifications)
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "HomeScreen"))


async def test_accept_moves_on_to_the_next_item():
    await make_run("review", limit=30)
    app = N2FApp(run="review", formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_run(pilot, app)
        screen.action_wrong(1)
        first = screen.current
        await pilot.press("a")
        assert screen.state.tags(first).reviewed and screen.current == first + 1
        await detail_shown(pilot, screen)
        # with the "wrong and not reviewed" filter the accepted item leaves and the next one is shown
        screen.state.set_filter("unreviewed")
        screen.relist()
        screen.move_to(0)
        before = list(screen.state.order)
        await pilot.press("a")
        assert list(screen.state.order) == before[1:] and screen.current == before[1]


async def test_home_shows_a_run_made_by_another_process():
    await make_run("here", limit=5)
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1
        made = subprocess.run([sys.executable, "-m", "n2f_tui", "run", "dedc", "-n", "3", "-q", "--name", "elsewhere"],
                              cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stderr
        await until(pilot, lambda: table.row_count == 2, timeout=15)
        assert "elsewhere" in [str(table.get_row_at(r)[0]) for r in range(2)]


async def test_a_bad_fork_name_keeps_the_dialog_and_what_was_typed():
    await make_run("forkme", limit=6)
    app = N2FApp(run="forkme", formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_run(pilot, app)
        screen.action_edit()
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await pilot.press("ctrl+n")
        await until(pilot, lambda: screen_named(app, "TextDialog"))
        dialog = app.screen
        await pilot.press(*"bad name!", "enter")
        assert app.screen is dialog and dialog.query_one(Input).value == "bad name!"
        assert "letters, digits" in str(dialog.query_one(".error").render())
        dialog.query_one(Input).value = "forkme"  # taken
        await pilot.press("enter")
        assert app.screen is dialog and "exists already" in str(dialog.query_one(".error").render())
        assert len(list_run_meta()) == 1
        dialog.query_one(Input).value = "forked"
        await pilot.press("enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and app.screen.state.store.meta.get("name") == "forked")
        await until(pilot, lambda: not app.jobs)


@pytest.mark.parametrize("command", [["run", "dedc", "-n", "2", "-j", "0"], ["resume", "last", "-j", "0"]])
def test_the_cli_refuses_j_0_as_the_dialog_does(capsys, command):
    assert cli_main(command) == 2
    err = capsys.readouterr().err
    assert err.strip() == "n2f: error: -j must be at least 1"
    assert not list_run_meta()


@pytest.mark.parametrize("size", terminal_sizes((80, 24), (160, 48)))
async def test_the_footer_fits_and_wide_views_scroll_sideways_and_z_zooms(size):
    await make_run("wide", limit=4, engine="robogrid")
    app = N2FApp(run="wide", formats=STABLE, demo=False)
    async with app.run_test(size=size) as pilot:
        screen = await open_run(pilot, app)
        keys = [k for k in screen.query_one(Footer).query("FooterKey")]
        assert [k.key for k in keys][-2:] == ["q", "question_mark"] and {"n", "t", "a", "d", "z"} <= {k.key for k in keys}
        assert all(0 < k.region.width and k.region.right <= size[0] for k in keys), "the footer is cut"
        # the engine views (the trace table) are wider than their pane: it scrolls sideways
        pane = screen.query_one("#col-prompt" if size[0] < 100 else "#col-views")
        await until(pilot, lambda: pane.virtual_size.width > pane.scrollable_content_region.width)
        pane.focus()
        await pilot.pause()
        left = pane.render_line(0).text
        await pilot.press("right", "right", "right")
        await until(pilot, lambda: pane.scroll_x > 0)
        assert pane.render_line(0).text != left
        # z: the focused pane fills the screen; z (or Escape) restores the layout
        await pilot.press("z")
        assert screen.maximized is pane
        await pilot.press("z")
        assert screen.maximized is None
        screen.vlist.focus()
        await pilot.press("z")  # from the item list: the views (the one detail pane when stacked)
        assert screen.maximized is pane
        await pilot.press("escape")
        assert screen.maximized is None and screen_named(app, "RunScreen")
