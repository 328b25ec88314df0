"""Runs going on inside the app: the runner as an asyncio task in the app's event loop.

The UI never reacts per item. A job collects finished records in a dict (the runner's
listener only stores them) and the screens take them on a timer, a few times a second.

A backend that answers without awaiting anything (the simulator at zero latency, the
oracle, replay) would let the runner's workers run item after item without giving the
event loop back, freezing the keyboard; ``Cooperative`` wraps the backend so every
call ends with ``await asyncio.sleep(0)``, a turn for the UI.

Real models (``openai:``, ``local``) stream inside the app: the runner keeps a
``LiveReply`` per item in flight, which the run screen shows for the item in focus.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from sessions import api
from sessions.backends.base import Backend, CallRequest, Completion


STREAMING_KINDS = ("openai", "local")  # backends whose replies take long enough to be worth watching


class Cooperative(Backend):
    """A backend that hands the event loop back after every call.

    ``pause_for`` (optional) says how long to step aside after a call: the app answers
    a few milliseconds right after the user pressed a key, so the keystroke's handling
    is not queued behind a batch of items being scored, and zero otherwise.
    """

    def __init__(self, inner: Backend, pause_for: Callable[[], float] | None = None):
        self.inner = inner
        self.spec = inner.spec
        self.pause_for = pause_for

    async def complete(self, request: CallRequest) -> Completion:
        completion = await self.inner.complete(request)
        await asyncio.sleep(self.pause_for() if self.pause_for is not None else 0)
        return completion

    async def preflight(self) -> None:
        await self.inner.preflight()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def aclose(self) -> None:
        await self.inner.aclose()


class RunJob:
    """One run being executed by the app."""

    def __init__(self, prepared: api.PreparedRun, on_done: Callable[["RunJob"], None] | None = None,
                 pause_for: Callable[[], float] | None = None):
        self.prepared = prepared
        self.store = prepared.store
        self.runner = prepared.runner
        self.runner.backend = Cooperative(prepared.backend, pause_for)
        self.runner.stream = prepared.backend.spec.kind in STREAMING_KINDS
        self.fresh: dict[int, dict[str, Any]] = {}
        self.runner.subscribe(self._collect)
        self.on_done = on_done
        self.error: BaseException | None = None
        self.task: asyncio.Task[Any] | None = None

    @property
    def run_id(self) -> str:
        return self.store.id

    def _collect(self, event: Any) -> None:
        self.fresh[event.index] = event.record

    def drain(self) -> dict[int, dict[str, Any]]:
        fresh, self.fresh = self.fresh, {}
        return fresh

    def start(self) -> "RunJob":
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"n2f-run-{self.run_id}")
        return self

    async def _run(self) -> Any:
        try:
            return await self.runner.run()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # shown by the screen; the run stays resumable
            self.error = exc
            return None
        finally:
            self.store.close()
            try:
                await self.prepared.backend.aclose()
            except Exception:
                pass
            if self.on_done is not None:
                self.on_done(self)

    @property
    def done(self) -> bool:
        return self.task is not None and self.task.done()

    @property
    def progress(self) -> Any:
        return self.runner.progress

    @property
    def paused(self) -> bool:
        return self.runner.paused

    def toggle_pause(self) -> bool:
        if self.runner.paused:
            self.runner.unpause()
        else:
            self.runner.pause()
        return self.runner.paused

    def cancel(self) -> None:
        self.runner.cancel()

    async def stop(self, timeout: float = 5.0) -> None:
        """Cancel cleanly (results flushed, status ``cancelled``) and wait for the task."""
        self.runner.cancel()
        if self.task is None or self.task.done():
            return
        done, _ = await asyncio.wait({self.task}, timeout=timeout)
        if not done:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
