"""Whole-process throughput of `n2f run logic -s dataset=cnf -m sim` (400 items, 2 model steps each).

Usage: python benchmarks/logic_run.py [RUNS] [-s KEY=VALUE ...]

Each run is a fresh process in a fresh N2F_HOME, so interpreter start-up, imports (Z3,
lark), item generation, both prompts, the simulator, parsing, the Z3 equivalence checks,
truth tables, tagging and the store are all counted. Byte-code caching is left on (as
on a user's machine; the CI image sets PYTHONDONTWRITEBYTECODE) after one warm-up run. Prints every run and the median
wall time; CPU time (user + system of the child) is printed too because wall time on a
shared machine also measures the neighbours.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def one_run(settings: list[str]) -> tuple[float, float, dict]:
    with tempfile.TemporaryDirectory() as home:
        # like a user's machine: Python writes and reuses byte-code (the CI image disables that)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["N2F_HOME"] = home
        args = [a for s in settings for a in ("-s", s)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "n2f_tui", "run", "logic", *args, "-m", "sim", "--json", "-q"],
            capture_output=True, text=True, env=env, check=True,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, json.loads(result.stdout)


def main() -> None:
    argv = sys.argv[1:]
    runs = int(argv.pop(0)) if argv and argv[0].isdigit() else 7
    settings = ["dataset=cnf"] + [argv[i + 1] for i, a in enumerate(argv) if a == "-s" and i + 1 < len(argv)]
    one_run(settings)  # warm-up: byte-code caches and the file system
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, report = one_run(settings)
        walls.append(wall)
        cpus.append(cpu)
        print(f"{wall:.2f} s wall, {cpu:.2f} s cpu  ({report['n']} items, accuracy {report['accuracy']:.3f})")
    n = report["n"]
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"median of {runs}: {wall:.2f} s wall for {n} items = {n / wall:.0f} items/s whole-process "
          f"({n / cpu:.0f} items/s per CPU second); settings {' '.join(settings)}")


if __name__ == "__main__":
    main()
