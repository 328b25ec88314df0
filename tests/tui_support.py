"""Helpers for the inspector's tests: runs made in the test's private N2F_HOME, waiting on the app."""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, Sequence

import pytest
from textual.css.query import NoMatches
from textual.pilot import Pilot

from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from run_support import run_to_end
from sessions import api


async def make_run(name: str, limit: int | None = 40, model: str = "sim", settings: Sequence[str] = (),
                   seed: int = 0, engine: str = "dedc") -> str:
    """A finished run (deterministic for a given seed); returns its id."""
    prepared = await api.prepare_run(engine, list(settings), model=model, seed=seed, limit=limit, concurrency=4,
                                     name=name)
    await run_to_end(prepared)
    return prepared.store.id


def make_run_sync(*args: Any, **kwargs: Any) -> str:
    return asyncio.run(make_run(*args, **kwargs))


async def until(pilot: Any, predicate: Callable[[], Any], timeout: float = 10.0) -> None:
    """Let the app run until ``predicate()`` holds.

    A widget not mounted yet (``NoMatches``) counts as not yet; any other exception is a real
    error of the test or the app and is raised at once, not turned into a timeout.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except NoMatches:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


def terminal_sizes(*sizes: tuple[int, int]) -> list[Any]:
    """``sizes`` as test parameters named WxH. One wider than 120 columns is slow: the fast suite
    checks the terminals of the field (80x24, a laptop's 120x40), the full suite every size."""
    return [pytest.param(size, id=f"{size[0]}x{size[1]}", marks=[pytest.mark.slow] if size[0] > 120 else [])
            for size in sizes]


def screen_named(app: Any, name: str) -> bool:
    return type(app.screen).__name__ == name


@asynccontextmanager
async def inspect_run(run: str, size: tuple[int, int] = (160, 48), **options: Any) -> AsyncIterator[tuple[N2FApp, Pilot]]:
    """The inspector opened on ``run`` at ``size`` (stable formats, no demo), once its run screen is up."""
    app = N2FApp(run=run, formats=STABLE, demo=False, **options)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        yield app, pilot


async def report_text(pilot: Pilot, app: N2FApp, showing: str) -> str:
    """Open the run's report with its key, wait until it shows ``showing``, and return its text."""
    await pilot.press("R")
    await until(pilot, lambda: screen_named(app, "ReportScreen") and showing in app.screen.query_one("#report").plain)
    return app.screen.query_one("#report").plain


async def detail_shown(pilot: Any, screen: Any) -> None:
    """Wait for the run screen's detail worker: the item under the cursor drawn, its views too."""
    await until(pilot, lambda: screen.detail_ready)
    await pilot.pause()
