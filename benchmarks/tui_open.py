"""The inspector on a 10,013-item run: open time, next-item latency, key latency while a run goes on.

Usage: python benchmarks/tui_open.py [REPEATS]

1. Creates the run in a fresh N2F_HOME (``n2f run dedc -s repeat=31 -m sim``, 10,013 items).
2. Open: from starting the app on that run to the item list and the first item's detail
   painted (headless, 160x48), and to the header's metrics in, median of REPEATS fresh apps.
3. Next item: ``j`` (sent through the driver as a terminal key would be) to the new
   item's detail painted, median over 40 moves.
4. Live: a new 10,013-item run on the zero-latency simulator started inside the app
   while ``j`` is pressed every 150 ms: key-to-paint latency (median, p95, max) and the
   run's items/s.

"Painted" means the compositor rendered the detail pane's lines for the new item (the
headless driver then drops the output, so terminal write time is not counted). Figures
are printed; nothing is asserted.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SIZE = (160, 48)


def make_run(home: str) -> None:
    env = {**os.environ, "N2F_HOME": home}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "n2f_tui", "run", "dedc", "-s", "repeat=31", "-m", "sim", "-q", "--json",
                    "--name", "big"], check=True, env=env, capture_output=True, cwd=ROOT)
    print(f"created the 10,013-item run in {time.perf_counter() - t0:.1f} s")


class PaintProbe:
    """Records when a pane rendered lines (each paint of it)."""

    def __init__(self, widget) -> None:
        self.last = 0.0
        self.times: list[float] = []
        original = widget.render_lines

        def render_lines(crop):
            self.last = time.perf_counter()
            self.times.append(self.last)
            return original(crop)

        widget.render_lines = render_lines

    def first_after(self, moment: float) -> float:
        return min(t for t in self.times if t > moment)


class CallProbe:
    """Records when a method of a widget was last called (the detail filled, a pane updated)."""

    def __init__(self, widget, method: str) -> None:
        self.last = 0.0
        original = getattr(widget, method)

        def called(*args, **kwargs):
            result = original(*args, **kwargs)
            self.last = time.perf_counter()
            return result

        setattr(widget, method, called)


def holds(predicate) -> bool:
    try:
        return bool(predicate())
    except Exception:  # the screen is still being built
        return False


async def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout
    while not holds(predicate):
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen did not update in time")
        await asyncio.sleep(0.0005)


def run_screen(app):
    from n2f_tui.screens.run import RunScreen

    return app.screen if isinstance(app.screen, RunScreen) else None


async def open_once() -> tuple[float, float]:
    """Seconds from starting the app on the run to the list and the first item's detail painted, and to the
    header's metrics in (worked out in a thread after the first paint)."""
    from n2f_tui.app import N2FApp
    from n2f_tui.widgets.detail import DetailView

    app = N2FApp(run="big", demo=False)
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one(DetailView).shown is not None)
        probe = PaintProbe(app.screen.query_one("#col-output"))
        await wait_for(lambda: probe.last > 0)
        # one paint after the detail was filled: the first item is on screen
        elapsed = time.perf_counter() - t0
        await wait_for(lambda: bool(app.screen.metrics))
        metrics = time.perf_counter() - t0
        await pilot.pause()
    return elapsed, metrics


async def home_once() -> float:
    """From starting the app on the home screen to every run's row showing its figures (read from each
    run's summary in a thread)."""
    from n2f_tui.app import N2FApp
    from n2f_tui.screens.home import HomeScreen
    from sessions.store.runs import iter_runs

    runs = {store.id for store in iter_runs()}
    app = N2FApp(demo=False)
    t0 = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: isinstance(app.screen, HomeScreen) and runs <= set(app.screen.summaries))
        await pilot.pause()  # the rows updated from them painted
        elapsed = time.perf_counter() - t0
    return elapsed


async def key_latency(app, probe, shows, key: str = "j", views_probe=None, views_updates=None):
    """Key to the detail's output pane painted for the new item (and to the views pane, if probed).

    The paint counted is the first one after the detail was filled with the new item
    (``shows``), not a repaint of the old item that may come first; for the views, the
    first paint after the pane got the new item's views (``views_updates``), which may be
    the same paint as the output's.
    """
    from textual import events

    screen = app.screen
    before = screen.current
    target_pos = screen.vlist.cursor + 1
    t0 = time.perf_counter()
    app._driver.send_message(events.Key(key, key))
    await wait_for(lambda: screen.vlist.cursor == target_pos and screen.query_one("DetailView").shown
                   and screen.query_one("DetailView").shown[0] != before and probe.last > shows.last > t0)
    first = probe.first_after(shows.last) - t0
    if views_probe is None:
        return first
    await wait_for(lambda: screen.detail_ready and views_updates.last > t0 and views_probe.last > views_updates.last)
    return first, views_probe.first_after(views_updates.last) - t0


async def next_item(moves: int = 40) -> list[float]:
    from n2f_tui.app import N2FApp

    app = N2FApp(run="big", demo=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one("DetailView").shown)
        await pilot.pause()
        probe = PaintProbe(app.screen.query_one("#col-output"))
        views = PaintProbe(app.screen.query_one("#col-views"))
        views_updates = CallProbe(app.screen.query_one("#col-views"), "update")
        shows = CallProbe(app.screen.query_one("DetailView"), "show")
        times = []
        for _ in range(moves):
            times.append(await key_latency(app, probe, shows, views_probe=views, views_updates=views_updates))
            await asyncio.sleep(0.05)
    return times


async def live(presses: int = 40) -> tuple[list[float], float, int]:
    from n2f_tui.app import N2FApp
    from sessions import api

    app = N2FApp(demo=False)
    async with app.run_test(size=SIZE) as pilot:
        prepared = await api.prepare_run("dedc", ["repeat=31"], model="sim", concurrency=8, name="live")
        job = app.start_job(prepared)
        app.open_run(prepared.store.id)
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one("DetailView").shown)
        probe = PaintProbe(app.screen.query_one("#col-output"))
        shows = CallProbe(app.screen.query_one("DetailView"), "show")
        times = []
        while not job.done and len(times) < presses:
            await asyncio.sleep(0.15)
            if job.done:
                break
            times.append(await key_latency(app, probe, shows))
        while not job.done:
            await asyncio.sleep(0.05)
        progress = job.progress
        await pilot.pause()
    return times, progress.rate, progress.done


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def child(what: str) -> None:
    """One measurement in this (fresh) process; prints JSON."""
    import json

    t0 = time.perf_counter()
    import n2f_tui.app  # noqa: F401

    imported = time.perf_counter() - t0
    if what == "open":
        opened, metrics = asyncio.run(open_once())
        print(json.dumps({"import": imported, "open": opened, "metrics": metrics}))
    elif what == "home":
        print(json.dumps({"import": imported, "home": asyncio.run(home_once())}))
    elif what == "next":
        print(json.dumps({"moves": asyncio.run(next_item())}))
    else:
        times, rate, done = asyncio.run(live())
        print(json.dumps({"times": times, "rate": rate, "done": done}))


def measure(what: str) -> dict:
    import json

    out = subprocess.run([sys.executable, __file__, "--child", what], check=True, capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
        return
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as home:
        os.environ["N2F_HOME"] = home
        make_run(home)
        runs = [measure("open") for _ in range(repeats)]
        opens = [r["open"] for r in runs]
        print(f"importing the app (fresh process): median {statistics.median(r['import'] for r in runs):.2f} s")
        print(f"open 10,013-item run to list + first detail painted (fresh process each, imports not counted): "
              f"median {statistics.median(opens):.3f} s (runs: {', '.join(f'{t:.3f}' for t in opens)})")
        print(f"  ... and to the header's metrics in: median {statistics.median(r['metrics'] for r in runs):.3f} s")
        pairs = measure("next")["moves"]
        moves, views = [p[0] for p in pairs], [p[1] for p in pairs]
        print(f"next item (key j to the detail painted: head, prompt, output): median {1000 * statistics.median(moves):.1f} ms, "
              f"p95 {1000 * pct(moves, 0.95):.1f} ms, max {1000 * max(moves):.1f} ms over {len(moves)} moves")
        print(f"  ... and to the engine-views pane painted too: median {1000 * statistics.median(views):.1f} ms, "
              f"p95 {1000 * pct(views, 0.95):.1f} ms, max {1000 * max(views):.1f} ms")
        result = measure("live")
        times, rate, done = result["times"], result["rate"], result["done"]
        if times:
            print(f"live run ({done} items at {rate:.0f} items/s inside the app): key to detail painted "
                  f"median {1000 * statistics.median(times):.1f} ms, p95 {1000 * pct(times, 0.95):.1f} ms, "
                  f"max {1000 * max(times):.1f} ms over {len(times)} presses")
        else:
            print(f"live run finished ({done} items at {rate:.0f} items/s) before a key could be measured")


if __name__ == "__main__":
    main()
