"""The run screen while its run goes on, and the keys that drive the run (pause, cancel, resume).

A timer (every half second) takes the records the runner finished since the last tick, redraws
the visible rows and the header, and the detail if its item changed: nothing is done per
item, so a thousand items a second cost two redraws a second. The engine's headline
metrics are recomputed in a thread, at most every two seconds.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from engines.core import ItemResult
from n2f_tui.run_metrics import header_metrics
from n2f_tui.screens.dialogs import ConfirmDialog
from n2f_tui.screens.run_parts import RunScreenParts
from n2f_tui.widgets.detail import DetailView
from n2f_tui.workers import guarded_work, report_error_from_thread
from sessions import api
from sessions.reports.describe import describe_run
from sessions.collector import COLLECTOR
from sessions.errors import N2FError
from sessions.store.runs import RunStore

if TYPE_CHECKING:
    from n2f_tui.jobs import RunJob

METRICS_EVERY = 2.0


class LiveRunActions(RunScreenParts):
    """Following and driving a live run (``RunScreenParts``: what it uses of ``RunScreen``).

    Its own state, set by ``RunScreen.__init__``, is declared here.
    """

    was_live: bool  # the screen has seen the run's job: when the job ends, the run is read back once
    metrics: dict[str, Any]  # the engine's headline metrics, as the header shows them
    _metrics_at: float  # time.monotonic() of the last recomputation
    _metrics_every: float  # seconds between recomputations (longer when one takes long)
    _metrics_cache: dict[int, tuple[int, ItemResult]]  # engine_metrics' cache: per item, (version, result)
    _live_drawn: tuple[int, int, int, int] | None  # the streamed reply last drawn: (index, id, step, tokens)
    _live_detail: api.ItemDetail | None  # the streamed item's prompt and gold, read once per item

    def tick(self) -> None:
        touched = self.state.refresh_annotations()  # events another window or process wrote
        if touched:
            self.vlist.refresh_rows()
            if self.current in touched:
                self.show_current()
        job = self.job
        if job is None:
            if self.was_live:
                self.finish_live()
            else:
                self.follow_store()
            return
        self.was_live = True
        fresh = job.drain()
        if fresh:
            self.state.apply(fresh)
            self.took(fresh)
        self.update_header()

    def took(self, fresh: Any) -> None:
        """Items with new results: their rows (or the whole list, when filtered or sorted), the detail
        if it shows one of them, the metrics when due."""
        if self.state.filter != "all" or self.state.query or self.state.sort != "index":
            self.relist()
        else:
            self.vlist.refresh_rows()
            if self.current in fresh:
                self.show_current()
        if time.monotonic() - self._metrics_at > self._metrics_every:
            self.refresh_metrics()

    def follow_store(self) -> None:
        """A run another process writes (a headless ``n2f run``, a rescore): its new results and its
        status, read as they come (a stat per tick; only new index lines are parsed)."""
        meta_changed, fresh = self.state.follow()
        if fresh:
            self.took(fresh)
        if meta_changed:
            self.description = describe_run(self.state.store.meta).text
            if self.state.records:
                self.refresh_metrics()  # the status changed (the writer finished): the figures now, not when due
        if meta_changed or fresh:
            self.update_header()

    def draw_live(self) -> None:
        """The focused item's reply as it streams (a live run of a real model only)."""
        job, index = self.job, self.current
        if job is None or index is None:
            return
        live = job.runner.live.get(index)
        if live is None:
            return
        drawn = (index, id(live), live.step, live.tokens)
        if drawn == self._live_drawn:
            return
        self._live_drawn = drawn
        detail = self.query_one(DetailView)
        if detail.shown != (index, self.state.versions.get(index, 0)):
            self.show_current()
        if self._live_detail is None or self._live_detail.index != index:
            self._live_detail = api.item_detail(self.state.store, index, {},  # its prompt and gold, once per item
                                                annotations=self.state.annotation_events(index))
        detail.show_live(self._live_detail, live)

    def finish_live(self) -> None:
        """The runner stopped: read the run back from disk and show its final state."""
        self.was_live = False
        job_error = self.n2f.last_job_error.pop(self.run_id, None)
        try:
            store = RunStore.open(self.run_id)
        except N2FError:
            return
        self.state.reload(store)
        self.relist()
        self.refresh_metrics()
        self.update_header()
        status = store.meta.get("status", "")
        if job_error is not None:
            self.notify(f"run stopped: {job_error}", severity="error", markup=False)
        elif status == "cancelled":
            self.notify("run cancelled: r resumes it", markup=False)

    @guarded_work(thread=True, exclusive=True, group="metrics")
    def refresh_metrics(self) -> None:
        started = self._metrics_at = time.monotonic()
        try:
            going_on = self.job is not None or self.state.store.meta.get("status") == "running"
            metrics = header_metrics(self.state, self._metrics_cache, going_on) if self.state.records else {}
        except Exception as exc:  # an engine bug must not take the screen down
            metrics = {"report error": str(exc)[:60]}
            report_error_from_thread(self, "live metrics", exc)
        # a report that takes long is recomputed less often (it shares the GIL with the UI)
        self._metrics_every = max(METRICS_EVERY, 15 * (time.monotonic() - started))
        self.app.call_from_thread(self._set_metrics, metrics)

    def _set_metrics(self, metrics: dict[str, Any]) -> None:
        self.metrics = metrics
        self.update_header()
        # the metrics cache is long-lived too; left in the collector's oldest generation it
        # would be walked by every full collection (tens of ms each, every few moves)
        COLLECTOR.refreeze()

    def _running_job(self, hint: str = "") -> RunJob | None:
        """The job of the run in progress, or None after saying that the run is not running."""
        if self.job is None:
            self.notify("the run is not running" + hint, timeout=2)
        return self.job

    def action_pause(self) -> None:
        job = self._running_job(" (r resumes it)")
        if job is None:
            return
        paused = job.toggle_pause()
        self.notify("paused: space continues" if paused else "continuing", timeout=1.5)
        self.update_header()

    def action_cancel_run(self) -> None:
        job = self._running_job()
        if job is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes and self.job is job:
                job.cancel()
                self.notify("cancelling: items in flight are left for resume", timeout=2)

        self.app.push_screen(ConfirmDialog(f"Cancel run {self.state.store.label}? Finished items are kept; "
                                           "r resumes the rest.", yes="Cancel run"), confirmed)

    async def action_resume(self) -> None:
        if self.job is not None:
            self.notify("the run is already running", timeout=2)
            return
        if not self.state.store.pending_indices():
            self.notify("nothing left to run: every item has a result", timeout=2)
            return
        job = await self.n2f.resume_run(self.run_id, open_screen=False)
        if job is not None:
            self.state.reload(job.store)
            job.drain()
            self.was_live = True
            self.relist()
            self.update_header()
