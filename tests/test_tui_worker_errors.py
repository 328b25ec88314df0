"""One error rule for every worker of the inspector (n2f_tui.workers.guarded_work): an exception nobody
expected, injected into each worker in turn, becomes a toast and a line in the error log (with its
traceback, opened from the command palette), while the screen stays and a run going on goes on."""

from __future__ import annotations

import ast
import re
from contextlib import asynccontextmanager
from pathlib import Path

from n2f_tui.app import N2FApp
from n2f_tui.screens.adjudication import AdjudicationScreen
from n2f_tui.screens.compare import CompareScreen
from n2f_tui.screens.editor import EditorScreen
from n2f_tui.screens.errors import ErrorLogScreen
from n2f_tui.screens.home import HomeScreen
from n2f_tui.screens.newrun import NewRunDialog
from n2f_tui.screens.report import ReportScreen
from n2f_tui.screens.run import RunScreen
from n2f_tui.widgets.style import STABLE
from sessions import api
from sessions.store.runs import RunStore
from tui_support import make_run, until


def injected(*args, **kwargs):
    raise KeyError("injected")


@asynccontextmanager
async def inspector(run: str | None = None):
    """The inspector (on ``run``, if given) with a slow run going on beside, which must survive."""
    await make_run("done", limit=6)
    app = N2FApp(run=run, formats=STABLE, demo=False)
    app.told = []  # every toast, kept: under load one may time out before the test looks
    notify = app.notify

    def recorded(message, *args, **kwargs):
        app.told.append(message)
        return notify(message, *args, **kwargs)

    app.notify = recorded
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen if run else HomeScreen))
        beside = app.start_job(await api.prepare_run("dedc", [], model="sim:latency=0.1", limit=400,
                                                     concurrency=1, name="beside"))
        yield app, pilot
        assert app.is_running and not beside.done and beside.run_id in app.jobs  # the run went on


async def shown(app, pilot, what: str, screen_type: type) -> None:
    """``what`` failed with the injected error: logged with its traceback, toasted, the screen still there."""
    await until(pilot, lambda: any(e.what == what for e in app.errors.entries))
    entry = next(e for e in app.errors.entries if e.what == what)
    assert entry.message == "KeyError: 'injected'" and "Traceback" in entry.details and "injected" in entry.details
    assert any(message.startswith(f"{what} failed: KeyError: 'injected'") for message in app.told)
    assert isinstance(app.screen, screen_type)


async def test_the_report_worker(monkeypatch):
    monkeypatch.setattr(api, "build_report", injected)
    async with inspector("done") as (app, pilot):
        app.open_report(app.screen.run_id)
        await shown(app, pilot, "build", ReportScreen)


async def test_the_home_screens_summaries_worker(monkeypatch):
    from sessions.store.runs import RunStore

    monkeypatch.setattr(RunStore, "summary", injected)
    async with inspector() as (app, pilot):
        await shown(app, pilot, "load summaries", HomeScreen)


async def test_the_home_screens_rescore_worker(monkeypatch):
    monkeypatch.setattr(api, "rescore", injected)
    async with inspector() as (app, pilot):
        app.screen.rescore("done")
        await shown(app, pilot, "rescore", HomeScreen)


async def test_the_run_screens_detail_worker(monkeypatch):
    monkeypatch.setattr(api, "score_detail", injected)
    async with inspector("done") as (app, pilot):
        item_id = app.screen.state.ids[app.screen.current]
        await shown(app, pilot, f"re-scoring {item_id}", RunScreen)


async def test_the_run_screens_metrics_worker(monkeypatch):
    monkeypatch.setattr("n2f_tui.screens.run_live.header_metrics", injected)
    async with inspector("done") as (app, pilot):
        await shown(app, pilot, "live metrics", RunScreen)
        # and the header says so, once the worker has handed its figures over (just after the log entry)
        await until(pilot, lambda: app.screen.metrics == {"report error": "'injected'"})


async def test_the_editors_rerun_worker(monkeypatch):
    monkeypatch.setattr("sessions.run.attempts.rerun_item", injected)
    async with inspector("done") as (app, pilot):
        app.screen.action_edit()
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        await pilot.press("ctrl+s")
        await shown(app, pilot, "rerun", EditorScreen)


async def test_the_editors_fork_worker(monkeypatch):
    async with inspector("done") as (app, pilot):
        app.screen.action_edit()
        await until(pilot, lambda: isinstance(app.screen, EditorScreen))
        monkeypatch.setattr(app, "resume_run", injected)
        app.screen.start_fork("a-fork")
        await shown(app, pilot, "start fork", EditorScreen)


async def test_the_new_run_dialogs_start_worker():
    async with inspector() as (app, pilot):
        app.screen.action_new()
        await until(pilot, lambda: isinstance(app.screen, NewRunDialog) and app.screen.query("#settings .row"))
        app.screen.start = injected
        app.screen.start_run()
        await shown(app, pilot, "start run", NewRunDialog)


async def test_the_compare_screens_paired_worker(monkeypatch):
    monkeypatch.setattr("sessions.study.paired.paired_comparison", injected)
    async with inspector() as (app, pilot):
        await make_run("other", limit=6, seed=1)
        app.open_compare("done", "other")
        await shown(app, pilot, "work out paired", CompareScreen)


async def test_the_compare_screens_views_worker(monkeypatch):
    read = api.item_detail

    def judged_fails(*args, scored=True, **kwargs):
        """Reading a side (on the event loop) works; judging it (the worker's part) fails."""
        return injected() if scored else read(*args, scored=False, **kwargs)

    async with inspector() as (app, pilot):
        await make_run("other", limit=6, seed=1)
        monkeypatch.setattr(api, "item_detail", judged_fails)
        app.open_compare("done", "other")
        await shown(app, pilot, "judge sides", CompareScreen)


async def test_the_adjudication_queues_case_worker(monkeypatch):
    async with inspector() as (app, pilot):
        store = RunStore.open("done")
        item_id = store.item_ids()[0]
        for name, code in (("ada", "omission"), ("bob", "redundancy")):
            store.annotations(name).add(item_id, "tag_add", code=code, label=code, blind=True)
            store.annotations(name).add(item_id, "reviewed", blind=True)
        monkeypatch.setattr(api, "item_detail", injected)
        app.push_screen(AdjudicationScreen(store, "lead"))
        await shown(app, pilot, "load detail", AdjudicationScreen)


def test_every_guarded_worker_of_the_inspector_has_a_test_here():
    """A new ``@guarded_work`` method without a test above fails here, naming it."""
    source = Path(__file__).read_text(encoding="utf-8")
    tested = set(re.findall(r'shown\(app, pilot, f?"([a-z ]+)', source)) | {"re-scoring"}
    workers = set()
    for path in (Path(__file__).resolve().parents[1] / "n2f_tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    "guarded_work" in ast.unparse(d) for d in node.decorator_list):
                workers.add((path.name, node.name.strip("_").replace("_", " ")))
    named = {"score detail": "re-scoring", "refresh metrics": "live metrics"}  # the names their log lines use
    untested = sorted(f"{file}: {what}" for file, what in workers if named.get(what, what) not in tested)
    assert len(workers) >= 11 and not untested, untested


async def test_the_error_log_opens_from_the_command_palette_and_a_repeat_is_counted():
    async with inspector() as (app, pilot):
        app.report_error("live metrics", KeyError("injected"))
        app.report_error("live metrics", KeyError("injected"))  # the same again: counted, not toasted twice
        assert len(app.errors.entries) == 1 and app.errors.entries[0].count == 2
        await pilot.pause()
        assert sum("live metrics failed" in n.message for n in app._notifications) == 1
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Error log"].callback()
        await until(pilot, lambda: isinstance(app.screen, ErrorLogScreen) and app.screen.query_one("#error-log"))
        text = str(app.screen.query_one("#error-log").content)
        assert "live metrics: KeyError: 'injected' (×2)" in text
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen))
