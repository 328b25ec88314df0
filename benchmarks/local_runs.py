"""Wall time of `n2f run ENGINE -m local -n 3` per engine with the default reply cap (whole process).

A local run must finish: with the default cap (512 tokens, or the engine's own smaller default)
three items of any engine should take minutes, not hours, on a 2-core laptop. Each run is a
fresh process in a private N2F_HOME, so model loading is part of the figure, as for a user.

Run from the repository root (needs the ``[local]`` extra):
    python benchmarks/local_runs.py [--repeat N] [ENGINE...]
Prints one line per run and the median wall time per engine, plus how many replies the cap cut.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("dedc", "logic", "compost", "robogrid", "rgp")


def one_run(engine: str) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "N2F_HOME": home}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "n2f_tui", "run", engine, "-m", "local", "-n", "3", "-j", "1",
                               "--json", "-q"], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{engine}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return wall, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engines", nargs="*", default=list(ENGINES))
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine (median reported)")
    args = parser.parse_args()
    for engine in args.engines:
        walls = []
        for _ in range(args.repeat):
            wall, summary = one_run(engine)
            walls.append(wall)
            replies = summary["replies"]
            print(f"{engine}: {wall:.1f} s, max_tokens={replies['max_tokens']}, "
                  f"{replies['truncated']} of {replies['reported']} replies cut by the cap, counts {summary['counts']}",
                  flush=True)
        print(f"{engine}: median wall {statistics.median(walls):.1f} s over {len(walls)} run(s)", flush=True)


if __name__ == "__main__":
    main()
