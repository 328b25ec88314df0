"""Running a prepared run in a test the way the CLI does: to its end, store and backend closed."""

from __future__ import annotations

from sessions.api import PreparedRun
from sessions.run.runner import Progress


async def run_to_end(prepared: PreparedRun) -> Progress:
    """Run a prepared (or resumed) run to its end and close its store and backend, also when it fails;
    returns the runner's progress."""
    try:
        return await prepared.runner.run()
    finally:
        prepared.store.close()
        await prepared.backend.aclose()
