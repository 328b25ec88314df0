"""rgp timings: the sandbox on one program's 16 samples, and whole `n2f run rgp` processes.

Usage: python benchmarks/rgp_run.py [BATCHES] [RUNS]

1. Sandboxed execution of one per-component program on its 16 inputs (concurrently,
   through ``Sandbox.run_all``), median of BATCHES batches after a warm-up, with the
   isolation level in force. For comparison: the same 16 runs as fresh ``python -I``
   processes without any isolation (why the sandbox is a fork server).
2. Whole-process wall time of ``n2f run rgp -m sim -s dataset=<the official folder>``
   (all 180 official instances) and of ``n2f run rgp -m oracle`` (180 generated), median
   of RUNS runs, each in a fresh process and a fresh N2F_HOME.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.rgp.generate import build_items  # noqa: E402
from engines.rgp.parse import extract_program  # noqa: E402
from engines.rgp.settings import RgpSettings  # noqa: E402
from engines.rgp.simulate import oracle  # noqa: E402
from sessions.tools.sandbox import Limits, Sandbox  # noqa: E402
from whole_process import repeated_runs  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "rgp"


def sandbox_batches(batches: int) -> tuple[float, str]:
    item = build_items(RgpSettings(setting="b", count=1), 0)[0]
    program = extract_program(oracle(item)).program
    inputs = [s["input"] for s in item.inputs["samples"]]
    box = Sandbox()

    async def batch() -> float:
        start = time.perf_counter()
        results = await box.run_all(program, inputs, Limits())
        elapsed = time.perf_counter() - start
        assert [r.stdout.strip() for r in results] == [s["output"] for s in item.inputs["samples"]]
        return elapsed

    async def measure() -> list[float]:
        for _ in range(3):
            await batch()
        return [await batch() for _ in range(batches)]

    try:
        level = box.isolation
        times = asyncio.run(measure())
    finally:
        box.close()
    return statistics.median(times), level


def fresh_processes(batches: int) -> float:
    item = build_items(RgpSettings(setting="b", count=1), 0)[0]
    program = extract_program(oracle(item)).program
    inputs = [s["input"] for s in item.inputs["samples"]]

    async def one(text: str) -> None:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-I", "-c", program, stdin=-1, stdout=-1,
                                                    stderr=-1, env={})
        await proc.communicate(text.encode())

    async def measure() -> list[float]:
        times = []
        for _ in range(batches):
            start = time.perf_counter()
            await asyncio.gather(*(one(t) for t in inputs))
            times.append(time.perf_counter() - start)
        return times

    return statistics.median(asyncio.run(measure()))


def main() -> None:
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    median, level = sandbox_batches(batches)
    print(f"sandbox, 16 runs of one program: median {1000 * median:.1f} ms of {batches} batches  [{level}]")
    print(f"fresh python -I per run, no isolation: median {1000 * fresh_processes(max(3, batches // 5)):.1f} ms")
    for label, args in (("sim, 180 official instances", ["-m", "sim", "-s", f"dataset={DATA}"]),
                        ("oracle, 180 generated instances", ["-m", "oracle"])):
        times, _ = repeated_runs("rgp", args, runs, ROOT, lambda seconds, report, label=label:
                                 f"  {label}: {seconds:.2f} s ({report['n']} items, counts {report['counts']})")
        print(f"{label}: median {statistics.median(times):.2f} s of {runs} whole-process runs")


if __name__ == "__main__":
    main()
