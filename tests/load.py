"""Run a command while busy loops keep the machine's cores taken: the suite must pass under load.

Usage: python tests/load.py [--busy-cores N] -- COMMAND...
       python tests/load.py -- python -m pytest -n 2 -m "not slow" -q

Each busy loop is a child Python spinning on the CPU at normal priority, so the command competes
for every core, as on a shared CI machine; a test that passes alone and fails here is timing-bound.
The loops are ended (by their own pids) when the command ends, whatever its outcome; the exit code
is the command's. The default, one loop per core, is the "both cores busy" figure of issue 31.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SPIN = "while True:\n    pass\n"


def busy_loops(count: int) -> list[subprocess.Popen]:
    """``count`` processes that each keep one core busy until they are killed."""
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]


def run_loaded(command: list[str], cores: int) -> tuple[int, float]:
    """The command's exit code and wall seconds, run while ``cores`` busy loops spin."""
    loops = busy_loops(cores)
    started = time.monotonic()
    try:
        code = subprocess.call(command)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return code, time.monotonic() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy-cores", type=int, default=os.cpu_count() or 1,
                        help="busy loops to run beside the command (default: one per core)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    code, seconds = run_loaded(command, args.busy_cores)
    print(f"load.py: exit {code} in {seconds:.0f} s with {args.busy_cores} busy core(s)", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
