"""The agreement view of a 10,013-item run with three annotators' labels on a 500-item study.

Usage: python benchmarks/agreement_open.py [REPEATS]

1. Creates the run in a fresh N2F_HOME (``n2f run dedc -s repeat=31 -m sim``, 10,013 items),
   a 500-item study (``n2f study create big --size 500 --seed 0 --stratify tag``) and three
   annotators' blind labels on it (seeded: each keeps an automatic tag with probability 0.8
   and adds another code with probability 0.15; nobody settles, so every disagreement is queued).
2. View: from ``A`` on the open run screen (once its header metrics, read from every record in
   a thread, are in) to the agreement view's tables filled (headless,
   160x48; every figure with its 1,000-draw bootstrap interval, the resamples drawn afresh
   each time), median of REPEATS opens, each in a new app.
3. Command: ``n2f agreement big --json`` as a whole process, median of REPEATS runs.

Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ANNOTATORS = ("ada", "bob", "cy")


def n2f(home: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "n2f_tui", *args], check=True, capture_output=True, cwd=ROOT,
                          env={**os.environ, "N2F_HOME": home})


def label(home: str) -> None:
    """Three annotators' blind labels on the study's items, one durable append per annotator."""
    os.environ["N2F_HOME"] = home
    from sessions.study import sample as study
    from sessions.store.files import now_iso
    from sessions.store.runs import RunStore

    store = RunStore.open("big")
    chosen = study.load(store)
    summaries, ids = store.summaries(), store.item_ids()
    auto = {ids[i]: s.get("tags", []) for i, s in summaries.items()}
    codes = sorted({c for tags in auto.values() for c in tags})
    for k, name in enumerate(ANNOTATORS):
        rng = random.Random(k)
        events = []
        for item_id in chosen.items:
            mine = {c for c in auto[item_id] if rng.random() < 0.8}
            if rng.random() < 0.15:
                mine.add(rng.choice(codes))
            for kind, code in [("tag_add", c) for c in sorted(mine)] + [("reviewed", "")]:
                events.append({"id": secrets.token_hex(8), "item": item_id, "kind": kind, "code": code, "label": code,
                               "text": "", "time": now_iso(), "source": "manual", "annotator": name, "blind": True})
        store.annotations(name).append(events)


async def open_view_once() -> float:
    from n2f_tui.app import N2FApp
    from n2f_tui.screens.agreement import AgreementScreen
    from n2f_tui.screens.run import RunScreen

    from sessions.study import statistics

    statistics._weights.cache_clear()  # every open draws its resamples, as the first open of a session does
    app = N2FApp(run="big", demo=False)
    async with app.run_test(size=(160, 48)) as pilot:
        while not (isinstance(app.screen, RunScreen) and app.screen.metrics):  # the header's report is done
            await asyncio.sleep(0.01)
        await pilot.pause()
        started = time.perf_counter()
        app.screen.action_agreement()
        while not (isinstance(app.screen, AgreementScreen) and app.screen.report is not None
                   and app.screen.query_one("#agree").row_count):
            await asyncio.sleep(0.0005)
        await pilot.pause()
        return time.perf_counter() - started


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    home = tempfile.mkdtemp(prefix="n2f-agreement-")
    t0 = time.perf_counter()
    n2f(home, "run", "dedc", "-s", "repeat=31", "-m", "sim", "-q", "--json", "--name", "big")
    n2f(home, "study", "create", "big", "--size", "500", "--seed", "0", "--stratify", "tag")
    label(home)
    print(f"made the run, the study and 3x500 labels in {time.perf_counter() - t0:.1f} s (N2F_HOME={home})")
    views = [asyncio.run(open_view_once()) for _ in range(repeats)]
    print(f"agreement view open (A to tables filled), median of {repeats}: {statistics.median(views):.3f} s "
          f"(min {min(views):.3f}, max {max(views):.3f})")
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        n2f(home, "agreement", "big", "--json")
        runs.append(time.perf_counter() - started)
    print(f"n2f agreement big --json (whole process), median of {repeats}: {statistics.median(runs):.3f} s "
          f"(min {min(runs):.3f}, max {max(runs):.3f})")


if __name__ == "__main__":
    main()
