"""The run screen: stepping through items, search, filter, sort, the detail, the layout (points 3 and 7)."""

from __future__ import annotations

import pytest

from n2f_tui.screens.run import RunScreen
from n2f_tui.state import WRONG
from n2f_tui.widgets.detail import DetailView
from tui_support import detail_shown, inspect_run, make_run, screen_named, until


@pytest.mark.slow
async def test_step_through_items_with_keys_and_actions():
    await make_run("nav", limit=40)
    async with inspect_run("nav") as (app, pilot):
        screen: RunScreen = app.screen
        state = screen.state
        await until(pilot, lambda: screen.query_one(DetailView).shown is not None)
        assert screen.current == 0
        await pilot.press("j", "j", "k", "down")  # a few real keys; the rest through actions
        assert screen.current == 2
        for _ in range(10):
            screen.action_cursor(1)
        assert screen.current == 12
        screen.action_first()
        # n / p: next and previous item whose status is not correct
        await pilot.press("n")
        first_wrong = screen.current
        assert state.status(first_wrong) in WRONG
        assert first_wrong > 0 and all(state.status(i) == "correct" for i in range(1, first_wrong))
        screen.action_wrong(1)
        second = screen.current
        assert second > first_wrong and state.status(second) in WRONG
        screen.action_wrong(-1)
        assert screen.current == first_wrong
        screen.action_last()
        assert screen.current == state.total - 1
        # the detail follows the cursor
        await detail_shown(pilot, screen)
        assert screen.query_one(DetailView).shown[0] == screen.current


@pytest.mark.slow
async def test_detail_shows_prompt_output_gold_structure_and_diff():
    await make_run("detail", limit=30)
    async with inspect_run("detail") as (app, pilot):
        screen: RunScreen = app.screen
        screen.action_wrong(1)
        index = screen.current
        await detail_shown(pilot, screen)
        text = " ".join(screen.query_one(DetailView).text().split())  # wrapped lines joined
        record = screen.state.record(index)
        item = screen.state.items[index]
        assert "Prompt: answer (user)" in text
        assert "For a given question of tabular reasoning" in text  # the prompt itself
        assert "Output (raw)" in text and " ".join(record["outputs"][0].split())[:25] in text
        assert "Gold" in text and " ".join(item.gold["answer"].split())[:25] in text
        assert "Parsed structure" in text and "Output DAG" in text and "Gold DAG" in text  # views of kind tree
        assert "Diff: Substituted expression" in text  # views of kind diff
        assert "Engine views" in text and "Summary" in text  # every other view
        for tag in record["tags"]:
            assert tag["code"] in text  # chips and their evidence


@pytest.mark.slow
async def test_search_filter_and_sort():
    await make_run("find", limit=60)
    async with inspect_run("find") as (app, pilot):
        screen: RunScreen = app.screen
        state = screen.state
        # search through the dialog: `/`, type, Enter
        await pilot.press("slash")
        await until(pilot, lambda: screen_named(app, "TextDialog"))
        await pilot.press(*"dedc-01", "enter")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert state.order and all(state.items[i].id.startswith("dedc-01") for i in state.order)
        # search the question text and the outputs too
        question = state.items[5].inputs["question"]
        state.set_query(question[:40])
        assert 5 in state.order
        output = state.record(7)["outputs"][0]
        state.set_query(output[:30])
        assert 7 in state.order
        screen.action_back()  # Escape clears search and filter first
        assert len(state.order) == state.total and screen_named(app, "RunScreen")
        # filter by status and by tag, through the dialog once
        await pilot.press("f")
        await until(pilot, lambda: screen_named(app, "ChoiceDialog") and app.screen.query_one("OptionList").option_count)
        app.screen.dismiss("not-correct")
        await until(pilot, lambda: state.filter == "not-correct")
        assert state.order and all(state.status(i) in WRONG for i in state.order)
        code = next(code for r in state.records.values() for code in r["tags"])
        state.set_filter(f"tag:{code}")
        screen.relist()
        assert state.order and all(code in state.tags(i).codes for i in state.order)
        await detail_shown(pilot, screen)
        assert screen.query_one(DetailView).shown[0] == state.order[0]
        state.set_filter("all")
        # sort through the dialog once (status), then score and back to the run order
        screen.action_sort()
        await until(pilot, lambda: screen_named(app, "ChoiceDialog") and app.screen.query_one("OptionList").option_count)
        app.screen.dismiss("status")
        await until(pilot, lambda: state.sort == "status")
        ranks = [state.status(i) for i in state.order]
        assert ranks.index("correct") > max(ranks.index(s) for s in ("wrong", "unparseable") if s in ranks)
        state.set_sort("score")
        scores = [state.main_score(i) for i in state.order]
        assert scores == sorted(scores)
        state.set_sort("index")
        assert list(state.order) == list(range(state.total))


@pytest.mark.slow
async def test_layout_is_stacked_at_80x24_and_side_by_side_when_wide():
    await make_run("layout", limit=10)
    async with inspect_run("layout", size=(80, 24)) as (app, pilot):
        detail = app.screen.query_one(DetailView)
        await until(pilot, lambda: detail.stacked)
        assert not app.screen.query_one("#col-output").display
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: not detail.stacked)
        assert app.screen.query_one("#col-output").display and app.screen.query_one("#col-views").display
        assert "Output (raw)" in app.screen.query_one("#col-output").plain
