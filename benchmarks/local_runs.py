"""Wall time of `n2f run ENGINE -m local -n 3` per engine with the default reply cap (whole process).

A local run must finish: with the default cap (512 tokens, or the engine's own smaller default)
three items of any engine should take minutes, not hours, on a 2-core laptop. Each run is a
fresh process in a private N2F_HOME, so model loading is part of the figure, as for a user.

Run from the repository root (needs the ``[local]`` extra):
    python benchmarks/local_runs.py [--repeat N] [ENGINE...]
Prints one line per run and the median wall time per engine, plus how many replies the cap cut,
the CPU seconds the run used and the load average while it ran: on a shared machine the wall
time is the CPU time stretched by everyone else's work, and the load says by how much.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("dedc", "logic", "compost", "robogrid", "rgp")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(engine: str) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, the run's JSON summary)."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "N2F_HOME": home}
        started, cpu = time.monotonic(), cpu_seconds()
        done = subprocess.run([sys.executable, "-m", "n2f_tui", "run", engine, "-m", "local", "-n", "3", "-j", "1",
                               "--json", "-q"], cwd=ROOT, env=env, capture_output=True, text=True)
        wall, cpu = time.monotonic() - started, cpu_seconds() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{engine}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engines", nargs="*", default=list(ENGINES))
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine (median reported)")
    args = parser.parse_args()
    for engine in args.engines:
        walls = []
        for _ in range(args.repeat):
            wall, cpu, summary = one_run(engine)
            walls.append(wall)
            replies = summary["replies"]
            print(f"{engine}: wall {wall:.1f} s, CPU {cpu:.1f} s, load {os.getloadavg()[0]:.1f}, "
                  f"max_tokens={replies['max_tokens']}, {replies['truncated']} of {replies['reported']} replies cut "
                  f"by the cap, counts {summary['counts']}", flush=True)
        print(f"{engine}: median wall {statistics.median(walls):.1f} s over {len(walls)} run(s)", flush=True)


if __name__ == "__main__":
    main()
