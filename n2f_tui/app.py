"""The inspector: a Textual app over the sessions layer.

The app owns the runs going on (``jobs``: the runner of each as an asyncio task in
the app's own event loop) so a run keeps going while the user moves between screens;
quitting cancels them cleanly (results flushed, status ``cancelled``, resumable).
Screens only present: they call ``sessions`` and ``engines`` and draw what comes back.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import Any, Iterable

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from engines import problems as engine_problems
from engines.core import EngineError
from n2f_tui.jobs import RunJob
from n2f_tui.screens.errors import ErrorLog, ErrorLogScreen
from n2f_tui.screens.home import HomeScreen
from n2f_tui.widgets.style import LIVE, Formats
from sessions import api
from sessions.collector import COLLECTOR
from sessions.errors import N2FError
from sessions.backends.models import problems as backend_problems
from sessions.store.index import list_run_meta

DEMO_MODEL = "sim:latency=0.05"
DEMO_CONCURRENCY = 4
GC_TICK = 0.25
INPUT_WINDOW = 0.3  # seconds after a key press during which runners yield longer
INPUT_PAUSE = 0.004


class N2FApp(App[None]):
    """``n2f``: the runs, live progress, items side by side, tags, prompt debugging."""

    TITLE = "n2f"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
    ]
    CSS = """
    Screen { background: $background; }
    """

    def __init__(self, run: str | None = None, formats: Formats = LIVE, demo: bool = True,
                 demo_model: str = DEMO_MODEL, annotator: str = "", blind: bool = False) -> None:
        """``formats`` writes dates, rates and run ids (snapshot tests pass ``STABLE``)."""
        super().__init__()
        self.formats = formats
        self.annotator = annotator  # whose labels run screens write and show; empty: the login name
        self.blind = blind  # run screens open in blind mode (automatic tags hidden)
        self.initial_run = run
        self.demo = demo
        self.demo_model = demo_model
        self.jobs: dict[str, RunJob] = {}
        self.last_job_error: dict[str, BaseException] = {}
        self.errors = ErrorLog()  # what report_error was told this session (ctrl+p → Error log)
        self._gc_ticks = 0
        self.input_at = 0.0

    # ---------------------------------------------------------------- start

    async def on_mount(self) -> None:
        self.set_interval(GC_TICK, self._collect_garbage)
        # a run opened at start is what is shown: the other runs' results are read when the list is
        await self.push_screen(HomeScreen(summaries_at_mount=not self.initial_run))
        for line in engine_problems() + backend_problems():  # a broken plugin is named once; the others work
            self.notify(line, severity="warning", markup=False, timeout=10)
        if self.initial_run:
            self.open_run(self.initial_run)
        elif self.demo and not list_run_meta():
            await self.start_demo()

    async def start_demo(self) -> None:
        """A fresh store: DEDC on the simulator, with a little latency so it is visibly live."""
        try:
            prepared = await api.prepare_run("dedc", (), model=self.demo_model, concurrency=DEMO_CONCURRENCY,
                                             name="demo")
        except (N2FError, EngineError) as exc:
            self.notify(f"demo run: {exc}", severity="error", markup=False)
            return
        self.start_job(prepared)
        self.open_run(prepared.store.id)

    # ----------------------------------------------------------------- jobs

    def start_job(self, prepared: api.PreparedRun) -> RunJob:
        job = RunJob(prepared, on_done=self._job_done, pause_for=self._runner_pause)
        self.jobs[job.run_id] = job
        COLLECTOR.pause()  # one pause per job, ended in _job_done (see _collect_garbage)
        job.start()
        return job

    def _job_done(self, job: RunJob) -> None:
        if self.jobs.pop(job.run_id, None) is not None:
            COLLECTOR.refreeze()  # what the run left stays out of passes while a run screen holds it
            COLLECTOR.unpause()
        if job.error is not None:
            self.last_job_error[job.run_id] = job.error

    def _runner_pause(self) -> float:
        """How long a runner worker steps aside after an item: briefly, right after input."""
        return INPUT_PAUSE if time.monotonic() - self.input_at < INPUT_WINDOW else 0.0

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.input_at = time.monotonic()
        await super().on_event(event)

    def _collect_garbage(self) -> None:
        """While runs go on (automatic collection paused, see ``sessions.collector``), collect the
        youngest generation every quarter second and freeze the survivors every second: cyclic
        garbage dies young, so what is frozen is what stays alive anyway."""
        if not self.jobs:
            return
        COLLECTOR.collect_young()
        self._gc_ticks += 1
        if self._gc_ticks % 4 == 0:
            COLLECTOR.refreeze()

    async def resume_run(self, run_id: str, open_screen: bool = True) -> RunJob | None:
        if run_id in self.jobs:
            if open_screen:
                self.open_run(run_id)
            return self.jobs[run_id]
        try:
            prepared = await api.prepare_resume(run_id)
        except (N2FError, EngineError) as exc:
            self.notify(str(exc), severity="error", markup=False)
            return None
        if not prepared.runner.store.pending_indices():
            prepared.store.close()
            await prepared.backend.aclose()
            self.notify("nothing left to run: every item has a result", timeout=3)
            return None
        job = self.start_job(prepared)
        if open_screen:
            self.open_run(run_id)
        return job

    async def stop_jobs(self) -> None:
        jobs = list(self.jobs.values())
        for job in jobs:
            job.cancel()
        await asyncio.gather(*(job.stop() for job in jobs), return_exceptions=True)

    # -------------------------------------------------------------- screens

    def open_run(self, run_id: str) -> None:
        from n2f_tui.screens.run import RunScreen

        try:
            screen = RunScreen(run_id)
        except (N2FError, EngineError) as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.push_screen(screen)

    def open_report(self, run_id: str) -> None:
        from n2f_tui.screens.report import ReportScreen

        if not self.refuses_in_blind("report"):
            self.push_screen(ReportScreen(run_id))

    def open_compare(self, a: str, b: str) -> None:
        from n2f_tui.screens.compare import CompareScreen

        if not self.refuses_in_blind("comparison"):
            self.push_screen(CompareScreen(a, b))

    def refuses_in_blind(self, what: str) -> bool:
        """In blind mode, screens built on the automatic tags stay closed (from every screen)."""
        if self.blind:
            self.notify(f"blind mode hides the {what}: b on a run turns it off", timeout=2)
        return self.blind

    def new_run_dialog(self) -> None:
        from n2f_tui.screens.newrun import NewRunDialog
        from sessions.config import load_config

        try:
            config = load_config()
            model, concurrency = config.default_model, config.concurrency
        except (N2FError, EngineError):
            model, concurrency = "sim", 8

        async def start(request: dict[str, Any]) -> api.PreparedRun:
            return await api.prepare_run(request["engine"], request["settings"], model=request["model"],
                                         seed=request["seed"], limit=request["limit"],
                                         concurrency=request["concurrency"], name=request["name"])

        def started(prepared: api.PreparedRun | None) -> None:
            if prepared is not None:
                self.start_job(prepared)
                self.open_run(prepared.store.id)

        self.push_screen(NewRunDialog(start, model=model, concurrency=concurrency), started)

    def report_error(self, what: str, exc: BaseException) -> None:
        """The one place an unexpected error goes (n2f_tui.workers): a line in the error log with its
        traceback and, unless it repeats the line before, a toast. Nothing else changes: the screen
        stays and the runs go on."""
        entry = self.errors.add(what, exc)
        if entry.count == 1:
            self.notify(f"{what} failed: {entry.message} (ctrl+p → Error log)", severity="error", markup=False,
                        timeout=8)

    def action_error_log(self) -> None:
        if not isinstance(self.screen, ErrorLogScreen):
            self.push_screen(ErrorLogScreen(self.errors))

    def action_help(self) -> None:
        from n2f_tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        """Quit; a run still going is cancelled cleanly (and can be resumed) once the user says yes."""
        from n2f_tui.screens.dialogs import ConfirmDialog

        if not self.jobs:
            await self.quit_now()
            return
        if isinstance(self.screen, ConfirmDialog):  # already asking
            return

        async def confirmed(yes: bool | None) -> None:
            if yes:
                await self.quit_now()

        running = ", ".join(sorted(job.store.label for job in self.jobs.values()))
        self.push_screen(ConfirmDialog(f"Quit? The run going on ({running}) is cancelled; r resumes it later.",
                                       yes="Quit"), confirmed)

    async def quit_now(self) -> None:
        await self.stop_jobs()
        self.exit()

    async def on_unmount(self) -> None:
        await self.stop_jobs()
        for job in list(self.jobs.values()):  # cancelled before its task ever ran: its pause still ends
            self._job_done(job)
        COLLECTOR.waive_pending()  # the screens are closed and the app ends: no full pass for them

    # ------------------------------------------------------ command palette

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every key of the current screen (and the app) is also a command in the palette."""
        from n2f_tui.screens.help import screen_bindings

        yield from super().get_system_commands(screen)
        yield SystemCommand("Error log", f"what went wrong this session ({len(self.errors.entries)} entries)",
                            self.action_error_log)
        seen: set[str] = {"Quit", "Keys"}
        for node, binding in screen_bindings(screen):
            title = binding.description or binding.action
            if title in seen:
                continue
            seen.add(title)
            yield SystemCommand(title, f"key {self.get_key_display(binding)}",
                                partial(self.call_later, self.run_action, binding.action, node))

