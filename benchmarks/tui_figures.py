"""The inspector's figures a person feels (issue 26): first paint, key to repaint, filter, search,
a run started from the form against the same run headless.

Usage: python benchmarks/tui_figures.py [REPEATS]

Every figure is the median of REPEATS fresh processes (5 by default), each in the same
N2F_HOME holding two dedc simulator runs made first: ``small`` (the 323 official items)
and ``big`` (``-s repeat=31``: 10,013 items).

- first paint: from starting ``python`` to the run screen's item list and first detail
  painted (headless, 120x40), interpreter start-up and imports included, as a person
  typing ``n2f tui RUN`` waits; the app-only part (app start to paint) beside it.
- key to repaint: ``j`` sent through the driver to the next item's detail painted, on
  ``big`` (``tui_open.key_latency``), median of 20 moves per process.
- filter and search on ``big``: from the filter or search taking effect (what the dialog's
  Enter does: ``state.set_filter``/``set_query``, then ``relist``) to the list painted;
  the search twice, cold (its text index built) and warm.
- following another process: a headless 300-item ``n2f run`` watched from the home list and
  from its run screen, seconds from its exit to its final counts on screen.
- form against headless: ``n2f run dedc -s repeat=31 -m sim`` in a fresh process (its
  in-run items/s), and the same run started from the new-run form in a fresh app (its
  runner's items/s, and the seconds the form spent on "starting…").

The load average of the machine is printed with the figures: others may share its cores.
Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
SIZE = (120, 40)
BIG = ["-s", "repeat=31"]


def n2f(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "n2f_tui", *args, "--json", "-q"], check=True, capture_output=True,
                         text=True, cwd=ROOT, env=dict(os.environ))
    return json.loads(out.stdout)


async def first_paint(run: str) -> tuple[float, float]:
    """App start to the item list and the first item's detail painted (seconds), and that moment's wall time."""
    from n2f_tui.app import N2FApp
    from tui_open import PaintProbe, run_screen, wait_for

    app = N2FApp(run=run, demo=False)
    started = time.perf_counter()
    async with app.run_test(size=SIZE):
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one("DetailView").shown is not None)
        probe = PaintProbe(app.screen.query_one("#col-prompt"))  # the stacked detail at 120 columns
        await wait_for(lambda: probe.last > 0)
        return probe.last - started, time.time() - (time.perf_counter() - probe.last)


async def keys_filter_search() -> dict:
    from n2f_tui.app import N2FApp
    from tui_open import CallProbe, PaintProbe, key_latency, run_screen, wait_for

    app = N2FApp(run="big", demo=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one("DetailView").shown)
        await pilot.pause()
        screen = app.screen
        probe = PaintProbe(screen.query_one("#col-prompt"))
        shows = CallProbe(screen.query_one("DetailView"), "show")
        moves = []
        for _ in range(20):
            moves.append(await key_latency(app, probe, shows))
            await asyncio.sleep(0.05)
        listed = PaintProbe(screen.vlist)

        async def timed(change) -> float:
            t0 = time.perf_counter()
            change()
            screen.relist()
            await wait_for(lambda: listed.last > t0, timeout=60)
            return listed.last - t0

        figures = {"moves": moves,
                   "filter": await timed(lambda: screen.state.set_filter("wrong")),
                   "unfilter": await timed(lambda: screen.state.set_filter("all")),
                   "search_cold": await timed(lambda: screen.state.set_query("attr_17")),
                   "search_warm": await timed(lambda: screen.state.set_query("attr_171")),
                   "found": len(screen.state.order)}
        await pilot.pause()
    return figures


async def from_the_form() -> dict:
    """The big run started from the new-run form: seconds on "starting…", then the runner's items/s."""
    from n2f_tui.app import N2FApp
    from tui_open import wait_for

    app = N2FApp(demo=False)
    async with app.run_test(size=SIZE) as pilot:
        app.new_run_dialog()
        await wait_for(lambda: app.screen.query("#set-repeat"))
        form = app.screen
        form.query_one("#engine").value = "dedc"
        await pilot.pause()
        form.query_one("#set-repeat").value = "31"
        form.query_one("#model").value = "sim"
        form.query_one("#limit").value = ""
        t0 = time.perf_counter()
        form.run_worker(form.action_start(), exclusive=True, group="new-run")
        await wait_for(lambda: app.jobs, timeout=120)
        starting = time.perf_counter() - t0
        job = next(iter(app.jobs.values()))
        await wait_for(lambda: job.done, timeout=600)
        figures = {"starting": starting, "rate": job.progress.rate, "done": job.progress.done}
        await pilot.pause()
    return figures


async def follow_lag(items: int = 300) -> dict:
    """A headless ``n2f run`` in another process, watched from the home list and from its run screen:
    seconds from the writer's exit (seen by polling it) to its final counts on each screen."""
    from textual.widgets import DataTable

    from n2f_tui.app import N2FApp
    from sessions.store.runs import RunStore, list_run_meta
    from tui_open import wait_for

    lags = {}
    for where in ("home", "run"):
        name = f"followed-{where}"
        writer = subprocess.Popen([sys.executable, "-m", "n2f_tui", "run", "dedc", "-n", str(items), "-m",
                                   "sim:latency=0.02", "-j", "8", "--name", name, "-q"], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        app = N2FApp(demo=False)
        async with app.run_test(size=SIZE):
            await wait_for(lambda: any(m.get("name") == name for m in list_run_meta()), timeout=60)
            if where == "run":
                app.open_run(name)
            await wait_for(lambda: type(app.screen).__name__ == ("RunScreen" if where == "run" else "HomeScreen")
                           and (where == "run" or any(m.get("name") == name for m in app.screen.metas)), timeout=30)
            await wait_for(lambda: writer.poll() is not None, timeout=300)
            gone = time.perf_counter()
            done = RunStore.open(name).summary().done
            if where == "home":
                run_id = next(m["id"] for m in app.screen.metas if m.get("name") == name)
                cell = lambda: app.screen.query_one(DataTable).get_cell(run_id, "progress").plain  # noqa: E731
                await wait_for(lambda: cell().startswith(f"{done}/{items} finished"), timeout=30)
            else:
                await wait_for(lambda: app.screen.state.counts()["pending"] == 0
                               and "finished" in str(app.screen.query_one("#header").render()), timeout=30)
            lags[where] = time.perf_counter() - gone
    return lags


def child(what: str, started_wall: float) -> None:
    """One measurement in this fresh process; prints JSON."""
    if what in ("small", "big"):
        app_only, painted = asyncio.run(first_paint(what))
        print(json.dumps({"app": app_only, "wall": painted - started_wall}))
    elif what == "follow":
        print(json.dumps(asyncio.run(follow_lag())))
    elif what == "keys":
        print(json.dumps(asyncio.run(keys_filter_search())))
    else:
        print(json.dumps(asyncio.run(from_the_form())))


def measure(what: str) -> dict:
    started = time.time()
    out = subprocess.run([sys.executable, __file__, "--child", what, repr(started)], check=True, capture_output=True,
                         text=True, cwd=ROOT, env=dict(os.environ))
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_ms(values: list[float]) -> str:
    return f"{1000 * statistics.median(values):.0f} ms"


def report(repeats: int) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared)")
    for run, items in (("small", 323), ("big", 10_013)):
        runs = [measure(run) for _ in range(repeats)]
        print(f"first paint, {items:,} items: median {median_ms([r['wall'] for r in runs])} from `python` start "
              f"(app only {median_ms([r['app'] for r in runs])}); runs "
              + ", ".join(f"{r['wall']:.2f}" for r in runs) + " s")
    keys = [measure("keys") for _ in range(repeats)]
    moves = [m for k in keys for m in k["moves"]]
    print(f"key to repaint (j, 10,013 items): median {median_ms(moves)} over {len(moves)} moves")
    for name, label in (("filter", "filter status wrong"), ("unfilter", "filter back to all"),
                        ("search_cold", "search, first (text index built)"), ("search_warm", "search again")):
        print(f"{label} (10,013 items): median {median_ms([k[name] for k in keys])}")
    headless = [n2f("run", "dedc", *BIG, "-m", "sim", "--name", f"headless-{i}")["items_per_s"] for i in range(repeats)]
    form = [measure("form") for _ in range(repeats)]
    rates = [r["rate"] for r in form]
    rate = statistics.median(rates)
    print(f"10,013-item sim run: headless median {statistics.median(headless):.0f} items/s "
          f"({', '.join(f'{r:.0f}' for r in headless)}); from the form median {rate:.0f} items/s "
          f"({', '.join(f'{r:.0f}' for r in rates)}) = {100 * rate / statistics.median(headless):.0f}% "
          f"of headless; the form on \"starting…\" median {statistics.median(r['starting'] for r in form):.1f} s")
    follows = [measure("follow") for _ in range(repeats)]
    pairs = ", ".join(f"{f['home']:.2f}/{f['run']:.2f}" for f in follows)
    print("a headless run's final counts on screen after it ends: home list median "
          f"{median_ms([f['home'] for f in follows])}, run screen median {median_ms([f['run'] for f in follows])} "
          f"(home/run: {pairs} s)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], float(sys.argv[3]))
        return
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as home:
        os.environ["N2F_HOME"] = home
        n2f("run", "dedc", "-m", "sim", "--name", "small")
        n2f("run", "dedc", *BIG, "-m", "sim", "--name", "big")
        report(repeats)


if __name__ == "__main__":
    main()
