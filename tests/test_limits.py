"""The adaptive concurrency limit and the headers it reads, on a fake clock: no wall-clock asserts.

The figures are hand computations of the rules in ``sessions.backends.limits`` (drop to the calls the
server still holds, grow by 1/limit, slow start below half the last limit) and of the header
formats OpenAI documents (``retry-after-ms``, ``x-ratelimit-reset-*`` as Go durations).
"""

from __future__ import annotations

import asyncio
from email.utils import formatdate

import pytest

from sessions.backends.base import BackendError
from sessions.backends.overload import MAX_RETRY_AFTER, OVERLOAD_RETRIES, Overloaded, call_within
from sessions.backends.rate_headers import duration, quota_pause, retry_after
from sessions.backends.limits import AdaptiveLimit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def hold(limit: AdaptiveLimit, n: int) -> tuple[list[asyncio.Event], list[asyncio.Task]]:
    """``n`` calls holding a slot each until their event is set."""
    events = [asyncio.Event() for _ in range(n)]

    async def call(event: asyncio.Event) -> None:
        async with limit.slot():
            await event.wait()

    tasks = [asyncio.create_task(call(e)) for e in events]
    while limit.in_flight < min(n, limit.limit):
        await asyncio.sleep(0)
    return events, tasks


async def test_a_burst_of_rejections_brings_the_limit_down_to_what_the_server_holds():
    limit = AdaptiveLimit(32)
    events, tasks = await hold(limit, 32)
    for rejected in range(28):  # 4 accepted; the other 28 answer 429 one after the other and leave
        limit.overloaded("HTTP 429")
        events[4 + rejected].set()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    assert limit.limit == 4 and limit.in_flight == 4
    assert [c.limit for c in limit.changes][:3] == [31, 30, 29] and limit.changes[-1].limit == 4
    for e in events:
        e.set()
    await asyncio.gather(*tasks)


async def test_the_limit_holds_calls_back_and_lets_them_in_as_slots_free():
    limit = AdaptiveLimit(2)
    events, tasks = await hold(limit, 3)
    assert limit.in_flight == 2 and not tasks[2].done()
    events[0].set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert limit.in_flight == 2  # the third got the freed slot
    for e in events:
        e.set()
    await asyncio.gather(*tasks)
    assert limit.in_flight == 0


@pytest.mark.parametrize("calls", [64, 1024])
async def test_a_release_wakes_one_waiter_not_all_of_them(calls):
    """Many calls over a limit of 4: each finished call lets one waiter in, so the waiters look at the
    limit a few times per call whatever their number (waking them all made it calls / 8 per call:
    8.5 at 64, 128.5 at 1024; 3.2 and 3.5 now)."""
    limit = AdaptiveLimit(4)
    looks = 0
    wait_time = limit.wait_time

    def counted() -> float:
        nonlocal looks
        looks += 1
        return wait_time()

    limit.wait_time = counted  # type: ignore[method-assign]  # counting the checks of this one limit

    async def call() -> None:
        async with limit.slot():
            await asyncio.sleep(0)

    await asyncio.gather(*(call() for _ in range(calls)))
    assert limit.in_flight == 0
    assert looks <= 4 * calls


async def test_a_waiter_cancelled_as_it_is_woken_passes_the_place_on():
    """The first call's release wakes the second, which is cancelled before it runs: the third gets the place."""
    limit = AdaptiveLimit(1)
    order: list[str] = []
    release = asyncio.Event()
    woken: list[asyncio.Task] = []

    async def first() -> None:
        async with limit.slot():
            order.append("first")
            await release.wait()
        woken[0].cancel()  # its wake-up is already sent: it must not take the place with it

    async def waiter(name: str) -> None:
        async with limit.slot():
            order.append(name)

    holder = asyncio.create_task(first())
    while limit.in_flight < 1:
        await asyncio.sleep(0)
    woken.append(asyncio.create_task(waiter("second")))
    third = asyncio.create_task(waiter("third"))
    while len(limit._condition()._waiters) < 2:  # type: ignore[attr-defined]  # asyncio.Condition keeps its waiters there
        await asyncio.sleep(0)
    release.set()
    await asyncio.wait_for(third, 60)  # a hang guard: a lost wake-up leaves it waiting for ever
    await holder
    assert woken[0].cancelled() and order == ["first", "third"]


async def test_growth_is_one_step_per_window_of_successes_and_fast_below_half_the_last_limit():
    limit = AdaptiveLimit(8, start=4)
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 4  # 4 + 1/4 + 1/4.25 + 1/4.485 + 1/4.708 = 4.92
    limit.succeeded()
    assert limit.limit == 5  # + 1/4.92: 5.12
    events, tasks = await hold(limit, 1)
    limit.overloaded("HTTP 503")  # alone in flight: down to 1, threshold 5/2
    assert limit.limit == 1 and limit.threshold == 2.5
    limit.succeeded()
    limit.succeeded()
    assert limit.limit == 3  # +1 each below the threshold, then 1/limit
    events[0].set()
    await asyncio.gather(*tasks)


def test_the_run_starts_at_the_slots_the_server_reports_and_says_so():
    limit = AdaptiveLimit(8, start=1)
    assert limit.limit == 1 and limit.ceiling == 8
    assert limit.to_json()["changes"][0]["reason"] == "the server has 1 slot(s)"
    assert AdaptiveLimit(2, start=16).limit == 2  # never above -j


def test_rpm_and_a_spent_quota_hold_new_calls_until_the_minute_or_the_reset():
    clock = Clock()
    limit = AdaptiveLimit(8, rpm=2, clock=clock)
    limit._starts.extend([clock.now, clock.now + 10])
    clock.now += 20
    assert limit.wait_time() == pytest.approx(40.0)  # the first start leaves the minute at +60
    clock.now += 41
    assert limit.wait_time() == 0.0
    limit.pause(3.0, "x-ratelimit-remaining-requests: 0")
    assert limit.wait_time() == pytest.approx(3.0)
    assert limit.changes[-1].reason.startswith("paused 3s")


def test_tpm_counts_the_tokens_reported_in_the_last_minute():
    clock = Clock()
    limit = AdaptiveLimit(8, tpm=100, clock=clock)
    limit.succeeded(60)
    assert limit.wait_time() == 0.0
    clock.now += 5
    limit.succeeded(50)
    assert limit.wait_time() == pytest.approx(55.0)


def _failing(outcomes: list):
    """An attempt that raises or returns the outcomes in turn, counting its calls."""
    calls = []

    async def attempt():
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome, 1

    return attempt, calls


def overload(retry: float | None = 0.0, timeout: bool = False) -> Overloaded:
    return Overloaded(BackendError("gave up: HTTP 429"), "HTTP 429", retry_after=retry, timeout=timeout)


async def test_an_overloaded_call_is_retried_and_a_long_retry_after_is_not_waited():
    attempt, calls = _failing([overload(), overload(), "answer"])
    assert await call_within(AdaptiveLimit(4), attempt) == "answer" and len(calls) == 3
    attempt, calls = _failing([overload(MAX_RETRY_AFTER + 1)])
    with pytest.raises(BackendError, match="HTTP 429"):
        await call_within(AdaptiveLimit(4), attempt)
    assert len(calls) == 1
    attempt, calls = _failing([overload()] * (OVERLOAD_RETRIES + 1))
    with pytest.raises(BackendError):
        await call_within(AdaptiveLimit(4), attempt)
    assert len(calls) == OVERLOAD_RETRIES + 1


async def test_a_timeout_is_retried_only_when_other_calls_were_in_flight():
    attempt, calls = _failing([overload(None, timeout=True), "late"])
    with pytest.raises(BackendError):
        await call_within(AdaptiveLimit(4), attempt)  # alone: the server is slow, not our queue
    assert len(calls) == 1
    limit = AdaptiveLimit(4)
    events, tasks = await hold(limit, 1)
    attempt, calls = _failing([overload(None, timeout=True), "late"])
    retried = asyncio.create_task(call_within(limit, attempt))
    while not calls:
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert limit.limit == 1  # the timeout dropped it to the one other call in flight...
    assert not retried.done()  # ...whose slot the retry waits for
    events[0].set()
    assert await retried == "late" and len(calls) == 2
    await asyncio.gather(*tasks)


async def test_a_timeout_of_the_first_call_of_a_burst_is_retried_when_others_started_after_it():
    """The first call starts alone, the rest of the burst a moment later; a server that serves them out of
    order lets it run past its deadline behind its own run's calls: retried, not left in error."""
    limit = AdaptiveLimit(4)
    started = asyncio.Event()
    first_outcomes = [overload(None, timeout=True), "late"]

    async def first_attempt() -> tuple[str, int]:
        started.set()
        await asyncio.sleep(0)
        while limit.in_flight < 2:  # the burst's second call starts while the first is in flight
            await asyncio.sleep(0)
        outcome = first_outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome, 1

    first = asyncio.create_task(call_within(limit, first_attempt))
    await started.wait()
    events, tasks = await hold(limit, 2)
    events[0].set()  # the second call ends; the first's retry then takes its place
    await asyncio.gather(tasks[0])
    events[1].set()
    assert await first == "late" and first_outcomes == []
    await asyncio.gather(*tasks)


def test_header_durations_and_retry_after():
    assert duration("6m0s") == 360.0 and duration("20ms") == pytest.approx(0.02)
    assert duration("1h2m3.5s") == pytest.approx(3723.5) and duration("3") == 3.0
    assert duration("soon") is None and duration("5x") is None
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({}) is None
    dated = retry_after({"retry-after": formatdate(usegmt=True)})
    assert dated is not None and 0.0 <= dated <= 1.0  # an HTTP date: now, give or take a second
    assert quota_pause({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}) == (
        1.5, "x-ratelimit-remaining-requests: 0")
    assert quota_pause({"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "1s"}) is None
