"""Tags and annotation from the run screen, kept across restarts and re-scoring; the agreement view (point 4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from n2f_tui.screens.agreement import AgreementScreen
from n2f_tui.widgets.detail import DetailView
from sessions import api
from sessions.store.runs import RunStore
from tui_support import detail_shown, inspect_run, make_run, screen_named, until


async def choose(pilot, app, key: str) -> None:
    await until(pilot, lambda: screen_named(app, "ChoiceDialog") and app.screen.query_one("OptionList").option_count)
    app.screen.dismiss(key)
    await until(pilot, lambda: screen_named(app, "RunScreen"))
    await pilot.pause()  # the dialog's callback runs after the screen is popped


@pytest.mark.slow
async def test_annotations_made_in_the_ui_survive_restart_and_rescore():
    await make_run("notes", limit=40)
    async with inspect_run("notes") as (app, pilot):
        screen = app.screen
        state = screen.state
        screen.action_wrong(1)
        wrong = screen.current
        auto = [t.code for t in state.tags(wrong).auto]
        assert auto
        item_id = state.items[wrong].id
        # t: add a tag from the engine's taxonomy (real key, dialog lists the taxonomy)
        await pilot.press("t")
        await until(pilot, lambda: screen_named(app, "TagDialog"))
        offered = [c.code for c in app.screen.codes]
        assert offered[: len(state.engine.taxonomy())] == [t.code for t in state.engine.taxonomy()]
        extra = next(code for code in offered if code not in auto)
        await pilot.press(app.screen.key_of[extra], "enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and extra in state.tags(wrong).manual)
        # x: remove one of the automatic tags
        screen.action_tag_remove()
        await choose(pilot, app, auto[0])
        assert auto[0] in [t.code for t in state.tags(wrong).removed]
        # m: a note; a: accept the remaining tags as reviewed
        await pilot.press("m")
        await until(pilot, lambda: screen_named(app, "TextDialog"))
        await pilot.press(*"scope", "enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and state.tags(wrong).notes)
        position = screen.vlist.cursor
        await pilot.press("a")  # accepted, and on to the next item
        tags = state.tags(wrong)
        assert tags.reviewed and tags.notes == ["scope"]
        assert screen.vlist.cursor == position + 1
        screen.action_cursor(-1)
        await detail_shown(pilot, screen)
        text = screen.query_one(DetailView).text()
        assert extra in text and "note: scope" in text and "reviewed" in text
        # a second item, annotated and then the app is gone without a clean exit of the screen
        screen.action_wrong(1)
        second = state.items[screen.current].id
        screen.action_note()
        await until(pilot, lambda: screen_named(app, "TextDialog") and app.screen.query_one("Input").has_focus)
        app.screen.dismiss("second look")
        await until(pilot, lambda: screen_named(app, "RunScreen") and state.tags(screen.current).notes)
    # every event was written when it was made: a fresh reader sees them all
    events = RunStore.open("notes").annotations().events()
    kinds = [(e["item"], e["kind"], e["code"] or e["text"]) for e in events]
    assert (item_id, "tag_add", extra) in kinds and (item_id, "tag_remove", auto[0]) in kinds
    assert (item_id, "note", "scope") in kinds and (second, "note", "second look") in kinds
    assert all(e["source"] == "manual" and e["time"] for e in events)
    # re-scoring rewrites results, never annotations
    api.rescore("notes")
    async with inspect_run("notes") as (app, pilot):
        state = app.screen.state
        index = next(i for i, item in enumerate(state.items) if item.id == item_id)
        tags = state.tags(index)
        assert extra in tags.manual and tags.reviewed and tags.notes == ["scope"]
        assert auto[0] not in {t.code for t in tags.auto}
        # the filter for annotated items finds both
        state.set_filter("annotated")
        assert {state.items[i].id for i in state.order} == {item_id, second}


@pytest.mark.slow
async def test_agreement_view_shows_precision_recall_kappa_and_disagreeing_items():
    await make_run("agree", limit=40)
    async with inspect_run("agree") as (app, pilot):
        screen = app.screen
        state = screen.state
        screen.action_wrong(1)
        first = screen.current
        state.accept(first)  # agree with the tagger
        screen.action_wrong(1)
        second = screen.current
        removed = state.tags(second).auto[0].code
        state.remove_tag(second, removed)  # disagree on one code
        state.accept(second)
        await pilot.press("A")
        await until(pilot, lambda: isinstance(app.screen, AgreementScreen) and app.screen.rows)
        agreement = app.screen
        assert agreement.reviewed == 2
        row = next(r for r in agreement.rows if r.code == removed)
        assert row.fp == 1 and state.items[second].id in row.disagreeing
        table = agreement.query_one("DataTable")
        assert table.row_count == len(agreement.rows)
        table.move_cursor(row=[r.code for r in agreement.rows].index(removed))
        await pilot.pause()
        options = agreement.query_one("OptionList")
        assert options.option_count == len(row.disagreeing)
        # Enter on a disagreeing item jumps to it in the run
        agreement.dismiss(state.items[second].id)
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert screen.current == second


KILLED_CHILD = """
import asyncio, os, signal
from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE

async def main():
    app = N2FApp(run="killed", formats=STABLE, demo=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while type(app.screen).__name__ != "RunScreen":
            await pilot.pause(0.05)
        screen = app.screen
        screen.action_wrong(1)
        await pilot.press("m")
        while type(app.screen).__name__ != "TextDialog":
            await pilot.pause(0.02)
        await pilot.press(*"typed before the kill", "enter")
        while not screen.state.tags(screen.current).notes:
            await pilot.pause(0.02)
        item_id = screen.state.items[screen.current].id
        await pilot.press("a")
        print(item_id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no clean exit: no flush, no close

asyncio.run(main())
"""


@pytest.mark.slow
async def test_annotations_survive_the_app_being_killed():
    await make_run("killed", limit=20)
    root = Path(__file__).resolve().parent.parent
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD], cwd=root, env=dict(os.environ),
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    item_id = child.stdout.strip()
    events = RunStore.open("killed").annotations().events(item_id)
    assert [(e["kind"], e["text"]) for e in events] == [("note", "typed before the kill"), ("reviewed", events[1]["text"])]
    async with inspect_run("killed", size=(120, 40)) as (app, pilot):
        state = app.screen.state
        index = next(i for i, item in enumerate(state.items) if item.id == item_id)
        assert state.tags(index).notes == ["typed before the kill"] and state.tags(index).reviewed


@pytest.mark.slow
async def test_the_run_screen_shows_tags_another_process_adds():
    await make_run("together", limit=20)
    async with inspect_run("together", annotator="bob") as (app, pilot):  # the inspector shows bob's labels
        screen = app.screen
        index = screen.current
        item_id = screen.state.ids[index]
        row_before = screen.render_row(screen.vlist.cursor).plain
        script = ("import sys; from sessions.store.runs import RunStore; "
                  "RunStore.open('together').annotations(annotator=sys.argv[2]).add(sys.argv[1], 'tag_add', "
                  "code=sys.argv[3], label='')")
        subprocess.run([sys.executable, "-c", script, item_id, "carol", "variable_misuse"], check=True, env=dict(os.environ))
        subprocess.run([sys.executable, "-c", script, item_id, "bob", "redundancy"], check=True, env=dict(os.environ))
        await until(pilot, lambda: "redundancy" in screen.state.tags(index).manual)
        await until(pilot, lambda: "redundancy" in screen.query_one(DetailView).text())
        row = screen.render_row(screen.vlist.cursor).plain
        assert row != row_before and ("redundancy" in row or "+1" in row)  # a chip, whole or counted
        assert "variable_misuse" not in screen.state.tags(index).manual  # carol's label is hers, not bob's
        assert "labels of bob" in str(screen.query_one("#run-state").render())
