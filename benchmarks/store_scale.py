"""How the run store scales: whole-process figures at 3,230 / 32,300 / 100,000 dedc items.

Usage: python benchmarks/store_scale.py [--sizes 3230,32300,100000] [--repeats 3]

For each size, in a fresh N2F_HOME, the median (and range) of REPEATS fresh processes of:
  run      ``n2f run dedc -s repeat=R -n SIZE -m sim -q``: wall time, items/s, peak RSS
  show     ``n2f show big 1``: wall time and peak RSS
  report   ``n2f report big``: wall time and peak RSS
  open     the inspector on the run until the list and the first item's detail are
           painted (benchmarks/tui_open.py's probe, imports not counted)
  next     ``j`` to the next item's detail painted: median over 40 moves in one app

Peak RSS is the child's own maximum resident set (``wait4``), so figures of different
processes never mix. Children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE``
removed), as an installed ``n2f`` does. Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEDC_ITEMS = 323  # one repeat of the dedc item set


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed with status {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss / 1024, out.decode("utf-8", "replace")


def n2f(*args: str) -> list[str]:
    return [sys.executable, "-m", "n2f_tui", *args]


def summary(values: list[float], unit: str, scale: float = 1.0, digits: int = 2) -> str:
    shown = ", ".join(f"{v * scale:.{digits}f}" for v in values)
    return f"median {statistics.median(values) * scale:.{digits}f} {unit} ({shown})"


def measure_size(size: int, repeats: int) -> dict[str, object]:
    repeat = math.ceil(size / DEDC_ITEMS)
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["N2F_HOME"] = home
        runs = [timed(n2f("run", "dedc", "-s", f"repeat={repeat}", "-n", str(size), "-m", "sim", "-q",
                          "--name", "big" if k == 0 else f"big{k}"), env) for k in range(repeats)]
        shows = [timed(n2f("show", "big", "1"), env) for _ in range(repeats)]
        reports = [timed(n2f("report", "big"), env) for _ in range(repeats)]
        probe = [sys.executable, str(ROOT / "benchmarks" / "tui_open.py"), "--child"]
        opens = [json.loads(timed([*probe, "open"], env)[2].strip().splitlines()[-1])["open"] for _ in range(repeats)]
        moves = [pair[0] for pair in json.loads(timed([*probe, "next"], env)[2].strip().splitlines()[-1])["moves"]]
        results = Path(home, "runs")
        big = next(p for p in results.iterdir() if json.loads((p / "meta.json").read_text())["name"] == "big")
        sizes = {f.name: f.stat().st_size for f in big.iterdir() if f.is_file()}
    return {
        "size": size,
        "run_s": [r[0] for r in runs], "run_rss_mb": [r[1] for r in runs],
        "items_per_s": [size / r[0] for r in runs],
        "show_s": [s[0] for s in shows], "show_rss_mb": [s[1] for s in shows],
        "report_s": [r[0] for r in reports], "report_rss_mb": [r[1] for r in reports],
        "open_s": opens, "next_ms": [1000 * m for m in moves], "files_mb": {k: v / 1e6 for k, v in sizes.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3230,32300,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        figures = measure_size(size, args.repeats)
        print(f"== {size:,} items")
        print(f"  run      {summary(figures['run_s'], 's')}; peak RSS {summary(figures['run_rss_mb'], 'MB', digits=0)}")
        print(f"           {summary(figures['items_per_s'], 'items/s', digits=0)}")
        print(f"  show     {summary(figures['show_s'], 's', digits=3)}; peak RSS {summary(figures['show_rss_mb'], 'MB', digits=0)}")
        print(f"  report   {summary(figures['report_s'], 's')}; peak RSS {summary(figures['report_rss_mb'], 'MB', digits=0)}")
        print(f"  open     {summary(figures['open_s'], 's', digits=3)} (list + first detail painted)")
        moves = figures["next_ms"]
        print(f"  next     median {statistics.median(moves):.1f} ms, max {max(moves):.1f} ms over {len(moves)} moves")
        files = ", ".join(f"{k} {v:.1f} MB" for k, v in sorted(figures["files_mb"].items()) if v >= 0.05)
        print(f"  files    {files}")
        if args.json:
            print(json.dumps(figures))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
