"""One model call under the run's adaptive limit, retried when the server was overloaded.

The SDK retries what it should: dropped connections, 500/502 and the like, a timed-out
attempt within the deadline. It does not retry an overload (429, 503, 408, 504): a
retry inside the SDK keeps its place among the calls in flight, so lowering the limit
would change nothing until it gave up (measured before this module: against a server
taking 4 calls, ``-j 32`` left 9 of 64 items in status error, and 8 with a limit applied
per call around the SDK). Here an overloaded call gives its slot back, the limit drops
(``sessions.backends.limits``), the call waits what the server asked (``Retry-After``) or a
backoff, and queues again for a slot.

A call that ran out of time counts as an overload too (llama.cpp queues what it cannot
serve, against each request's deadline) and is tried again only if other calls were in
flight while it ran, since then its own run's queue may be what it waited for (the first
call of a burst starts alone, and a server may serve the later ones first): a call that
times out alone is the server's slowness, and its item ends in status ``error``.
The deadline counts while a call holds a slot, never while it waits for one.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

from sessions.backends.base import BackendError
from sessions.backends.limits import AdaptiveLimit

OVERLOAD_STATUSES = frozenset({408, 429, 503, 504})
OVERLOAD_RETRIES = 8  # rate-limit answers one call may get before its item is left for resume
TIMEOUT_RETRIES = 3  # timeouts one call may get while others were in flight
MAX_RETRY_AFTER = 60.0  # seconds: a longer Retry-After is not waited for inside a run

T = TypeVar("T")


@dataclass
class Overloaded(Exception):
    """Raised by an attempt for a sign of overload; ``error`` is what the item ends with if not retried."""

    error: BackendError
    reason: str
    retry_after: float | None = None
    timeout: bool = False


def backoff(tries: int) -> float:
    """The wait before the next try when the server did not say: 0.5 s doubling to 8 s, less up to a quarter."""
    return min(8.0, 0.5 * 2.0 ** (tries - 1)) * (1 - 0.25 * random.random())


async def call_within(limit: AdaptiveLimit, attempt: Callable[[], Awaitable[tuple[T, int]]]) -> T:
    """``attempt()`` in a slot of ``limit`` until it returns ``(result, tokens)``; an Overloaded it raises
    lowers the limit and is retried as the module docstring says, or ends as its BackendError."""
    rate_limited = timeouts = 0
    while True:
        async with limit.slot() as slot:
            try:
                result, tokens = await attempt()
            except Overloaded as exc:
                limit.overloaded(exc.reason)
                failure = exc
            else:
                limit.succeeded(tokens)
                return result
        if failure.timeout:
            timeouts += 1
            if slot.others == 0 or timeouts > TIMEOUT_RETRIES:
                raise failure.error
            wait = 0.0
        else:
            rate_limited += 1
            asked = failure.retry_after
            if rate_limited > OVERLOAD_RETRIES or (asked is not None and asked > MAX_RETRY_AFTER):
                raise failure.error
            wait = asked if asked is not None else backoff(rate_limited)
        await asyncio.sleep(wait)
