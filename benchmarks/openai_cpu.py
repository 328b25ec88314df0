"""CPU per model call of the whole pipeline through the openai SDK, per transport, plain or streamed.

Usage: python benchmarks/openai_cpu.py [RUNS]

dedc items at -j 64 against the bench's loopback stub (200 ms, its own process), run as
`n2f run` does (plain requests) and as the inspector does (streamed). The figure is this
process's CPU time over `runner.run` divided by the calls, median of RUNS (default 3):
it includes the engine's own prompting, parsing and scoring, measured alone with
`-m sim` on the same items as the baseline. Unlike the efficiency figures of
`n2f bench`, CPU time barely depends on what else the machine is running.
"""

from __future__ import annotations

import asyncio
import statistics
import sys

from sessions.run.bench import scratch_home, stub_config, timed_run
from sessions.run.latency_stub import STUB_MODEL, stub_process

ITEMS = 640
CONCURRENCY = 64


def cpu_ms_per_call(model: str, transport: str, stream: bool) -> float:
    with scratch_home():
        timing = asyncio.run(timed_run("dedc", ("repeat=2",), model, ITEMS, CONCURRENCY, stub_config(transport), stream))
    return 1000 * timing.cpu_seconds / max(timing.calls or timing.items, 1)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    baseline = statistics.median(cpu_ms_per_call("sim", "aiohttp", False) for _ in range(runs))
    print(f"sim (engine alone)        {baseline:.2f} ms/item")
    with stub_process(0.2) as url:
        model = f"openai:{STUB_MODEL}@{url}"
        cpu_ms_per_call(model, "aiohttp", False)  # warm-up: first-call imports
        for transport in ("aiohttp", "httpx"):
            for stream in (False, True):
                figures = [cpu_ms_per_call(model, transport, stream) for _ in range(runs)]
                median = statistics.median(figures)
                print(f"{transport:8} {'streamed' if stream else 'plain   '}  {median:.2f} ms/call "
                      f"(SDK and client {median - baseline:.2f} ms; runs {', '.join(f'{f:.2f}' for f in figures)})")


if __name__ == "__main__":
    main()
