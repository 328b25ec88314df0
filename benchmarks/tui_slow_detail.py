"""Key-to-paint while a logic item's detail takes seconds of solver time to build.

Usage: python benchmarks/tui_slow_detail.py [MOVES]

1. A fresh N2F_HOME and a 12-item first-order logic run on a replay file: item 2's round-trip
   reply is a theory with only infinite models (transitive, serial, irreflexive ``p2``), so
   re-scoring it for the detail runs Z3 into its 2 s timeout; the other items' replies are
   their own formulas (decided at once).
2. In the inspector (headless, 160x48), MOVES times from item 1: ``j`` onto the slow item
   (drawn from what is stored, its re-scoring starts), 50 ms later ``j`` again (both sent
   through the driver, as a terminal's keys are); timed: each key to its item's detail
   painted. Then the dropped slow scoring (timed once on its own beforehand) is let finish
   in its thread and the cursor put back on item 1.

Printed: the median, p95 and max of both key-to-paint times, and how long the slow item's
detail takes to build on its own. "Painted" is benchmarks/tui_open.py's probe: the first
paint of the output pane after the detail holds the new item. Nothing is asserted.
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

from tui_open import ROOT, SIZE, CallProbe, PaintProbe, pct, run_screen, wait_for

ITEMS = 12
INFINITE_ONLY = ("∀x1 ∀x2 ∀x3 ((p2(x1, x2) ∧ p2(x2, x3)) → p2(x1, x3)) ∧ ∀x1 ∃x2 p2(x1, x2) ∧ "
                 "∀x1 ¬p2(x1, x1)")


def make_run(home: str) -> None:
    from sessions import api

    _, _, items = api.build_items("logic", ["dataset=fol"], 0)
    replay = Path(home) / "replies.jsonl"
    with replay.open("w", encoding="utf-8") as out:
        for number, item in enumerate(items):
            if number == ITEMS:
                break
            formula = INFINITE_ONLY if number == 1 else item.inputs["formula"]
            out.write(json.dumps({"id": item.id, "outputs": ["a description", formula]}, ensure_ascii=False) + "\n")
    subprocess.run([sys.executable, "-m", "n2f_tui", "run", "logic", "-s", "dataset=fol", "-n", str(ITEMS),
                    "-m", f"replay:{replay}", "-q", "--json", "--name", "slow"],
                   check=True, env={**os.environ, "N2F_HOME": home}, capture_output=True, cwd=ROOT)


async def press(app, key: str) -> float:
    from textual import events

    sent = time.perf_counter()
    app._driver.send_message(events.Key(key, key))
    return sent


def slow_build() -> float:
    """Seconds to build the slow item's detail on its own (the solver's work, outside the app)."""
    from sessions import api
    from sessions.store.runs import RunStore

    store = RunStore.open("slow")
    started = time.perf_counter()
    api.item_detail(store, 1)
    return time.perf_counter() - started


async def measure(moves: int, slow: float) -> tuple[list[float], list[float]]:
    from n2f_tui.app import N2FApp
    from n2f_tui.widgets.detail import DetailView

    app = N2FApp(run="slow", demo=False)
    key_to_paint, onto_slow = [], []
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: run_screen(app) is not None and app.screen.query_one(DetailView).shown is not None,
                       timeout=30)
        screen = app.screen
        detail = screen.query_one(DetailView)
        probe = PaintProbe(screen.query_one("#col-output"))
        shows = CallProbe(detail, "show")
        for _ in range(moves):
            screen.move_to(0)
            await wait_for(lambda: screen.detail_ready, timeout=30)
            await pilot.pause()
            on_slow = await press(app, "j")
            await wait_for(lambda: detail.shown is not None and detail.shown[0] == 1 and probe.last > shows.last > on_slow,
                           timeout=30)
            onto_slow.append(probe.last - on_slow)
            await asyncio.sleep(max(0.0, 0.05 - (time.perf_counter() - on_slow)))
            sent = await press(app, "j")
            await wait_for(lambda: screen.current == 2 and detail.shown is not None and detail.shown[0] == 2
                           and probe.last > shows.last > sent, timeout=30)
            key_to_paint.append(probe.last - sent)
            await asyncio.sleep(slow + 0.2 - (time.perf_counter() - on_slow))  # the dropped build runs on: let it end
    return onto_slow, key_to_paint


def main() -> None:
    moves = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with tempfile.TemporaryDirectory() as home:
        os.environ["N2F_HOME"] = home
        sys.path.insert(0, str(ROOT))
        make_run(home)
        slow = slow_build()
        onto, times = asyncio.run(measure(moves, slow))
    print(f"key j onto item 2 (its re-scoring runs Z3 into the 2 s timeout) to its stored parts painted: "
          f"median {1000 * statistics.median(onto):.1f} ms, p95 {1000 * pct(onto, 0.95):.1f} ms, "
          f"max {1000 * max(onto):.1f} ms")
    print(f"key j on to item 3, 50 ms later, while item 2's re-scoring goes on, to item 3's detail painted: "
          f"median {1000 * statistics.median(times):.1f} ms, p95 {1000 * pct(times, 0.95):.1f} ms, "
          f"max {1000 * max(times):.1f} ms over {len(times)} moves")
    print(f"  (the slow item's detail alone takes {slow:.2f} s to build; on a key it is built in a worker and "
          "dropped when the cursor moves on)")


if __name__ == "__main__":
    main()
