"""The new-run form (issue 16, point 6): every setting reachable at 80x24, focus on the first
field, only shown fields take the focus, the last engine and values remembered."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from engines import get_engine
from engines.core import settings_fields
from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from sessions.store.form_memory import load_form_memory
from sessions.store.runs import RunStore
from tui_support import screen_named, until


async def open_dialog(pilot, app):
    await until(pilot, lambda: screen_named(app, "HomeScreen"))
    await pilot.press("n")
    await until(pilot, lambda: screen_named(app, "NewRunDialog") and app.screen.query("#settings .row"))
    return app.screen


async def scrolled(pilot) -> None:
    """The form scrolls to a newly focused field after a refresh, smoothly: wait for both."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def choose_engine(pilot, dialog, name: str) -> None:
    dialog.query_one("#engine", Select).value = name
    first = settings_fields(get_engine(name).settings_type)[0].name
    await until(pilot, lambda: dialog.query(f"#set-{first}"))
    await pilot.pause()


@pytest.mark.parametrize("name", ["rgp", *(pytest.param(n, marks=pytest.mark.slow) for n in
                                          ("dedc", "robogrid", "logic", "compost"))])
async def test_every_setting_of_each_engine_is_a_visible_field_at_80x24(name):
    """Tab through the form: each field scrolls into view, smoothly (animations on, as a user sees
    them). rgp, the shortest form, is in the fast suite; the others are slow."""
    app = N2FApp(formats=STABLE, demo=False)
    app.animation_level = "full"
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        assert app.focused is dialog.query_one("#engine")  # the first field has the focus
        form = dialog.query_one("#form")
        await choose_engine(pilot, dialog, name)
        wanted = [f"set-{f.name}" for f in settings_fields(get_engine(name).settings_type)]
        reached = []
        dialog.query_one("#engine").focus()
        await scrolled(pilot)
        for _ in range(len(wanted) + 10):
            dialog.focus_next()
            await scrolled(pilot)
            focused = app.focused
            if focused.id in ("cancel", "start"):
                break
            assert form.region.contains_region(focused.region), f"{focused.id} is focused but not shown"
            reached.append(focused.id)
        assert [i for i in reached if i.startswith("set-")] == wanted
        assert reached[:5] == ["model", "limit", "concurrency", "seed", "name"]


async def test_typing_goes_into_the_field_that_is_shown_the_last_setting_scrolled_to():
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(pilot, app)
        form = dialog.query_one("#form")
        await choose_engine(pilot, dialog, "robogrid")
        shots = dialog.query_one("#set-shots", Input)
        shots.focus()
        await scrolled(pilot)
        assert form.region.contains_region(shots.region)
        shots.value = ""
        await pilot.press("2")
        assert shots.value == "2"


async def test_the_form_remembers_the_last_engine_and_values_across_openings_and_sessions():
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(pilot, app)
        await choose_engine(pilot, dialog, "robogrid")
        dialog.query_one("#set-count", Input).value = "3"
        dialog.query_one("#set-task", Input).value = "judge"
        dialog.query_one("#model", Input).value = "oracle"
        dialog.query_one("#limit", Input).value = "2"
        # another engine and back: what was typed for robogrid is still there
        await choose_engine(pilot, dialog, "dedc")
        assert dialog.query_one("#set-repeat", Input).value == "1"
        await choose_engine(pilot, dialog, "robogrid")
        assert dialog.query_one("#set-count", Input).value == "3"
        await pilot.press("escape")  # cancelled: still remembered
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        dialog = await open_dialog(pilot, app)
        assert dialog.query_one("#engine", Select).value == "robogrid"
        assert dialog.query_one("#set-count", Input).value == "3"
        assert dialog.query_one("#set-task", Input).value == "judge"
        assert dialog.query_one("#model", Input).value == "oracle"
        dialog.query_one("#name", Input).value = "remembered"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen_named(app, "RunScreen") and not app.jobs)
    meta = RunStore.open("remembered").meta
    assert meta["engine"] == "robogrid" and meta["settings"]["count"] == 3 and meta["total"] == 2
    assert load_form_memory().settings["robogrid"] == {"count": "3", "task": "judge"}
    # a new session opens the form where the last one left it (the name is not carried over)
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(pilot, app)
        assert dialog.query_one("#engine", Select).value == "robogrid"
        assert dialog.query_one("#set-count", Input).value == "3"
        assert dialog.query_one("#limit", Input).value == "2"
        assert dialog.query_one("#name", Input).value == ""
