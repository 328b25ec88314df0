"""Issue 28's reader ratios measured in pairs: a large run's reader against a small run's, alternated.

Usage: python benchmarks/paired_readers.py [--small 3230] [--big 100000] [--pairs 9]

``store_scale.py`` gives each size's medians in turn, so load that comes and goes between
sizes moves their ratio. Here the two runs (dedc on the simulator, each with a copy stopped
halfway, as ``store_scale`` makes them) sit in two homes, and each pair is the small run's
process then the big run's, whole processes: the median of the per-pair ratios, and each
ratio, is printed for

  open     the inspector until the first item's detail is painted and the header's metrics are
           in (``tui_open.py``'s probe): time to first paint, to the metrics, CPU, peak RSS
  report   ``n2f report half`` with the run's kept report (as a stopped run leaves it)
  report1  the same without it (a run killed halfway, or changed since its last report)

CPU is the process's user + system time and peak RSS its own maximum (``wait4``). Figures are
printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_scale import DEDC_ITEMS, KEPT_REPORT, ROOT, copy_run, n2f, run_folder, timed  # noqa: E402

Measure = Callable[[str], tuple[float, ...]]  # home -> (seconds..., CPU seconds, peak RSS MB)


def make_home(home: str, size: int) -> None:
    """A run of ``size`` dedc items named big, and its copy stopped halfway named half."""
    env = {**os.environ, "N2F_HOME": home}
    timed(n2f("run", "dedc", "-s", f"repeat={math.ceil(size / DEDC_ITEMS)}", "-n", str(size), "-m", "sim", "-q",
              "--name", "big"), env)
    big = run_folder(home, "big")
    copy_run(big, "dedc-half-" + big.name, "half", keep=size // 2)


def environment(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "N2F_HOME": home}


def opened(home: str) -> tuple[float, ...]:
    _, cpu, rss, out = timed([sys.executable, str(ROOT / "benchmarks" / "tui_open.py"), "--child", "open"],
                             environment(home))
    probe = json.loads(out.strip().splitlines()[-1])
    return probe["open"], probe["metrics"], cpu, rss


def reported(home: str) -> tuple[float, ...]:
    return timed(n2f("report", "half"), environment(home))[:3]


def reported_first(home: str) -> tuple[float, ...]:
    (run_folder(home, "half") / KEPT_REPORT).unlink(missing_ok=True)
    return reported(home)


def paired(name: str, measure: Measure, small: str, big: str, pairs: int, figures: tuple[str, ...]) -> None:
    measure(small), measure(big)  # a first look each (bytecode, the page cache, the snapshot and kept report)
    rows = [(measure(small), measure(big)) for _ in range(pairs)]
    for place, figure in enumerate(figures):
        ratios = [b[place] / s[place] for s, b in rows]
        print(f"  {name:<8} {figure:<12} {statistics.median(b[place] for _, b in rows):8.3f} against "
              f"{statistics.median(s[place] for s, _ in rows):8.3f}: paired {statistics.median(ratios):.2f}x "
              f"({', '.join(f'{r:.2f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=3230)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as big:
        make_home(small, args.small)
        make_home(big, args.big)
        print(f"== {args.big:,} items against {args.small:,}, {args.pairs} pairs (big, against small)")
        paired("open", opened, small, big, args.pairs, ("first paint", "metrics in", "CPU s", "peak RSS MB"))
        paired("report", reported, small, big, args.pairs, ("s", "CPU s", "peak RSS MB"))
        paired("report1", reported_first, small, big, args.pairs, ("s", "CPU s", "peak RSS MB"))


if __name__ == "__main__":
    main()
