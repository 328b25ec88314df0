"""The runner: concurrency, progress events, infrastructure errors, cancel and resume, rescore."""

from __future__ import annotations

import asyncio
import time

import pytest


from engines.core import SimOptions, parse_settings
from fake_engine import FakeEngine, FakeSettings
from sessions.backends.base import Backend, BackendError, Completion, ModelSpec
from sessions.backends.offline import SimBackend
from sessions.run.runner import Progress, Runner
from sessions.store.runs import RunStore


def new_run(n=20, steps=1):
    engine = FakeEngine()
    settings = parse_settings(FakeSettings, [f"count={n}", f"steps={steps}"])
    store = RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=engine.items(settings, 0),
                            templates=engine.templates(settings), concurrency=4)
    store.acquire()
    return engine, settings, store


class FlakyBackend(Backend):
    """Fails items whose index is in ``broken``; records the peak number of calls in flight."""

    def __init__(self, broken=(), delay=0.0):
        self.spec = ModelSpec("flaky")
        self.broken = set(broken)
        self.delay = delay
        self.in_flight = 0
        self.peak = 0
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if int(request.item.id.split("-")[1]) in self.broken:
                raise BackendError("server said 503")
            return Completion(text=request.item.gold["answer"])
        finally:
            self.in_flight -= 1


async def test_runs_every_item_with_bounded_concurrency_and_events():
    engine, settings, store = new_run(20)
    backend = FlakyBackend(delay=0.01)
    runner = Runner(store, engine, settings, backend, concurrency=4)
    seen = []
    runner.subscribe(lambda event: seen.append((event.index, event.progress.done)))
    progress = await runner.run()
    assert progress.done == 20 and progress.counts["correct"] == 20
    assert backend.peak == 4
    assert sorted(i for i, _ in seen) == list(range(20))
    assert [d for _, d in seen] == list(range(1, 21))
    store.close()
    assert len(RunStore.open(store.id).results()) == 20
    assert RunStore.open(store.id).meta["status"] == "finished"


async def test_infrastructure_errors_are_status_error_and_resume_retries_only_them():
    engine, settings, store = new_run(10)
    progress = await Runner(store, engine, settings, FlakyBackend(broken={3, 7})).run()
    assert progress.errors == 2 and progress.counts["correct"] == 8
    assert store.pending_indices() == [3, 7]
    assert RunStore.open(store.id).meta["status"] == "incomplete"
    retry = FlakyBackend()
    progress = await Runner(store, engine, settings, retry).run()
    assert retry.calls == 2 and progress.counts["correct"] == 2
    results = store.results()
    assert all(r["status"] == "correct" for r in results.values())
    assert results[3]["attempt"] == 1 and results[0]["attempt"] == 0


async def test_multi_step_items_pass_earlier_outputs():
    engine, settings, store = new_run(3, steps=2)
    progress = await Runner(store, engine, settings, FlakyBackend()).run()
    assert progress.done == 3
    assert all(len(r["outputs"]) == 2 and len(r["steps"]) == 2 for r in store.results().values())


async def test_cancel_stops_and_leaves_the_rest_pending():
    engine, settings, store = new_run(50)
    runner = Runner(store, engine, settings, FlakyBackend(delay=0.01), concurrency=2)
    runner.subscribe(lambda event: runner.cancel() if event.progress.done == 5 else None)
    progress = await runner.run()
    assert progress.cancelled
    assert 5 <= len(store.results()) < 50
    assert RunStore.open(store.id).meta["status"] == "cancelled"


async def test_pause_holds_items_until_unpaused():
    engine, settings, store = new_run(5)
    runner = Runner(store, engine, settings, FlakyBackend(), concurrency=1)
    runner.pause()
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(0.05)
    assert runner.progress.done == 0
    runner.unpause()
    progress = await task
    assert progress.done == 5


def test_time_spent_paused_is_left_out_of_the_rate_and_eta():
    progress = Progress(total=10, done=4, started=time.monotonic() - 2.0)
    progress.pause()
    standing = (progress.elapsed, progress.rate, progress.eta)
    time.sleep(0.05)
    assert (progress.elapsed, progress.rate, progress.eta) == standing
    progress.unpause()
    time.sleep(0.01)
    assert progress.elapsed > standing[0] and progress.rate < standing[1]


async def test_sim_replies_do_not_depend_on_order_or_concurrency():
    engine, settings, store_a = new_run(40)
    _, _, store_b = new_run(40)
    sim = SimBackend(ModelSpec("sim", options={"error_rate": "0.5"}), engine, seed=3)
    await Runner(store_a, engine, settings, sim, concurrency=1).run()
    await Runner(store_b, engine, settings, sim, concurrency=16).run(list(reversed(range(40))))
    a = {r["id"]: r["outputs"] for r in store_a.results().values()}
    b = {r["id"]: r["outputs"] for r in store_b.results().values()}
    assert a == b
    assert 5 < sum(o == ["wrong"] for o in a.values()) < 35
    assert sim.options == SimOptions(error_rate=0.5, error="", seed=3)


async def test_a_caller_starts_its_next_call_before_its_last_answer_is_scored():
    """Scoring is the scorer's job: a caller goes straight from one reply to the next request."""
    engine, settings, store = new_run(10)
    scored = []
    original = engine.score

    def score(item, outputs, settings, with_views=True, **_):
        scored.append(item.id)
        return original(item, outputs, settings, with_views)

    class Recording(FlakyBackend):
        def __init__(self):
            super().__init__(delay=0.001)
            self.scored_at_start = []

        async def complete(self, request):
            self.scored_at_start.append(len(scored))
            return await super().complete(request)

    engine.score = score
    backend = Recording()
    progress = await Runner(store, engine, settings, backend, concurrency=1).run()
    assert progress.done == 10 and len(scored) == 10
    assert backend.scored_at_start[1:] == list(range(9))  # call k+1 starts while answer k waits for the scorer
    store.close()


async def test_a_scoring_failure_ends_the_run_instead_of_hanging_it():
    engine, settings, store = new_run(30)
    original = engine.score

    def score(item, outputs, settings, with_views=True, **_):
        if item.id.endswith("-17"):
            raise RuntimeError("scorer bug")
        return original(item, outputs, settings, with_views)

    engine.score = score
    runner = Runner(store, engine, settings, FlakyBackend(delay=0.005), concurrency=4)
    with pytest.raises(RuntimeError, match="scorer bug"):
        await asyncio.wait_for(runner.run(), 10)
    store.close()
    reopened = RunStore.open(store.id)
    assert reopened.meta["status"] == "incomplete"
    assert 0 < len(reopened.results()) < 30


async def test_a_backend_that_never_waits_still_lets_the_scorer_and_timers_run():
    engine, settings, store = new_run(200)
    ticks = []

    async def ticker():
        while True:
            ticks.append(runner.progress.done)
            await asyncio.sleep(0)

    runner = Runner(store, engine, settings, FlakyBackend(), concurrency=8)
    watcher = asyncio.create_task(ticker())
    progress = await runner.run()
    watcher.cancel()
    assert progress.done == 200 and progress.counts["correct"] == 200
    assert len({t for t in ticks if 0 < t < 200}) > 10  # the loop turned while items were being scored
    store.close()


@pytest.mark.parametrize("slice_s, between_every_two", [(0.0, True), (1e9, False)])
async def test_the_scorer_yields_to_the_loop_once_its_slice_is_spent(monkeypatch, slice_s, between_every_two):
    """Past ``SCORER_SLICE`` of scoring the scorer lets the loop turn (replies, next requests) before the next
    item; within it, it scores what is queued back to back (a loop pass an item cost a fast engine 3%)."""
    import sessions.run.runner as runner_module

    monkeypatch.setattr(runner_module, "SCORER_SLICE", slice_s)
    engine, settings, store = new_run(40)
    events = []
    original = engine.score

    def score(item, outputs, settings, with_views=True, **_):
        events.append("scored")
        return original(item, outputs, settings, with_views)

    async def ticker():
        while True:
            events.append("tick")
            await asyncio.sleep(0)

    engine.score = score
    runner = Runner(store, engine, settings, FlakyBackend(), concurrency=8)
    watcher = asyncio.create_task(ticker())
    progress = await runner.run()
    watcher.cancel()
    assert progress.done == 40
    pairs = list(zip(events, events[1:]))
    assert (("scored", "scored") not in pairs) is between_every_two
    store.close()


async def test_a_run_whose_results_did_not_reach_the_disk_is_not_called_finished(monkeypatch):
    import sessions.store.results_log as log
    from sessions.store.runs import PersistError

    engine, settings, store = new_run(12)
    real = log.ResultsLog.append

    def drops_item_5(self, batch):  # a storage that loses one record without saying so
        real(self, {i: r for i, r in batch.items() if i != 5})

    monkeypatch.setattr(log.ResultsLog, "append", drops_item_5)
    with pytest.raises(PersistError, match="1 item\\(s\\) have no stored result"):
        await Runner(store, engine, settings, FlakyBackend(), concurrency=2).run()
    store.close()
    reopened = RunStore.open(store.id)
    assert reopened.meta["status"] == "stopped (write failed)"
    assert reopened.pending_indices() == [5]


async def test_a_write_that_fails_mid_run_stops_it_and_keeps_what_was_stored(monkeypatch):
    import sessions.store.results_log as log
    import sessions.run.runner as runner_module
    from sessions.store.runs import PersistError

    monkeypatch.setattr(runner_module, "FLUSH_SECONDS", 0.01)
    engine, settings, store = new_run(400)
    real = log.append_durably
    written = []

    def fills_up(fd, data):
        if len(written) >= 4:  # two batches (records + index each) fit, then the disk is full
            raise OSError(28, "No space left on device")
        written.append(len(data))
        real(fd, data)

    monkeypatch.setattr(log, "append_durably", fills_up)
    with pytest.raises(PersistError, match="No space left on device"):
        await Runner(store, engine, settings, FlakyBackend(delay=0.001), concurrency=4).run()
    store.close()
    monkeypatch.setattr(log, "append_durably", real)
    reopened = RunStore.open(store.id)
    stored = len(reopened.summaries())
    assert 0 < stored < 400
    assert len(reopened.pending_indices()) == 400 - stored
