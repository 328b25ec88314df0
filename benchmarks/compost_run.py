"""CompoST timings: cold load of the embedded graph, one scored item, and a whole simulated run.

Usage: python benchmarks/compost_run.py [RUNS] [BASES]

The run is `n2f run compost -m sim -s bases=BASES` (default 18 bases per shape, the
paper's size: 2,376 items, two steps each: the simulated reply and its execution on
the embedded graph), each in a fresh process and N2F_HOME; the median whole-process
time is reported. Cold load and scoring are timed in fresh child processes too.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from whole_process import repeated_runs

COLD_LOAD = """
import time
t = time.perf_counter()
from sessions.tools.sparql import embedded_worker
embedded_worker().start()
print(time.perf_counter() - t)
"""

SCORE = """
import asyncio, time
from engines.compost import ENGINE
from engines.compost.settings import CompostSettings
from sessions.tools.sparql import embedded_worker, sparql
items = ENGINE.items(CompostSettings(), 0)
embedded_worker().start()
async def main():
    t = time.perf_counter()
    for item in items:
        reply = ENGINE.oracle(item, None, [])
        step = ENGINE.next_step(item, CompostSettings(), [reply])
        out = await sparql(step.payload)
        ENGINE.score(item, [reply, out], with_views=False)
    return (time.perf_counter() - t) / len(items)
print(asyncio.run(main()))
"""


def child(code: str) -> float:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    bases = int(sys.argv[2]) if len(sys.argv) > 2 else 18
    loads = [child(COLD_LOAD) for _ in range(3)]
    print(f"cold load of the embedded graph: median {statistics.median(loads):.2f} s")
    per_item = [child(SCORE) for _ in range(3)]
    print(f"execute + score one item (gold cached per process): median {1000 * statistics.median(per_item):.2f} ms")
    times, report = repeated_runs("compost", ["-s", f"bases={bases}", "-m", "sim"], runs)
    median = statistics.median(times)
    print(f"median of {runs}: {median:.2f} s for {report['n']} items ({report['n'] / median:.0f} items/s whole-process)")


if __name__ == "__main__":
    main()
