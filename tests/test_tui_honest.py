"""Issue 16, points 3-5 on a real temp store: tool results in their own titled panes, folded and
expandable; runs that say how they differ from the defaults (a fork's edited template) in home,
the header, the report and compare; ids, tags and metrics shown whole and labelled."""

from __future__ import annotations

import json

import re

from n2f_tui.app import N2FApp
from n2f_tui.screens.compare import CompareScreen
from n2f_tui.screens.editor import EditorScreen, editor_head
from n2f_tui.screens.report import ReportScreen
from n2f_tui.widgets.detail import DetailView
from n2f_tui.widgets.style import STABLE
from sessions.run.attempts import fork_with_templates
from sessions.reports.describe import describe_run, template_hash
from sessions.store.runs import RunStore
from tui_support import inspect_run, make_run, screen_named, until

COMPOST_BIG = 6  # index of the first compost item (seed 0) whose reply matches thousands of rows


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if line.strip().startswith(needle))


async def run_screen(pilot, app):
    await until(pilot, lambda: screen_named(app, "RunScreen") and app.screen.query_one("#header")
                and app.screen.vlist.count)
    return app.screen


async def open_item(pilot, app, index: int) -> DetailView:
    screen = await run_screen(pilot, app)
    screen.vlist.move(index - screen.vlist.cursor)
    detail = screen.query_one(DetailView)
    await until(pilot, lambda: detail.shown is not None and detail.shown[0] == index
                and "Engine views" in detail.text())
    return detail


async def test_compost_query_results_are_a_titled_summary_not_model_output_and_o_expands_them():
    await make_run("kg", limit=8, engine="compost")
    record = RunStore.open("kg").record(COMPOST_BIG)
    assert len(record["outputs"]) == 2 and len(record["outputs"][1]) > 100_000  # the tool's raw result sets
    app = N2FApp(run="kg", formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        detail = await open_item(pilot, app, COMPOST_BIG)
        text = detail.text()
        flowing = " ".join(text.split())  # headings wrap in a narrow column
        assert "Tool result: sparql (step execute)" in flowing and "Output 2" not in flowing
        assert re.search(r"output: vars 1 item, rows [\d,]+ items", " ".join(text.split()))
        assert '"rows": [[' not in text  # the raw JSON is not shown folded
        assert "more rows (o shows all)" in text  # the result-set table shows its head
        await pilot.press("o")  # whole: the result sets as tables of distinct rows with their counts, not JSON
        rows = json.loads(record["outputs"][1])["output"]["rows"]
        total, distinct = len(rows), len({tuple(r) for r in rows})
        assert total > distinct  # the output's solutions repeat
        await until(pilot, lambda: f"output: {total:,} rows, " in " ".join(detail.text().split()), timeout=30)
        flowing = " ".join(detail.text().split())
        assert f"{total:,} rows, {distinct:,} distinct ({total - distinct:,} repeated: SPARQL keeps" in flowing
        assert '"rows"' not in flowing and "more rows (o shows all)" not in flowing
        await pilot.press("o")
        await until(pilot, lambda: "more rows (o shows all)" in detail.text(), timeout=30)


async def test_at_80x24_gold_and_engine_views_come_within_a_screen_or_two():
    await make_run("kg", limit=8, engine="compost")
    await make_run("grids", limit=2, engine="rgp")
    for run, index, views in (("kg", COMPOST_BIG, "Result sets"), ("grids", 0, "Samples: expected and produced")):
        app = N2FApp(run=run, formats=STABLE, demo=False)
        async with app.run_test(size=(80, 24)) as pilot:
            detail = await open_item(pilot, app, index)
            assert detail.stacked
            pane = detail.query_one("#col-prompt").plain
            assert line_of(pane, "Gold") < 3 * 24  # after the verdict, the question's head and the whole reply
            assert line_of(pane, views) < 120
    pane_text = pane
    assert "Tool result: python_sandbox (step run)" in pane_text and "runs: 16 items" in pane_text
    assert "rule_text:" in pane_text and "control: 4 items" in pane_text  # rgp's gold: no raw nested JSON
    assert "[[[0, 0]" not in pane_text


async def test_a_fork_names_its_edited_template_in_home_header_report_and_compare():
    await make_run("base", limit=12)
    await make_run("short", limit=10)
    base = RunStore.open("base")
    edited = "Think step by step.\n" + base.meta["templates"]["answer"]
    fork = fork_with_templates(base, {"answer": edited}, name="stepwise")
    fork.close()
    digest = template_hash(edited)
    label = f"template answer edited (#{digest})"
    assert describe_run(RunStore.open("stepwise").meta).text == label
    assert describe_run(base.meta).text == "defaults"
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        table = app.screen.query_one("DataTable")
        row = [str(cell) for cell in table.get_row(RunStore.open("stepwise").id)]
        assert label in row
        app.open_run(RunStore.open("stepwise").id)
        await run_screen(pilot, app)
        assert label in str(app.screen.query_one("#header").render())
        app.open_report(app.screen.run_id)
        await until(pilot, lambda: isinstance(app.screen, ReportScreen) and "changes" in app.screen.query_one("#report").plain)
        assert label in app.screen.query_one("#report").plain
        app.open_compare(base.id, RunStore.open("stepwise").id)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.rows)
        head = str(app.screen.query_one("#cmp-head").render())
        assert f"template answer #{template_hash(base.meta['templates']['answer'])} → #{digest}" in head
        app.pop_screen()
        app.open_compare(base.id, RunStore.open("short").id)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.rows)
        head = str(app.screen.query_one("#cmp-head").render())
        assert "10 items in both (2 only in A, not compared)" in head  # 12 vs 10: never silently "items 10"


async def test_the_editor_says_when_the_model_ignores_the_prompt():
    await make_run("simmed", limit=4)
    async with inspect_run("simmed") as (app, pilot):
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        head = str(app.screen.query_one("#ed-head").render())
        assert "sim does not read the prompt" in head and "an edit cannot change any outcome" in head
        assert "Ctrl+S saves and re-runs this item as a new attempt (a new random draw" in head
        assert "Ctrl+N runs the whole run with this template as a new run (the run's own draws" in head
    for model in ("oracle", "replay:out.csv"):
        assert "does not read the prompt" in editor_head("x", "answer", model).plain
    real = editor_head("x", "answer", "openai:gpt-4o").plain
    assert "does not read the prompt" not in real and "never from the cache" in real


async def test_list_rows_show_ids_and_tags_whole_and_the_header_labels_metrics():
    await make_run("grid", limit=30, engine="robogrid")
    store = RunStore.open("grid")
    codes = {t["code"] for r in store.results().values() for t in r.get("tags", [])}
    assert codes  # some wrong items carry tags
    for size in ((80, 24), (160, 48)):
        app = N2FApp(run="grid", formats=STABLE, demo=False)
        async with app.run_test(size=size) as pilot:
            screen = await run_screen(pilot, app)
            await until(pilot, lambda: screen.vlist.scrollable_content_region.width > 0)
            width = screen.vlist.scrollable_content_region.width
            for position in range(len(screen.state.order)):
                row = screen.render_row(position).plain
                assert len(row) <= width
                item_id = screen.state.ids[screen.state.order[position]]
                assert item_id in row or ("…" + item_id[-4:]) in row  # whole, or the run-unique tail
                words = re.findall(r"[a-z_]{3,}", row.split("  ", 2)[-1])
                assert all(word in codes for word in words), row  # chips are whole codes (never "boolea")
            await until(pilot, lambda: screen.metrics)  # the header's metrics come from a worker
            assert screen._metrics_cache == {}  # a finished run's results are let go once its figures are made
            header = str(screen.query_one("#header").render())
            assert re.search(r"SVR \d+\.\d%  BER \d+\.\d%  SCR \d+\.\d%", header)
            assert "instruct_svr" not in header and "accuracy_ci" not in header
    async with inspect_run("grid", size=(120, 40)) as (app, pilot):
        app.open_report(app.screen.run_id)
        await until(pilot, lambda: isinstance(app.screen, ReportScreen) and "instruct CSCR" in app.screen.query_one("#report").plain)
        report = app.screen.query_one("#report").plain
        assert "instruct_cscr" not in report.split("Table")[0]  # the head: labels, not raw names
