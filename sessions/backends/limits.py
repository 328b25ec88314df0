"""How many model calls a run has in flight: an adaptive limit under ``-j``, and per-minute ceilings.

``-j`` is a ceiling, not a promise. A server says it is overloaded in three ways: a 429
or 503 (often with ``Retry-After``), a reply that never comes before the deadline
(llama.cpp and Ollama queue what they cannot serve, and the queue counts against each
request's deadline), and ``x-ratelimit-remaining-*: 0`` on an otherwise good reply
(OpenAI's quotas). ``AdaptiveLimit`` turns those signals into the number of calls
allowed in flight, AIMD-style:

- Decrease: on an overload the limit drops to the number of *other* calls the server is
  holding at that moment (what it showed it can take), and by at least one; never
  below 1. Against a server with 4 slots and ``-j 32``, the 28 rejections of the first
  burst take the limit from 32 to 4 in that burst. Plain halving (TCP's 0.5) was tried
  first: after each probe above 4 it fell to 2 and averaged about 3.3 of the 4 slots.
- Increase: every success adds ``1 / limit`` (one step per window of successful calls),
  up to the ceiling; below ``threshold`` (half the limit of the last decrease) every
  success adds 1, so a collapse to 1 after a burst of quota errors climbs back fast.
- A pause: ``Retry-After`` is honoured by the call that got it (it waits, then queues
  again); ``x-ratelimit-remaining-requests/tokens: 0`` pauses every new call until the
  header's reset time, since any of them would be refused.
- ``rpm`` / ``tpm``: optional ceilings per sliding minute on calls started and on tokens
  the server reported.

A call knows the ``epoch`` (the number of
decreases) it started in and how many others were in flight while it held its place (the
first call of a burst too: a server that does not serve in order may answer the later ones
first), so the caller can tell whether a timeout may have been its own queue's fault (see
``sessions.backends.overload``). Every change of the limit is kept (``changes``, the
latest ``MAX_CHANGES``) for the progress line, the inspector header and the run's
metadata.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any, AsyncIterator, Callable

MAX_CHANGES = 200
MINUTE = 60.0


@dataclass(frozen=True)
class LimitChange:
    at: float  # seconds since the limit was made
    limit: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "at": round(self.at, 3)}


@dataclass
class Slot:
    """One call's hold on the limit."""

    epoch: int  # decreases made before the call started
    others: int  # other calls in flight while it held its place: those there when it started, and later ones
    started: int  # calls started before it (the limit's count), to count those started while it held its place


class AdaptiveLimit:
    """The number of calls allowed in flight, adapted to what the server says; see the module docstring."""

    def __init__(self, ceiling: int, start: int | None = None, rpm: int | None = None, tpm: int | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.ceiling = max(1, int(ceiling))
        self._limit = float(max(1, min(self.ceiling, start or self.ceiling)))
        self.threshold = 0.0
        self.rpm = rpm
        self.tpm = tpm
        self.clock = clock
        self.born = clock()
        self.in_flight = 0
        self.started = 0  # calls started, ever
        self.epoch = 0
        self.overloads = 0
        self.paused_until = 0.0
        self.changes: deque[LimitChange] = deque(maxlen=MAX_CHANGES)
        self._starts: deque[float] = deque()
        self._tokens: deque[tuple[float, int]] = deque()
        self._cond: asyncio.Condition | None = None
        if self.limit != self.ceiling:
            self._note(f"the server has {self.limit} slot(s)")

    @property
    def limit(self) -> int:
        return max(1, int(self._limit))

    def to_json(self) -> dict[str, Any]:
        return {"ceiling": self.ceiling, "limit": self.limit, "overloads": self.overloads,
                **({"rpm": self.rpm} if self.rpm else {}), **({"tpm": self.tpm} if self.tpm else {}),
                "changes": [c.to_json() for c in self.changes]}

    def _note(self, reason: str) -> None:
        self.changes.append(LimitChange(self.clock() - self.born, self.limit, reason))

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:  # made in the running loop, at first use
            self._cond = asyncio.Condition()
        return self._cond

    # ------------------------------------------------------------------ waiting

    def wait_time(self) -> float:
        """Seconds before a new call may start for a reason other than the calls in flight (0: none)."""
        now = self.clock()
        waits = [self.paused_until - now]
        while self._starts and self._starts[0] <= now - MINUTE:
            self._starts.popleft()
        while self._tokens and self._tokens[0][0] <= now - MINUTE:
            self._tokens.popleft()
        if self.rpm and len(self._starts) >= self.rpm:
            waits.append(self._starts[0] + MINUTE - now)
        if self.tpm and sum(n for _, n in self._tokens) >= self.tpm:
            waits.append(self._tokens[0][0] + MINUTE - now)
        return max(0.0, *waits)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Hold one of the ``limit`` places for the block."""
        cond = self._condition()
        async with cond:
            while True:
                wait = self.wait_time()
                if wait <= 0 and self.in_flight < self.limit:
                    break
                try:
                    await asyncio.wait_for(cond.wait(), wait if wait > 0 else None)
                except asyncio.TimeoutError:
                    # a notify that raced the timeout was taken by this waiter (asyncio's Condition before
                    # 3.13 drops it): pass it on, or a waiter without a timeout sleeps past a free place
                    self._wake(cond)
                except asyncio.CancelledError:
                    self._wake(cond)  # a wake-up this call got and will not use goes to the next waiter
                    raise
            held = Slot(epoch=self.epoch, others=self.in_flight, started=self.started)
            self.started += 1
            self.in_flight += 1
            self._starts.append(self.clock())
        try:
            yield held
        finally:
            async with cond:
                held.others += self.started - held.started - 1
                self.in_flight -= 1
                self._wake(cond)

    def _wake(self, cond: asyncio.Condition) -> None:
        """Wake as many waiters as there are free places (one per release, more after the limit grew).

        Waking them all made every release cost O(waiters): each woken call takes the lock in
        turn to find the place gone (at ``-j 256`` over a limit of 4, some 250 wake-ups per
        finished call). A paused waiter wakes on its own timeout."""
        free = self.limit - self.in_flight
        if free > 0:
            cond.notify(free)

    # ------------------------------------------------------------------ signals

    def succeeded(self, tokens: int = 0) -> None:
        """A call came back whole: grow, and count its tokens against ``tpm``."""
        if tokens and self.tpm:
            self._tokens.append((self.clock(), tokens))
        if self._limit >= self.ceiling:
            return
        before = self.limit
        self._limit = min(float(self.ceiling), self._limit + (1.0 if self._limit < self.threshold else 1.0 / self._limit))
        if self.limit != before:  # the waiters see it when this call's slot is released
            self._note("grown after successes")

    def overloaded(self, reason: str) -> None:
        """A 429 / 503 / timeout from a call that holds a slot: drop to what the server was holding."""
        self.overloads += 1
        others = self.in_flight - 1
        before = self.limit
        self.threshold = before / 2
        self._limit = float(max(1, min(before - 1, others)))
        self.epoch += 1
        if self.limit != before:
            self._note(reason)

    def pause(self, seconds: float, reason: str) -> None:
        """No new call for ``seconds`` (a quota at zero until its reset)."""
        until = self.clock() + seconds
        if until > self.paused_until:
            self.paused_until = until
            self._note(f"paused {seconds:g}s: {reason}")
