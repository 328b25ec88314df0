"""RoboGrid throughput: whole-process `n2f run robogrid -m sim` and per-item grammar + scoring time.

Usage: python benchmarks/robogrid_run.py [RUNS]

1. Whole process, median of RUNS fresh processes (fresh N2F_HOME each): start-up,
   generation of 200 depth-10 items (each with its own Alien grammar), prompting, the
   simulator, parsing, scoring, tagging, the store and the report.
2. Per item, in a process that did not generate the items (so nothing is cached): read
   an item whose grammar this process has never seen, build its parser, parse its gold
   program and a reply (the gold re-flowed onto one line, so it is parsed too), run both,
   compare and tag. The first item of each style also pays for that style's LALR tables;
   the others only for their grammar's token table.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from whole_process import repeated_runs

ITEMS = 200
PER_ITEM = 60


def per_item(lines: list[str]) -> dict[str, float]:
    """Milliseconds per item in this process: cold (first of each style) and warm (new grammar)."""
    from lark import Lark

    from engines.core import Item
    from engines.robogrid import ENGINE
    from engines.robogrid.score import item_grammar

    cold: list[float] = []
    warm: list[float] = []
    views: list[float] = []
    stock: list[float] = []
    seen: set[str] = set()
    for line in lines:
        began = time.perf_counter()
        item = Item.from_json(json.loads(line))
        reply = " ".join(item.gold["program"].split())
        verdict = ENGINE.score(item, [reply], None, with_views=False)
        took = 1000 * (time.perf_counter() - began)
        assert verdict.status == "correct", verdict.to_json(with_views=False)
        (warm if item.meta["style"] in seen else cold).append(took)
        seen.add(item.meta["style"])
        began = time.perf_counter()  # another reply (parsed anew) with every pane the inspector shows
        ENGINE.score(item, ["  ".join(item.gold["program"].split())], None, with_views=True)
        views.append(1000 * (time.perf_counter() - began))
        began = time.perf_counter()  # for comparison: stock lark building this grammar's own LALR parser
        Lark(item_grammar(item).lark_source, parser="lalr")
        stock.append(1000 * (time.perf_counter() - began))
    return {"cold_ms": statistics.median(cold), "warm_ms": statistics.median(warm), "warm_max_ms": max(warm),
            "with_views_ms": statistics.median(views), "stock_build_ms": statistics.median(stock)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--per-item":
        print(json.dumps(per_item(sys.stdin.read().splitlines())))
        return
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    times, _ = repeated_runs("robogrid", ["-m", "sim"], runs)
    median = statistics.median(times)
    print(f"whole process, median of {runs}: {median:.2f} s for {ITEMS} depth-10 items "
          f"= {ITEMS / median:.0f} items/s")

    items = subprocess.run([sys.executable, "-m", "n2f_tui", "items", "robogrid", "-s", f"count={PER_ITEM // 3}",
                            "-s", "style=block,c,sexpr", "-s", "depth=10"],
                           capture_output=True, text=True, check=True).stdout
    measured = subprocess.run([sys.executable, __file__, "--per-item"], input=items, capture_output=True, text=True,
                              check=True)
    figures = json.loads(measured.stdout)
    print(f"per item ({PER_ITEM} depth-10 items, each with a grammar the process has not seen): "
          f"new grammar + score {figures['warm_ms']:.1f} ms median (max {figures['warm_max_ms']:.1f} ms); "
          f"first item of a style, LALR tables included, {figures['cold_ms']:.1f} ms; "
          f"another reply scored with the inspector's views {figures['with_views_ms']:.1f} ms; "
          f"(stock Lark(grammar.lark_source) build alone: {figures['stock_build_ms']:.1f} ms)")


if __name__ == "__main__":
    main()
