"""rgp timings and CPU: the sandbox on one program's 16 samples, and whole `n2f run rgp` processes.

Usage: python benchmarks/rgp_run.py [BATCHES] [RUNS] [ITEMS]
       python benchmarks/rgp_run.py --against CHECKOUT [--pairs K] [--sim-items ITEMS]

1. Sandboxed execution of one per-component program on its 16 inputs (concurrently,
   through ``Sandbox.run_all``), median wall time of BATCHES batches after a warm-up, with
   the isolation level in force, and the CPU of the fork server and its runs per batch
   (the server's start excluded). For comparison: the same 16 runs as fresh ``python -I``
   processes without any isolation (why the sandbox is a fork server).
2. CPU per item of whole ``n2f run rgp -m sim -n ITEMS`` processes (the main process and
   every process it waited for: the sandbox server and its runs), median of RUNS fresh
   processes, each in a fresh N2F_HOME: the figure issue 28 asks to halve.
3. Whole-process wall time of ``n2f run rgp -m sim -s dataset=<the official folder>``
   (all 180 official instances) and of ``n2f run rgp -m oracle`` (180 generated), median
   of RUNS runs, with their CPU per item.

With ``--against``: CPU per item of this checkout and of another one (a ``git worktree`` of
an older commit, say), as in 2. (ITEMS 40 by default), in K interleaved pairs (the order
alternating), each side's per item being (CPU of ``-n ITEMS`` - CPU of ``-n 1``) /
(ITEMS - 1), so that start-up is not counted. Each side runs its own code (``PYTHONPATH``
and working folder its checkout, bytecode written as an installed package has it) and so
its own sandbox server. Prints each pair, the medians and the median of the pairs' ratios
(other / this).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engines.rgp.generate import build_items  # noqa: E402
from engines.rgp.parse import extract_program  # noqa: E402
from engines.rgp.settings import RgpSettings  # noqa: E402
from engines.rgp.simulate import oracle  # noqa: E402
from sessions.tools.sandbox import Limits, Sandbox  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "rgp"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def children_faults() -> int:
    """Page faults of the processes waited for: a fork's copy-on-write pages are most of a run's CPU."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt


def sandbox_batches(batches: int) -> tuple[float, float, float, str]:
    """Median wall seconds of a batch, the server's and its runs' CPU seconds and page faults per batch, the
    isolation level."""
    item = build_items(RgpSettings(setting="b", count=1), 0)[0]
    program = extract_program(oracle(item)).program
    inputs = [s["input"] for s in item.inputs["samples"]]

    async def batch(box: Sandbox) -> float:
        start = time.perf_counter()
        results = await box.run_all(program, inputs, Limits())
        elapsed = time.perf_counter() - start
        assert [r.stdout.strip() for r in results] == [s["output"] for s in item.inputs["samples"]]
        return elapsed

    async def measure(box: Sandbox, count: int) -> list[float]:
        return [await batch(box) for _ in range(count)]

    def server_cpu(count: int) -> tuple[list[float], float, int, str]:
        before, faults = children_cpu(), children_faults()
        box = Sandbox()
        try:
            level = box.isolation
            times = asyncio.run(measure(box, count))
        finally:
            box.close()
        return times, children_cpu() - before, children_faults() - faults, level

    _, start_only, start_faults, _ = server_cpu(0)
    times, cpu, faults, level = server_cpu(batches)
    return statistics.median(times), (cpu - start_only) / batches, (faults - start_faults) / batches, level


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


def n2f_run_cpu(args: list[str], checkout: Path = ROOT) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the process and all it waited for) and items of one fresh `n2f run rgp` of
    ``checkout`` (its own code and sandbox server: ``PYTHONPATH`` and working folder), its bytecode written
    as an installed package has it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as home:
        before, start = children_cpu(), time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "n2f_tui", "run", "rgp", *args, "--json", "-q"],
                                capture_output=True, text=True, check=True, cwd=checkout,
                                env={**env, "N2F_HOME": home, "PYTHONPATH": str(checkout)})
        wall, cpu = time.perf_counter() - start, children_cpu() - before
    return wall, cpu, int(json.loads(result.stdout)["n"])


def paired(other: Path, pairs: int, items: int) -> None:
    """CPU per item of this checkout against ``other``, in interleaved pairs."""
    sides = [ROOT, other.resolve()]
    def cpu(side: Path, items: int) -> float:
        return n2f_run_cpu(["-m", "sim", "-n", str(items)], side)[1]

    for side in sides:  # a first run of each writes its bytecode
        cpu(side, 1)
    mine, theirs, ratios = [], [], []
    for k in range(pairs):
        per_item = {}
        for side in sides if k % 2 == 0 else sides[::-1]:
            per_item[side] = 1000 * (cpu(side, items) - cpu(side, 1)) / (items - 1)
        mine.append(per_item[sides[0]])
        theirs.append(per_item[sides[1]])
        ratios.append(theirs[-1] / mine[-1])
        print(f"pair {k + 1}: this {mine[-1]:.1f} ms, other {theirs[-1]:.1f} ms per item: {ratios[-1]:.2f}x", flush=True)
    print(f"CPU per item (main process plus sandbox), median of {pairs}: this checkout {statistics.median(mine):.1f} ms, "
          f"{other} {statistics.median(theirs):.1f} ms; paired median {statistics.median(ratios):.2f}x "
          f"(pairs {min(ratios):.2f}x-{max(ratios):.2f}x)")


def whole_runs(label: str, args: list[str], runs: int) -> None:
    measured = [n2f_run_cpu(args) for _ in range(runs)]
    for wall, cpu, n in measured:
        print(f"  {label}: {wall:.2f} s, {cpu:.2f} s CPU = {1000 * cpu / n:.1f} ms per item ({n} items)")
    wall = statistics.median(m[0] for m in measured)
    per_item = statistics.median(1000 * m[1] / m[2] for m in measured)
    print(f"{label}: median {wall:.2f} s wall, {per_item:.1f} ms CPU per item, of {runs} fresh processes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("batches", nargs="?", type=int, default=30)
    parser.add_argument("runs", nargs="?", type=int, default=3)
    parser.add_argument("items", nargs="?", type=int, default=30)
    parser.add_argument("--against", type=Path, help="another checkout: CPU per item of both, in pairs, nothing else")
    parser.add_argument("--pairs", type=int, default=5, help="with --against: how many pairs")
    parser.add_argument("--sim-items", type=int, default=40, help="with --against: the items of each sim run")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    if args.against is not None:
        paired(args.against, args.pairs, args.sim_items)
        return
    median, cpu, faults, level = sandbox_batches(args.batches)
    print(f"sandbox, 16 runs of one program: median {1000 * median:.1f} ms of {args.batches} batches, "
          f"{1000 * cpu:.1f} ms CPU and {faults / 16:.0f} page faults a run (server and runs)  [{level}]")
    print(f"fresh python -I per run, no isolation: median {1000 * fresh_processes(max(3, args.batches // 5)):.1f} ms")
    whole_runs(f"sim, {args.items} generated instances", ["-m", "sim", "-n", str(args.items)], args.runs)
    whole_runs("sim, 180 official instances", ["-m", "sim", "-s", f"dataset={DATA}"], args.runs)
    whole_runs("oracle, 180 generated instances", ["-m", "oracle"], args.runs)


if __name__ == "__main__":
    main()
