"""How the run store and its readers scale: whole-process figures at 3,230 / 32,300 / 100,000 dedc items.

Usage: python benchmarks/store_scale.py [--sizes 3230,32300,100000] [--repeats 3] [--json]

For each size, in a fresh N2F_HOME, the median (and range) of REPEATS fresh processes of:
  run      ``n2f run dedc -s repeat=R -n SIZE -m sim -q``: wall time, items/s, peak RSS
  open     the inspector on the run until the list and the first item's detail are painted
           (benchmarks/tui_open.py's probe): time to first paint (imports not counted), time
           to the header's metrics in, and the probe process's CPU and peak RSS (to the metrics)
  next     ``j`` to the next item's detail painted: median over 40 moves in one app
  show     ``n2f show big 1``: wall time, CPU and peak RSS
  export   ``n2f export big --format jsonl -o FILE``: wall time, CPU and peak RSS
  report   ``n2f report half``: the run with its results cut to the first half (a copy whose
           logs end after SIZE/2 results, as a run stopped halfway leaves them; the other
           half pending): wall time, CPU and peak RSS, twice: "report" with the run's kept
           report (``report.json``, which the stopped run's closing report and every report
           leave), "report1" without it (a run killed halfway, or one whose results or
           annotations changed since its last report: the figures computed from the results)
  first    open and report once more each as the first reader of their run, with no snapshot
           of its index (``results.index.snap``, which ``n2f run``'s closing report and every
           reader of a whole index leave) nor kept report: what the first look after a crash or
           a copy costs
  runs     ``n2f runs`` in a store holding 20 runs of SIZE items (copies of the run under new
           ids, their files hard links): wall time, CPU and peak RSS
  home     the inspector's home screen on that store until every run's row shows its figures
           (benchmarks/tui_open.py's probe): time (imports not counted), CPU and peak RSS
  agreement ``n2f agreement big --json`` once the run has a 500-item study labelled blind by three
           annotators (``benchmarks/agreement_open.py``'s labels): wall time, CPU and peak RSS
  store    the run folder's files on disk

Peak RSS is the child's own maximum resident set and CPU its user + system time (``wait4``),
so figures of different processes never mix. Children run with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed), as an installed ``n2f`` does. Figures are printed;
nothing is asserted. The machine's load is not controlled: compare sizes within one run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEDC_ITEMS = 323  # one repeat of the dedc item set
COPIES = 20  # runs in the store ``n2f runs`` lists
INDEX, RECORDS, SUMMARY, SNAPSHOT = "results.index.jsonl", "results.jsonl", "summary.json", "results.index.snap"
KEPT_REPORT = "report.json"


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MB) and stdout of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed with status {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.decode("utf-8", "replace")


def n2f(*args: str) -> list[str]:
    return [sys.executable, "-m", "n2f_tui", *args]


def summary(values: list[float], unit: str, scale: float = 1.0, digits: int = 2) -> str:
    shown = ", ".join(f"{v * scale:.{digits}f}" for v in values)
    return f"median {statistics.median(values) * scale:.{digits}f} {unit} ({shown})"


def run_folder(home: str, name: str) -> Path:
    return next(p for p in Path(home, "runs").iterdir() if json.loads((p / "meta.json").read_text())["name"] == name)


def copy_run(folder: Path, run_id: str, name: str, keep: int | None = None) -> Path:
    """A copy of the run under a new id: its files hard links, its meta its own; with ``keep`` the
    result logs are real copies cut after the first ``keep`` results (summary.json, the snapshot and the kept
    report dropped)."""
    target = folder.parent / run_id
    shutil.copytree(folder, target, copy_function=os.link)
    meta = json.loads((folder / "meta.json").read_text())
    (target / "meta.json").unlink()
    (target / "meta.json").write_text(json.dumps({**meta, "id": run_id, "name": name}))
    if keep is not None:  # read a line and a block at a time: a child's peak RSS starts at this process's
        for name_ in (INDEX, RECORDS, SUMMARY, SNAPSHOT, KEPT_REPORT):  # size (fork), so this process stays small
            (target / name_).unlink(missing_ok=True)
        end = 0
        with open(folder / INDEX, "rb") as source, open(target / INDEX, "wb") as index:
            for _, line in zip(range(keep), source):
                index.write(line)
                entry = json.loads(line)
                end = max(end, entry["at"] + entry["len"] + 1)
        with open(folder / RECORDS, "rb") as source, open(target / RECORDS, "wb") as records:
            while end > 0 and (block := source.read(min(end, 1 << 20))):
                records.write(block)
                end -= len(block)
    return target


def reader(args: list[str], env: dict[str, str], repeats: int, without: Path | None = None) -> dict[str, list[float]]:
    """``repeats`` fresh processes of ``args``; with ``without``, that file is removed before each."""
    times = []
    for _ in range(repeats):
        if without is not None:
            without.unlink(missing_ok=True)
        times.append(timed(args, env))
    return {"s": [t[0] for t in times], "cpu": [t[1] for t in times], "rss": [t[2] for t in times]}


def measure_size(size: int, repeats: int) -> dict[str, object]:
    repeat = math.ceil(size / DEDC_ITEMS)
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as many:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["N2F_HOME"] = home
        runs = [timed(n2f("run", "dedc", "-s", f"repeat={repeat}", "-n", str(size), "-m", "sim", "-q",
                          "--name", "big" if k == 0 else f"big{k}"), env) for k in range(repeats)]
        big = run_folder(home, "big")
        copy_run(big, "dedc-half-" + big.name, "half", keep=size // 2)
        figures: dict[str, object] = {"size": size, "run_s": [r[0] for r in runs], "run_rss_mb": [r[2] for r in runs],
                                      "items_per_s": [size / r[0] for r in runs]}
        probe = [sys.executable, str(ROOT / "benchmarks" / "tui_open.py"), "--child"]
        opens = [timed([*probe, "open"], env) for _ in range(repeats)]
        figures["open"] = {"s": [json.loads(o[3].strip().splitlines()[-1])["open"] for o in opens],
                           "metrics_s": [json.loads(o[3].strip().splitlines()[-1])["metrics"] for o in opens],
                           "cpu": [o[1] for o in opens], "rss": [o[2] for o in opens]}
        moves = json.loads(timed([*probe, "next"], env)[3].strip().splitlines()[-1])["moves"]
        figures["next_ms"] = [1000 * pair[0] for pair in moves]
        figures["show"] = reader(n2f("show", "big", "1"), env, repeats)
        figures["export"] = reader(n2f("export", "big", "--format", "jsonl", "-o", str(Path(many, "out.jsonl"))),
                                   env, repeats)
        half = run_folder(home, "half")
        figures["report1"] = reader(n2f("report", "half"), env, repeats, without=half / KEPT_REPORT)
        figures["report"] = reader(n2f("report", "half"), env, repeats)
        (big / SNAPSHOT).unlink()
        (big / KEPT_REPORT).unlink(missing_ok=True)
        first_open = timed([*probe, "open"], env)
        (half / SNAPSHOT).unlink()
        (half / KEPT_REPORT).unlink(missing_ok=True)
        figures["first"] = {"open_cpu": first_open[1], "open_rss": first_open[2],
                            "report_cpu": timed(n2f("report", "half"), env)[1]}
        figures["files_mb"] = {f.name: f.stat().st_size / 1e6 for f in big.iterdir() if f.is_file()}
        store = Path(many, "home", "runs")
        store.mkdir(parents=True)
        for k in range(COPIES):
            copy_run(big, f"dedc-copy{k:02d}-{big.name}", f"copy{k}").rename(store / f"dedc-copy{k:02d}")
        copies_env = {**env, "N2F_HOME": str(Path(many, "home"))}
        figures["runs"] = reader(n2f("runs"), copies_env, repeats)
        homes = [timed([*probe, "home"], copies_env) for _ in range(repeats)]
        figures["home"] = {"s": [json.loads(h[3].strip().splitlines()[-1])["home"] for h in homes],
                           "cpu": [h[1] for h in homes], "rss": [h[2] for h in homes]}
        subprocess.run(n2f("study", "create", "big", "--size", "500", "--seed", "0", "--stratify", "tag"), env=env,
                       check=True, capture_output=True, cwd=ROOT)
        subprocess.run([sys.executable, "-c", f"import agreement_open; agreement_open.label({home!r})"], env=env,
                       check=True, cwd=ROOT / "benchmarks")
        figures["agreement"] = reader(n2f("agreement", "big", "--json"), env, repeats)
    return figures


def print_figures(figures: dict) -> None:
    print(f"== {figures['size']:,} items")
    print(f"  run      {summary(figures['run_s'], 's')}; peak RSS {summary(figures['run_rss_mb'], 'MB', digits=0)}")
    print(f"           {summary(figures['items_per_s'], 'items/s', digits=0)}")
    opened = figures["open"]
    print(f"  open     first paint {summary(opened['s'], 's', digits=3)}; "
          f"header's metrics in {summary(opened['metrics_s'], 's', digits=3)}")
    print(f"           CPU {summary(opened['cpu'], 's')}; peak RSS {summary(opened['rss'], 'MB', digits=0)}")
    moves = figures["next_ms"]
    print(f"  next     median {statistics.median(moves):.1f} ms, max {max(moves):.1f} ms over {len(moves)} moves")
    for name in ("show", "export", "report", "report1", "runs", "home", "agreement"):
        f = figures[name]
        print(f"  {name:<8} {summary(f['s'], 's')}; CPU {summary(f['cpu'], 's')}; peak RSS {summary(f['rss'], 'MB', digits=0)}")
    first = figures["first"]
    print(f"  first    open CPU {first['open_cpu']:.2f} s, peak RSS {first['open_rss']:.0f} MB; "
          f"report CPU {first['report_cpu']:.2f} s (no snapshot of the index nor kept report yet)")
    files = ", ".join(f"{k} {v:.1f} MB" for k, v in sorted(figures["files_mb"].items()) if v >= 0.05)
    print(f"  store    {sum(figures['files_mb'].values()):.1f} MB: {files}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3230,32300,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON too")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        figures = measure_size(size, args.repeats)
        print_figures(figures)
        if args.json:
            print(json.dumps(figures))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
