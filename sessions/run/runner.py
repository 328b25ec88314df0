"""The asyncio runner: items through steps, backend, scorer and store, with live progress.

One item's walk through its steps is ``sessions.run.steps.run_steps``; this module runs many
at once, scores them and keeps the count.

How many items are in flight is the run's ``sessions.backends.limits.AdaptiveLimit``: ``-j`` callers
take items, and a backend with a server (``openai:``) sends their calls through the
limit, which lowers itself when the server pushes back and grows back after successes.
The limit starts at the slots the server reports, if it does (llama.cpp), and its
changes end up in the run's metadata (``adaptive_limit``).

The CLI and the inspector drive this same runner. A UI either registers a listener
(called for every finished item) or polls ``runner.progress`` on a timer; the latter is
what a UI should do when items finish a thousand a second.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from engines.contract import Engine
from engines.core import SCORER_ERROR, UNJUDGED, Item, Status
from sessions.backends.base import Backend
from sessions.collector import run_heap
from sessions.backends.limits import AdaptiveLimit
from sessions.store.summary_line import finish_reasons
from sessions.run.steps import StepTrace, error_record, record_for, run_steps
from sessions.run.provenance import with_cache_counts
from sessions.store.runs import FLUSH_SECONDS, PersistError, RunStore
from sessions.store.statuses import RESULT, stored_statuses
from sessions.backends.streaming import LiveReply
from sessions.tools.dispatch import close_tools
from sessions.run.usage import Budget, Usage, run_usage

BUDGET_STATUS = "stopped (budget)"
SCORER_SLICE = 0.001  # seconds of scoring between two yields to the event loop (0.5% of a 200 ms round trip)
WRITE_FAILED = "stopped (write failed)"  # results could not be stored: what was stored is kept, resume finishes


if sys.version_info >= (3, 11):
    def _cancelled_itself(work: asyncio.Future[Any]) -> bool:
        """Whether the task running the run was cancelled, not only the work it waits on (whose
        cancellation ``Runner.cancel`` asks for)."""
        task = asyncio.current_task()
        return task is not None and task.cancelling() > 0
else:
    def _cancelled_itself(work: asyncio.Future[Any]) -> bool:
        """Python 3.10 has no ``Task.cancelling``: a cancellation that came while the work was still
        running was the run's own (its callers' ends the work first)."""
        return not work.done()


@dataclass
class Progress:
    total: int
    done: int = 0
    counts: Counter[Status] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)  # tag code -> items
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    cancelled: bool = False
    usage: Usage = field(default_factory=Usage)  # tokens of the items answered in this pass
    budget_reached: bool = False
    paused_at: float | None = None  # while paused: since when (the clock of rate and ETA stands still)
    paused_for: float = 0.0  # seconds spent paused before now
    limit: AdaptiveLimit | None = None  # the run's concurrency limit, read live
    replies: int = 0  # model replies in this pass
    cached: int = 0  # of which served from the response cache

    @property
    def concurrency(self) -> int:
        """Calls allowed in flight now (the adaptive limit; ``-j`` for backends without one)."""
        return self.limit.limit if self.limit is not None else 0

    def pause(self) -> None:
        if self.paused_at is None:
            self.paused_at = time.monotonic()

    def unpause(self) -> None:
        if self.paused_at is not None:
            self.paused_for += time.monotonic() - self.paused_at
            self.paused_at = None

    @property
    def errors(self) -> int:
        return self.counts.get("error", 0)

    @property
    def elapsed(self) -> float:
        """Seconds of running, time spent paused left out (so items/s and ETA do not drift while paused)."""
        return (self.paused_at or self.finished or time.monotonic()) - self.started - self.paused_for

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 and self.done < self.total else None

    @property
    def accuracy(self) -> float:
        judged = self.done - sum(self.counts.get(s, 0) for s in UNJUDGED)
        return self.counts.get("correct", 0) / judged if judged else 0.0


@dataclass(frozen=True)
class ItemEvent:
    index: int
    item: Item
    record: dict[str, Any]
    progress: Progress


Listener = Callable[[ItemEvent], None]


@dataclass(frozen=True)
class Answered:
    """An item whose steps are done, waiting for the scorer."""

    index: int
    item: Item
    attempt: int
    trace: StepTrace


class Runner:
    def __init__(
        self,
        store: RunStore,
        engine: Engine[Any],
        settings: Any,
        backend: Backend,
        concurrency: int = 8,
        templates: Mapping[str, str] | None = None,
        budget: Budget | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
    ):
        self.store = store
        self.engine = engine
        self.settings = settings
        self.backend = backend
        self.concurrency = max(1, concurrency)
        self.limit = AdaptiveLimit(self.concurrency, start=backend.server_slots, rpm=rpm, tpm=tpm)
        backend.use_limit(self.limit)
        self.served: Counter[tuple[str, str]] = Counter()  # (model id, system_fingerprint) the server reported -> replies
        self.templates = dict(templates) if templates else None
        self.listeners: list[Listener] = []
        self.progress = Progress(total=0)
        self._gate = asyncio.Event()
        self._gate.set()
        self._cancelled = False
        self.budget = budget or Budget()
        self._spent_before = Usage()  # usage of the stored results this pass does not redo
        # A UI sets ``stream``: every model step then streams into ``live[index]`` while the
        # item is in flight. Headless runs leave it off (plain requests cost less CPU).
        self.stream = False
        self.live: dict[int, LiveReply] = {}
        self._callers: asyncio.Task[None] | None = None
        self._recorded: set[int] = set()  # what this run handed to the store: all of it must be on disk

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def pause(self) -> None:
        self._gate.clear()
        self.progress.pause()

    def unpause(self) -> None:
        self._gate.set()
        self.progress.unpause()

    @property
    def paused(self) -> bool:
        return not self._gate.is_set()

    def cancel(self) -> None:
        """Stop now: no new items, and the items in flight are abandoned and left for resume.

        Their callers' tasks are cancelled, so a backend waiting on a model call stops it
        (the local backend between two tokens, the openai backend by dropping the request)
        instead of the run waiting for a reply nobody will record.
        """
        self._cancelled = True
        self._gate.set()
        if self._callers is not None:
            self._callers.cancel()

    async def run(self, indices: Sequence[int] | None = None) -> Progress:
        """Run the given item indices (default: every pending one) and return the progress.

        Two kinds of task share the event loop: ``concurrency`` callers, each taking an
        item through its steps (model calls, tools), and one scorer that judges and records
        answered items one per loop turn, so that scoring never sits between the yields of
        the callers' requests. The queue between them is bounded: callers wait when scoring
        falls behind instead of piling up answers.
        """
        previous = self.store.summaries()
        todo = list(self.store.pending_indices() if indices is None else indices)
        self.progress = Progress(total=len(todo), paused_at=time.monotonic() if self.paused else None,
                                 limit=self.limit)
        self._recorded = set()
        redone = set(todo)
        self._spent_before = run_usage(r for i, r in previous.items() if i not in redone)
        self.progress.budget_reached = bool(self.budget) and self.budget.reached(self._spent_before)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in todo:
            queue.put_nowait(index)
        attempts = {i: int(previous[i].get("attempt", -1)) + 1 if i in previous else 0 for i in todo}
        del previous
        answered: asyncio.Queue[Answered | None] = asyncio.Queue(maxsize=self.concurrency)
        self.store.update_meta(status="running")
        self.store.auto_flush = False
        with run_heap():  # sessions.collector: the collector tuned for the run
            flusher = asyncio.create_task(self._flush_periodically())
            callers = self._callers = asyncio.create_task(self._call_all(queue, attempts, answered))
            scorer = asyncio.create_task(self._score_all(answered))
            work: asyncio.Future[Any] = asyncio.gather(callers, scorer)
            failure: BaseException | None = None
            crashed = False
            try:
                await asyncio.wait({work, flusher}, return_when=asyncio.FIRST_COMPLETED)
                if flusher.done():
                    failure = flusher.exception() or PersistError(f"run {self.store.label}: results stopped being saved")
                else:
                    work.result()
            except asyncio.CancelledError:
                self._cancelled = True
                if _cancelled_itself(work):  # the run itself was cancelled, not only its callers
                    raise
            except BaseException:
                crashed = True
                raise
            finally:
                for task in (work, callers, scorer, flusher):
                    task.cancel()
                await asyncio.gather(work, callers, scorer, flusher, return_exceptions=True)
                await close_tools()
                self._callers = None
                self.store.auto_flush = True
                self.progress.finished = time.monotonic()
                self.progress.cancelled = self._cancelled
                failure = self._settle(failure, crashed)
        if failure is not None:
            raise failure
        return self.progress

    def _settle(self, failure: BaseException | None, crashed: bool) -> BaseException | None:
        """Store what is buffered, check every item run has a stored result, and record the run's status.

        Returns the failure that ends the run, if any: a write that failed now or earlier.
        Every item this run recorded must be on disk, or the run is ``WRITE_FAILED``; it is
        ``finished`` only when every item of the run has a stored result. One cut short
        (cancelled, stopped at its budget, or ``crashed`` by an error raised elsewhere) is
        left for resume.
        """
        if failure is None:
            try:
                self.store.flush()
            except PersistError as exc:
                failure = exc
        recorded, self._recorded = self._recorded, set()  # 7 MB at 100,000 items, held through the closing report
        if failure is not None:
            self.store.discard_buffer()  # not stored: those items stay pending for resume
            status = WRITE_FAILED
        elif self._cancelled:
            status = "cancelled"
        elif crashed:
            status = "incomplete"
        else:
            stored = stored_statuses(self.store.folder, self.store.total)
            missing = [i for i in recorded if not stored[i]]
            if missing:
                failure = PersistError(f"run {self.store.label}: {len(missing)} item(s) have no stored result; "
                                       f"`n2f resume {self.store.label}` runs them")
                status = WRITE_FAILED
            else:
                done = stored.count(RESULT) == self.store.total
                status = "finished" if done else BUDGET_STATUS if self.progress.budget_reached else "incomplete"
        counted = with_cache_counts(self.store.meta.get("provenance") or {}, self.progress.replies,
                                    self.progress.cached)
        try:
            self.store.update_meta(status=status, provenance=counted, adaptive_limit=self.limit.to_json(), **self._served_meta())
        except PersistError as exc:
            failure = failure or exc
        return failure

    def _served_meta(self) -> dict[str, Any]:
        """The models and fingerprints the server said answered, merged with those of earlier passes."""
        seen = Counter({(s["model"], s.get("system_fingerprint", "")): int(s.get("replies", 0))
                        for s in self.store.meta.get("served", [])})
        seen.update(self.served)
        if not seen:
            return {}
        return {"served": [{"model": m, "system_fingerprint": f, "replies": n} for (m, f), n in seen.most_common()]}

    def _count_usage(self, steps: list[dict[str, Any]]) -> None:
        """Add an answered item's tokens, as soon as its caller has them (before scoring, so that at
        ``-j 1`` the next item does not start past the budget); once the budget is reached no new
        item starts, and those in flight finish."""
        progress = self.progress
        progress.usage.add_steps(steps)  # a reply from the cache adds no spent tokens
        for step in steps:
            if "tool" not in step:
                progress.replies += 1
                progress.cached += bool(step.get("cached"))
            if step.get("served_model"):
                self.served[step["served_model"], step.get("system_fingerprint", "")] += 1
        if self.budget and not progress.budget_reached:
            spent = Usage(self._spent_before.prompt_tokens + progress.usage.prompt_tokens,
                          self._spent_before.completion_tokens + progress.usage.completion_tokens)
            progress.budget_reached = self.budget.reached(spent)

    async def _flush_periodically(self) -> None:
        """Write buffered results at least once a second, off the event loop; a failed write ends the run."""
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            await asyncio.to_thread(self.store.flush)

    async def _call_all(self, queue: asyncio.Queue[int], attempts: Mapping[int, int],
                        answered: asyncio.Queue[Answered | None]) -> None:
        """The callers; once they are all done, tell the scorer that nothing more is coming."""
        callers = [asyncio.create_task(self._caller(queue, attempts, answered))
                   for _ in range(min(self.concurrency, queue.qsize()) or 1)]
        try:
            await asyncio.gather(*callers)
        finally:
            for task in callers:
                task.cancel()
            await asyncio.gather(*callers, return_exceptions=True)
        await answered.put(None)

    async def _caller(self, queue: asyncio.Queue[int], attempts: Mapping[int, int],
                      answered: asyncio.Queue[Answered | None]) -> None:
        while not self._cancelled and not self.progress.budget_reached:
            await self._gate.wait()
            if self._cancelled or self.progress.budget_reached:
                return
            try:
                index = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            attempt = attempts[index]
            item = self.store.item(index)
            live = LiveReply() if self.stream else None
            if live is not None:
                self.live[index] = live
            try:
                trace = await run_steps(self.engine, item, self.settings, self.backend, self.templates, attempt, live)
            finally:
                if live is not None:
                    live.done = True
                    self.live.pop(index, None)
            if self._cancelled:
                return
            self._count_usage(trace.steps)
            await answered.put(Answered(index, item, attempt, trace))

    async def _score_all(self, answered: asyncio.Queue[Answered | None]) -> None:
        """Judge and record answered items in arrival order, yielding to the callers after every
        ``SCORER_SLICE`` seconds of scoring: replies waiting on the sockets and the next requests
        wait that long at most, and a fast engine's items do not pay a loop pass each."""
        sliced = time.monotonic()
        while (entry := await answered.get()) is not None:
            self._finish(entry.index, entry.item, self._record(entry))
            if time.monotonic() - sliced >= SCORER_SLICE:
                await asyncio.sleep(0)
                sliced = time.monotonic()

    def _record(self, entry: Answered) -> dict[str, Any]:
        item, trace = entry.item, entry.trace
        if trace.error:
            return error_record(item, entry.index, trace.error, trace.outputs, trace.steps, entry.attempt)
        if trace.scorer_error:
            return error_record(item, entry.index, trace.scorer_error, trace.outputs, trace.steps, entry.attempt,
                                SCORER_ERROR)
        verdict = self.engine.score(item, trace.outputs, self.settings, with_views=False,
                                    finish_reasons=finish_reasons(trace.steps), templates=self.templates,
                                    prompts=trace.sent_prompts())
        return record_for(item, entry.index, verdict, trace.outputs, trace.steps, entry.attempt)

    def _finish(self, index: int, item: Item, record: dict[str, Any]) -> None:
        self.store.add_result(index, record)
        self._recorded.add(index)
        progress = self.progress
        progress.done += 1
        progress.counts[record["status"]] += 1
        for code in {t["code"] for t in record["tags"]}:
            progress.tags[code] += 1
        if self.listeners:
            event = ItemEvent(index=index, item=item, record=record, progress=progress)
            for listener in self.listeners:
                listener(event)
