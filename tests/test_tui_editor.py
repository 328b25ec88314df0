"""Debugging a prompt live: edit the template, re-run one item, attempts kept, fork as a new run (point 5)."""

from __future__ import annotations

from textual.widgets import TextArea

import pytest

from engines.dedc.prompts import DEFAULT_TEMPLATE
from n2f_tui.screens.editor import EditorScreen
from sessions.run.attempts import list_attempts
from sessions.store.runs import RunStore, list_run_meta
from tui_support import inspect_run, make_run, screen_named, until


@pytest.mark.slow
async def test_edit_rerun_one_item_then_fork_the_run():
    await make_run("prompted", limit=12)
    async with inspect_run("prompted") as (app, pilot):
        run_screen = app.screen
        run_screen.action_wrong(1)
        index = run_screen.current
        item_id = run_screen.state.items[index].id
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        editor = app.screen
        area = editor.query_one(TextArea)
        assert area.text == DEFAULT_TEMPLATE  # the run's template for this item's step
        # typing re-runs nothing
        area.insert("Think step by step.\n", (0, 0))
        await pilot.pause()
        assert list_attempts(run_screen.state.store, item_id) == []
        # Ctrl+S saves and re-runs this one item; the attempt shows beside the stored result
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(editor.attempts) == 1)
        attempts = list_attempts(run_screen.state.store, item_id)
        assert len(attempts) == 1 and attempts[0]["templates"]["answer"].startswith("Think step by step.")
        assert "Think step by step." in attempts[0]["prompts"][0]["messages"][0]["content"]
        assert "Attempt #1" in editor.query_one("#ed-attempt").plain
        assert "Stored result" in editor.query_one("#ed-original").plain
        await pilot.press("ctrl+s")
        await until(pilot, lambda: len(editor.attempts) == 2)  # every attempt is kept
        assert editor.query_one("OptionList").option_count == 2
        # a bad placeholder is reported, nothing stored
        area.insert("{nonsense}", (0, 0))
        editor.action_rerun()
        await until(pilot, lambda: "could not re-run" in editor.query_one("#ed-attempt").plain)
        assert "unknown placeholder" in editor.query_one("#ed-attempt").plain
        assert len(list_attempts(run_screen.state.store, item_id)) == 2
        area.load_text("Think step by step.\n" + DEFAULT_TEMPLATE)
        # Escape keeps the draft; e reopens it
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert run_screen.state.drafts["answer"].startswith("Think step by step.")
        # Ctrl+N: the edited template over the whole run, as a new run that starts at once
        run_screen.action_edit()
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await pilot.press("ctrl+n")
        await until(pilot, lambda: screen_named(app, "TextDialog"))
        await pilot.press(*"stepwise", "enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and app.screen.state.store.meta.get("name") == "stepwise")
        await until(pilot, lambda: not app.jobs and len(app.screen.state.records) == 12)
    fork = RunStore.open("stepwise")
    assert fork.meta["templates"]["answer"].startswith("Think step by step.")
    assert fork.meta["forked_from"] == RunStore.open("prompted").id
    assert fork.meta["status"] == "finished" and len(list_run_meta()) == 2
