"""Throughput of DEDC scoring alone (parse + check + tag + views) on the official base items.

Usage: python benchmarks/dedc_score.py [PATH to 4_to_4_shot3.full.jsonl]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from engines import get_engine
from engines.core import SimOptions, parse_settings

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "dedc" / "4_to_4_shot3.full.jsonl"


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)
    engine = get_engine("dedc")
    settings = parse_settings(engine.settings_type, [f"dataset={path}"])
    items = engine.items(settings, 0)
    for rate in (0.0, 0.3, 1.0):
        outputs = [[engine.simulate(item, None, [], SimOptions(error_rate=rate), i)] for i, item in enumerate(items)]
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for item, out in zip(items, outputs):
                engine.score(item, out, settings)
            times.append(time.perf_counter() - start)
        print(f"error_rate={rate}: {len(items) / statistics.median(times):.0f} items/s "
              f"(median of 5 passes over {len(items)} items, views included)")


if __name__ == "__main__":
    main()
