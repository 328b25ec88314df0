"""The home screen: every run in the store, and what can be done to one.

The list follows the store, whoever writes it: every second the runs folder is listed
(a run made or deleted by another process) and each run's metadata and result index are
stat-ed (``sessions.store.watch.run_signature``); a run whose files changed is read again in a
worker, only the index lines appended since the last look (``RunStore.follow``). Results
are summarised once the screen is shown, never before the first paint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from engines.core import EngineError
from n2f_tui.render import safe_text
from n2f_tui.screens.base import AppScreen
from n2f_tui.screens.dialogs import ConfirmDialog, choose_run_to_compare
from n2f_tui.widgets.style import pct, run_label
from n2f_tui.workers import guarded_work
from sessions.reports.describe import describe_run
from sessions.errors import N2FError
from sessions.paths import runs_dir
from sessions.store.index import list_run_meta
from sessions.store.runs import RunStore
from sessions.store.watch import run_signature
from sessions.store.summary import RunSummary

COLUMNS = ("run", "engine", "model", "changes", "progress", "accuracy", "date")
POLL_EVERY = 2  # ticks of half a second between looks at the runs folder and the runs' files


class HomeScreen(AppScreen):
    TITLE = "n2f"
    SUB_TITLE = "runs"
    DEFAULT_CSS = """
    HomeScreen DataTable { height: 1fr; }
    HomeScreen #run-info { height: auto; max-height: 6; padding: 0 1; background: $panel; }
    """
    BINDINGS = [
        Binding("enter,o", "open", "Open"),
        Binding("n", "new", "New run"),
        Binding("r", "resume", "Resume"),
        Binding("s", "rescore", "Re-score", show=False),
        Binding("d", "delete", "Delete"),
        Binding("c", "compare", "Compare"),
        Binding("R", "report", "Report"),
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("g", "cursor_to(0)", "First run", show=False),
        Binding("G", "cursor_to(-1)", "Last run", show=False),
    ]

    def __init__(self, summaries_at_mount: bool = True) -> None:
        super().__init__()
        self.summaries_at_mount = summaries_at_mount  # False under a run opened at start: read when first shown
        self.metas: list[dict[str, Any]] = []
        self.summaries: dict[str, RunSummary] = {}
        self.followed: dict[str, RunStore] = {}  # one reader per run: its summary.json, or its index tailed
        self.seen: dict[str, tuple[tuple[int, int], ...]] = {}  # run_signature when last summarised
        self._live_ids: set[str] = set()
        self._listed: set[str] = set()  # the runs folder's entries when the metadata was last read
        self._ticks = 0

    def compose(self) -> ComposeResult:
        yield Header()
        table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True, id="runs")
        yield table
        yield Static("", id="run-info", markup=False)
        yield Footer(compact=True, show_command_palette=False)  # fits 80 columns; ctrl+p is listed in `?`

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column)
        self.reload(summaries=False)
        self.set_interval(0.5, self.tick)
        if self.summaries_at_mount:
            self.call_after_refresh(self.summaries_if_shown)
        table.focus()

    def summaries_if_shown(self) -> None:
        """Read the runs' results only when this screen is the one shown (not under a run)."""
        if self.app.screen is self:
            self.load_summaries()

    def on_screen_resume(self) -> None:
        self.reload(summaries=self.summaries_at_mount)
        self.summaries_at_mount = True  # shown from now on: each return to the list reads what changed

    # ------------------------------------------------------------------ data

    def selected(self) -> dict[str, Any] | None:
        table = self.query_one(DataTable)
        if not self.metas or table.cursor_row < 0 or table.cursor_row >= len(self.metas):
            return None
        return self.metas[table.cursor_row]

    def reload(self, summaries: bool = True, metas: list[dict[str, Any]] | None = None) -> None:
        table = self.query_one(DataTable)
        keep = (self.selected() or {}).get("id")
        self._listed = folder_names()
        self.metas = list(reversed(list_run_meta() if metas is None else metas))  # newest first
        present = {m["id"] for m in self.metas}
        for gone in set(self.followed) - present:  # deleted runs: their readers go with them
            del self.followed[gone]
        table.clear()
        for meta in self.metas:
            table.add_row(*self.row(meta), key=meta["id"])
        if keep and any(m["id"] == keep for m in self.metas):
            table.move_cursor(row=[m["id"] for m in self.metas].index(keep))
        self.show_info()
        if summaries:
            self.load_summaries()

    def row(self, meta: dict[str, Any]) -> list[Text]:
        return [
            safe_text(self.n2f.formats.run_label(meta), style="bold"),
            safe_text(meta.get("engine", "")),
            safe_text(meta.get("model", "")),
            safe_text(describe_run(meta).text),
            self.progress_cell(meta),
            self.accuracy_cell(meta),
            safe_text(self.n2f.formats.date(meta.get("created", ""))),
        ]

    def progress_cell(self, meta: dict[str, Any]) -> Text:
        total = int(meta.get("total", 0))
        job = self.n2f.jobs.get(meta["id"])
        if job is not None:
            p = job.progress
            done = total - p.total + p.done
            state = "paused" if job.paused else "running"
            return Text(f"{done}/{total} {state}", style="cyan")
        summary = self._summary(meta)
        if summary is None:  # as wide as the count it stands for, so the column keeps its width
            return Text(f"{'…':>{len(str(total))}}/{total} {meta.get('status', '')}", style="dim")
        text = Text(f"{summary.done}/{total} {meta.get('status', '')}")
        if summary.errors:
            text.append(f" ({summary.errors} err)", style="yellow")
        return text

    def accuracy_cell(self, meta: dict[str, Any]) -> Text:
        job = self.n2f.jobs.get(meta["id"])
        if job is not None:
            return Text(pct(job.progress.accuracy if job.progress.done else None))
        summary = self._summary(meta)
        return Text("…" if summary is None else pct(summary.accuracy))

    def _summary(self, meta: dict[str, Any]) -> RunSummary | None:
        """The run's figures as last read (a run being re-read keeps showing them until then)."""
        return self.summaries.get(meta["id"])

    def stale(self) -> list[dict[str, Any]]:
        """Runs not run here whose files changed since they were last summarised (a stat each)."""
        return [m for m in self.metas if m["id"] not in self.n2f.jobs
                and self.seen.get(m["id"]) != run_signature(Path(m["_folder"]))]

    @guarded_work(thread=True, exclusive=True, group="summaries")
    def load_summaries(self) -> None:
        for meta in self.stale():
            run_id = meta["id"]
            signature = run_signature(Path(meta["_folder"]))
            try:
                store = self.followed.get(run_id) or RunStore(Path(meta["_folder"]))
                meta_changed = store.refresh_meta()  # the status the writer left; the index is read only
                # by a run without a current summary.json (sessions.store.summary), and then tailed
                summary = store.summary()
            except (N2FError, OSError, ValueError):
                store, meta_changed, summary = None, False, RunSummary()
            if store is not None:
                self.followed[run_id] = store
            self.summaries[run_id] = summary
            self.seen[run_id] = signature
            fresh_meta = dict(store.meta) if store is not None and meta_changed else None
            self.app.call_from_thread(self.update_row, run_id, fresh_meta)

    def update_row(self, run_id: str, fresh_meta: dict[str, Any] | None = None) -> None:
        table = self.query_one(DataTable)
        meta = next((m for m in self.metas if m["id"] == run_id), None)
        if meta is None:
            return
        if fresh_meta is not None:  # its status (finished, cancelled) as the writer left it
            meta.update({k: v for k, v in fresh_meta.items() if k != "_folder"})
            if meta is self.selected():
                self.show_info()
        try:
            table.update_cell(run_id, "progress", self.progress_cell(meta), update_width=True)
            table.update_cell(run_id, "accuracy", self.accuracy_cell(meta), update_width=True)
        except Exception:  # the row went away (deleted) meanwhile
            pass

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks % POLL_EVERY == 0:
            self.poll_store()
        running = set(self.n2f.jobs)
        for run_id in running:
            self.update_row(run_id)
        if self._live_ids - running and self.app.screen is self:  # a run stopped: read its results back
            self.load_summaries()
        self._live_ids = running

    def poll_store(self) -> None:
        """Runs made or deleted by another process: re-read the metadata when the folder changed.

        A folder whose metadata is not written yet keeps the folder "changed", so it is
        looked at again on the next poll rather than missed.
        """
        if self.app.screen is self and self.stale():
            self.load_summaries()
        names = folder_names()
        if names == self._listed:
            return
        metas = list_run_meta()
        if {m["id"] for m in metas} != {m["id"] for m in self.metas}:
            self.reload(metas=metas, summaries=self.app.screen is self)
        read = {Path(m["_folder"]).name for m in metas}
        self._listed = names if names <= read else set()

    def show_info(self) -> None:
        meta = self.selected()
        info = self.query_one("#run-info", Static)
        if meta is None:
            info.update(Text("no runs yet: n starts one", style="italic"))
            return
        text = Text()
        run_id = self.n2f.formats.run_id(meta["id"])
        if run_id:
            text.append_text(safe_text(f"{run_id}  ", style="bold"))
        text.append_text(safe_text(f"{meta.get('engine')} · {meta.get('model')} · seed {meta.get('seed')} · "
                                   f"{meta.get('total')} items · {meta.get('status')}"))
        if meta.get("name") == "demo" and str(meta.get("model", "")).startswith("sim"):
            text.append("  the demo: a simulated model, no real one called · n starts your own run", style="italic cyan")
        text.append("\n")
        description = describe_run(meta)
        text.append_text(safe_text(f"changes: {description.text}"
                                   + (f" · forked from {description.forked_from}" if description.forked_from else "")))
        text.append("\n")
        text.append_text(safe_text(" ".join(f"{k}={v}" for k, v in meta.get("settings", {}).items()), style="dim"))
        group = meta.get("group")
        if group:
            members = [m for m in self.metas if m.get("group") == group]
            text.append_text(safe_text(f"  group {group}: {len(members)} runs "
                                       f"({', '.join(str(m.get('engine')) for m in members)})", style="cyan"))
        text.append("\n")
        text.append("enter open · n new · r resume · s re-score · d delete · c compare · R report", style="dim")
        info.update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_info()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    # --------------------------------------------------------------- actions

    def action_cursor(self, delta: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=max(0, table.cursor_row + delta))

    def action_cursor_to(self, row: int) -> None:
        table = self.query_one(DataTable)
        table.move_cursor(row=row if row >= 0 else max(0, table.row_count - 1))

    def action_open(self) -> None:
        meta = self.selected()
        if meta:
            self.n2f.open_run(meta["id"])

    def action_new(self) -> None:
        self.n2f.new_run_dialog()

    async def action_resume(self) -> None:
        meta = self.selected()
        if meta:
            await self.n2f.resume_run(meta["id"])

    def action_rescore(self) -> None:
        meta = self.selected()
        if meta:
            self.rescore(meta["id"])

    @guarded_work(thread=True, group="rescore")
    def rescore(self, run_id: str) -> None:
        from sessions import api

        try:
            store, changed = api.rescore(run_id)
        except (N2FError, EngineError) as exc:
            self.app.call_from_thread(self.notify, str(exc), severity="error", markup=False)
            return
        message = (f"{store.label}: re-scored {changed['rescored']} item(s), {changed['changed']} changed, "
                   f"{changed['skipped']} in status error left for resume")
        self.app.call_from_thread(self.notify, message, markup=False)
        self.app.call_from_thread(self.after_rescore, run_id)

    def after_rescore(self, run_id: str) -> None:
        self.reload()

    def action_delete(self) -> None:
        meta = self.selected()
        if not meta:
            return
        if meta["id"] in self.n2f.jobs:
            self.notify("this run is running: cancel it first", severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            from sessions.store.runs import delete_run

            try:
                label = delete_run(meta["id"])
            except (N2FError, OSError) as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            self.notify(f"deleted run {label}", markup=False)
            self.reload()

        self.app.push_screen(ConfirmDialog(f"Delete run {run_label(meta)}: its results, items and annotations?\n"
                                           "This cannot be undone.", yes="Delete"), confirmed)

    def action_compare(self) -> None:
        meta = self.selected()
        if meta:
            choose_run_to_compare(self, meta, self.metas, f"Compare {run_label(meta)} with")

    def action_report(self) -> None:
        meta = self.selected()
        if meta:
            self.n2f.open_report(meta["id"])


def folder_names() -> set[str]:
    try:
        return set(os.listdir(runs_dir()))
    except OSError:
        return set()
