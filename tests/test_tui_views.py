"""Compare two runs, the report with its charts, help and the command palette (points 6, 7, 8)."""

from __future__ import annotations

import pytest

from n2f_tui.screens.compare import CompareScreen
from sessions import api
from n2f_tui.screens.help import HelpScreen, key_rows
from n2f_tui.screens.run import RunScreen
from tui_support import inspect_run, make_run, report_text, screen_named, until


@pytest.mark.slow
async def test_compare_two_runs_with_the_different_outcome_filter():
    await make_run("simmed", limit=30)
    await make_run("perfect", limit=30, model="oracle")
    async with inspect_run("simmed") as (app, pilot):
        await pilot.press("C")
        await until(pilot, lambda: screen_named(app, "ChoiceDialog") and app.screen.query_one("OptionList").option_count)
        app.screen.dismiss(app.screen.choices[0][0])
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.rows)
        compare = app.screen
        assert len(compare.rows) == 30 and len(compare.shown) == 30
        wrong_in_a = sum(r.status_a != "correct" for r in compare.rows)
        assert wrong_in_a > 0 and all(r.status_b == "correct" for r in compare.rows)
        await pilot.press("d")
        assert len(compare.shown) == wrong_in_a and all(r.different for r in compare.shown)
        side_a = compare.query_one("#cmp-a").plain
        side_b = compare.query_one("#cmp-b").plain
        assert "A: simmed" in side_a and "B: perfect" in side_b and "Output" in side_b
        row = compare.shown[0]  # a wrong item in A: its evidence, question, output, then its views once judged
        record = compare.records_a[row.index_a]
        detail = api.item_detail(compare.store_a, row.index_a, record, annotations=[])
        await until(pilot, lambda: "scoring…" not in compare.query_one("#cmp-a").plain)
        side_a = " ".join(compare.query_one("#cmp-a").plain.split())
        assert "Question" in side_a and "Output" in side_a
        evidence = [t for t in record["tags"] if t.get("evidence")]
        assert evidence and " ".join(f"{evidence[0]['code']}: {evidence[0]['evidence']}".split())[:60] in side_a
        assert side_a.index("Question") < side_a.index("Output") < side_a.index(detail.verdict.views[0].title)
        assert compare.summary  # comparison_summary, shown in the header
        compare.action_toggle_different()
        assert len(compare.shown) == 30


@pytest.mark.slow
async def test_report_shows_the_engine_tables_and_charts():
    await make_run("reported", limit=60)
    async with inspect_run("reported", size=(120, 40)) as (app, pilot):
        text = await report_text(pilot, app, "accuracy")
        assert "Table 3" in text  # the paper's error-type table, as a table and as bars
        assert "items by error type" in text and "█" in text
        assert "accuracy % by graph_type" in text  # accuracy by complexity, as bars
        assert "Accuracy by gap" in text
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "RunScreen"))


@pytest.mark.slow
async def test_help_lists_every_key_and_the_palette_offers_every_action():
    await make_run("helped", limit=5)
    async with inspect_run("helped", size=(120, 40)) as (app, pilot):
        run_screen = app.screen
        rows = dict((description, keys) for keys, description in key_rows(run_screen))
        listed = {key for keys in rows.values() for key in keys.split(", ")}
        for binding in RunScreen.BINDINGS:  # every key of the screen is listed (j and k share one row)
            assert app.get_key_display(binding) in listed, binding
        quit_keys = next(keys for description, keys in rows.items() if description.startswith("Quit"))
        assert "q" in quit_keys.split(", ") and "?" in rows["Help"]
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        # the command palette: every binding of the screen is a command
        commands = {c.title: c for c in app.get_system_commands(run_screen)}
        for binding in RunScreen.BINDINGS:
            assert binding.description in commands
        assert "Quit" in commands
        index = run_screen.current
        commands["Next"].callback()
        await until(pilot, lambda: run_screen.current == index + 1)
