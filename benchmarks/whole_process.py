"""Whole-process `n2f run`, the throughput figure the benchmarks report.

Each run is a fresh process in a fresh N2F_HOME, so start-up, imports, item generation
and the store are counted as a user pays for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence


def n2f_run(engine: str, args: Sequence[str], cwd: Path | None = None) -> tuple[float, dict]:
    """Wall seconds of one `n2f run ENGINE ARGS --json -q`, and the report it prints."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "N2F_HOME": home}
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "n2f_tui", "run", engine, *args, "--json", "-q"],
                                capture_output=True, text=True, env=env, check=True, cwd=cwd)
        return time.perf_counter() - start, json.loads(result.stdout)


def throughput_line(seconds: float, report: dict) -> str:
    return f"{seconds:.2f} s  ({report['n']} items, in-run {report.get('items_per_s')} items/s)"


def repeated_runs(engine: str, args: Sequence[str], runs: int, cwd: Path | None = None,
                  line: Callable[[float, dict], str] = throughput_line) -> tuple[list[float], dict]:
    """``runs`` whole-process runs, each printed as it ends; their times and the last report."""
    times = []
    for _ in range(runs):
        seconds, report = n2f_run(engine, args, cwd)
        times.append(seconds)
        print(line(seconds, report))
    return times, report
