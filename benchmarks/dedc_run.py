"""Whole-process wall time of `n2f run dedc -s repeat=10 -m sim` (3,230 items), median of N runs.

Usage: python benchmarks/dedc_run.py [RUNS]

Each run is a fresh process in a fresh N2F_HOME, so start-up, item generation,
prompting, the simulator, parsing, scoring, tagging and the store are all counted.
"""

from __future__ import annotations

import statistics
import sys

from whole_process import repeated_runs


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    times, report = repeated_runs("dedc", ["-s", "repeat=10", "-m", "sim"], runs)
    print(f"median of {runs}: {statistics.median(times):.2f} s for {report['n']} items "
          f"({report['n'] / statistics.median(times):.0f} items/s whole-process)")


if __name__ == "__main__":
    main()
