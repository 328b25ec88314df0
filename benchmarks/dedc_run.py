"""Whole-process wall time of `n2f run dedc -s repeat=10 -m sim` (3,230 items), median of N runs.

Usage: python benchmarks/dedc_run.py [RUNS]

Each run is a fresh process in a fresh N2F_HOME, so start-up, item generation,
prompting, the simulator, parsing, scoring, tagging and the store are all counted.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
import os


def one_run() -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "N2F_HOME": home}
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "n2f_tui", "run", "dedc", "-s", "repeat=10", "-m", "sim", "--json", "-q"],
            capture_output=True, text=True, env=env, check=True,
        )
        return time.perf_counter() - start, json.loads(result.stdout)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    times = []
    for _ in range(runs):
        seconds, report = one_run()
        times.append(seconds)
        print(f"{seconds:.2f} s  ({report['n']} items, in-run {report['items_per_s']} items/s)")
    print(f"median of {runs}: {statistics.median(times):.2f} s for {report['n']} items "
          f"({report['n'] / statistics.median(times):.0f} items/s whole-process)")


if __name__ == "__main__":
    main()
