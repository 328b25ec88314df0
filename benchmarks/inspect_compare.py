"""Whole-process CPU, wall time and peak RSS: ``n2f run dedc -s repeat=10 -m sim`` vs Inspect AI's mock model.

The same-shaped work on both sides, end to end as a person would start it, process start-up
included: n2f's 3,230 dedc items (generate, call the simulator, score) against Inspect AI's
``mockllm/model`` on 3,000 samples of a generate + match task with ``--max-samples 1000``.
The two run in interleaved pairs, so machine load hits both alike; each figure is the
median over the pairs, and the CPU ratio (Inspect / n2f) is issue 28's figure. CPU is the
user + system time of the process and the children it waited for (``wait4``).

Inspect AI is installed only in this script's own venv (under the user cache dir, reused
on later runs), never in the project's environment. Usage::

    python benchmarks/inspect_compare.py [--pairs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

N2F_ITEMS = 3230  # dedc's 323 items x repeat=10
SAMPLES = 3000  # Inspect's side, as issue 28 sets it
MAX_SAMPLES = 1000  # Inspect's samples in flight
N2F_COMMAND = ["-m", "n2f_tui", "run", "dedc", "-s", "repeat=10", "-m", "sim", "-q", "--json"]

# mockllm would count tokens with tiktoken, which downloads its encoding on first use (and
# fails offline, ending the eval after a few samples with exit status 0): replies that carry
# their own usage skip that count. The log is checked after every run for all samples.
TASK_FILE = f'''
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate


def reply():
    output = ModelOutput.from_content(model="mockllm/model", content="answer")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


@task
def trivial():
    samples = [Sample(input=f"question {{i}}", target="answer") for i in range({SAMPLES})]
    model = get_model("mockllm/model", custom_outputs=(reply() for _ in samples))
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match(), model=model)
'''

CHECK_LOG = """
import sys
from pathlib import Path
from inspect_ai.log import read_eval_log
[path] = Path(sys.argv[1]).iterdir()
log = read_eval_log(str(path), header_only=True)
print(log.status, log.eval.model, log.results.completed_samples if log.results else 0)
"""


def inspect_venv() -> Path:
    """A venv holding inspect-ai, created once under the cache dir."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "n2f-tui" / "inspect-venv"
    inspect = cache / "bin" / "inspect"
    if not inspect.exists():
        subprocess.run([sys.executable, "-m", "venv", str(cache)], check=True)
        subprocess.run([str(cache / "bin" / "python"), "-m", "pip", "install", "-q", "inspect-ai"], check=True)
    return inspect


@dataclass
class Cost:
    """One whole process: wall and CPU seconds (its own and its children's), peak RSS in MB."""
    wall: float
    cpu: float
    rss_mb: float


def measured(command: list[str], env: dict[str, str], cwd: Path) -> Cost:
    """What one whole process cost (``wait4``: its rusage, with the children it waited for);
    a failure stops the comparison with its stderr."""
    with tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            stderr.seek(0)
            sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr.read()[-2000:].decode(errors='replace')}")
    return Cost(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def check_inspect_log(python: Path, log_dir: Path) -> None:
    """Stop unless the eval finished every sample with the mock model: a failed eval is fast, not a figure."""
    done = subprocess.run([str(python), "-c", CHECK_LOG, str(log_dir)], capture_output=True, text=True)
    if done.stdout.split() != ["success", "mockllm/model", str(SAMPLES)]:
        sys.exit(f"inspect eval did not complete {SAMPLES} samples with mockllm/model: {done.stdout.strip()} {done.stderr[-500:]}")


def median_of(costs: list[Cost], field: str) -> float:
    return statistics.median(getattr(c, field) for c in costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="interleaved pairs (medians reported)")
    args = parser.parse_args()
    inspect = inspect_venv()
    with tempfile.TemporaryDirectory(prefix="n2f-vs-inspect-") as scratch:
        work = Path(scratch)
        (work / "trivial.py").write_text(TASK_FILE, encoding="utf-8")
        ours, theirs = [], []
        # both sides as installed tools run: bytecode cached (an environment that turns caching off
        # would have n2f recompile every module it changed since its last cached run, at each start)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for pair in range(args.pairs):
            n2f_env = {**env, "N2F_HOME": str(work / f"n2f-home-{pair}")}
            ours.append(measured([sys.executable, *N2F_COMMAND], n2f_env, work))
            log_dir = work / f"logs-{pair}"
            # inspect resolves task files relative to its working directory; the task sets the model
            command = [str(inspect), "eval", "trivial.py", "--display", "none", "--max-samples", str(MAX_SAMPLES),
                       "--log-dir", str(log_dir)]
            theirs.append(measured(command, env, work))
            check_inspect_log(inspect.parent / "python", log_dir)
    for label, costs in ((f"n2f run dedc -s repeat=10 -m sim ({N2F_ITEMS} items)", ours),
                         (f"inspect eval mockllm/model ({SAMPLES} samples, --max-samples {MAX_SAMPLES})", theirs)):
        print(f"{label}: median CPU {median_of(costs, 'cpu'):.2f}s, wall {median_of(costs, 'wall'):.2f}s, "
              f"peak RSS {median_of(costs, 'rss_mb'):.0f} MB; CPU per pair {[round(c.cpu, 2) for c in costs]}")
    for field, what in (("cpu", "CPU"), ("wall", "wall"), ("rss_mb", "peak RSS")):
        ratios = [getattr(t, field) / getattr(o, field) for o, t in zip(ours, theirs)]
        print(f"{what} ratio (inspect / n2f): median of pairs {statistics.median(ratios):.1f}x "
              f"{[round(r, 1) for r in ratios]}")


if __name__ == "__main__":
    main()
