"""Usage in the inspector (the run header and report) and a smoke group on the home screen."""

from __future__ import annotations

from textual.widgets import DataTable, Static

import pytest

from engines import engine_names
from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from n2f_tui.widgets.progress import progress_text
from sessions.config import Price
from sessions.run.smoke import run_smoke
from sessions.run.usage import Usage
from tui_support import screen_named, until


def test_the_run_header_shows_tokens_and_cost_once_there_are_any():
    meta = {"name": "r", "engine": "dedc", "model": "openai:m", "settings": {}}
    counts = {"correct": 1, "pending": 0}
    assert "tokens" not in progress_text(meta, counts, 1, "finished", usage=Usage()).plain
    line = progress_text(meta, counts, 1, "finished", usage=Usage(1000, 234)).plain
    assert "1,234 tokens (1,000 in / 234 out)" in line and "$" not in line
    priced = progress_text(meta, counts, 1, "finished", usage=Usage(1_000_000, 500_000), price=Price(0.15, 0.6)).plain
    assert "1,500,000 tokens (1,000,000 in / 500,000 out) · $0.4500" in priced


@pytest.mark.slow
async def test_home_shows_a_smoke_group_and_opens_each_of_its_runs():
    group, rows = await run_smoke("sim", n=2)
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        home = app.screen
        table = home.query_one(DataTable)
        assert table.row_count == len(engine_names())
        opened = []
        for row in range(table.row_count):
            table.move_cursor(row=row)
            await pilot.pause()
            info = str(home.query_one("#run-info", Static).render())
            assert f"group {group}: {len(rows)} runs" in info
            await pilot.press("enter")
            await until(pilot, lambda: screen_named(app, "RunScreen"))
            opened.append(app.screen.state.store.meta["name"])
            await pilot.press("escape")
            await until(pilot, lambda: screen_named(app, "HomeScreen"))
    assert sorted(opened) == sorted(f"{group}-{engine}" for engine in engine_names())
