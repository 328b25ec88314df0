"""Whole-process wall time: ``n2f run dedc -s repeat=10 -m sim`` vs Inspect AI's mock model.

Both sides do the same number of items (3,230) end to end as a person would start them,
process start-up included, alternating in one run so machine load hits both alike; the
median of a few runs each is compared.

Inspect AI is installed only in this script's own venv (under the user cache dir, reused
on later runs), never in the project's environment. Usage::

    python benchmarks/inspect_compare.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = 3230  # dedc's 323 items x repeat=10
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


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one whole process; a failure stops the comparison with its stderr."""
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def check_inspect_log(python: Path, log_dir: Path) -> None:
    """Stop unless the eval finished every sample with the mock model: a failed eval is fast, not a figure."""
    done = subprocess.run([str(python), "-c", CHECK_LOG, str(log_dir)], capture_output=True, text=True)
    if done.stdout.split() != ["success", "mockllm/model", str(SAMPLES)]:
        sys.exit(f"inspect eval did not complete {SAMPLES} samples with mockllm/model: {done.stdout.strip()} {done.stderr[-500:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (median reported)")
    args = parser.parse_args()
    inspect = inspect_venv()
    with tempfile.TemporaryDirectory(prefix="n2f-vs-inspect-") as scratch:
        work = Path(scratch)
        (work / "trivial.py").write_text(TASK_FILE, encoding="utf-8")
        n2f_env = {**os.environ, "N2F_HOME": str(work / "n2f-home")}
        ours, theirs = [], []
        for run in range(args.runs):
            ours.append(timed([sys.executable, *N2F_COMMAND], n2f_env, work))
            log_dir = work / f"logs-{run}"
            # inspect resolves task files relative to its working directory; the task sets the model
            command = [str(inspect), "eval", "trivial.py", "--display", "none", "--log-dir", str(log_dir)]
            theirs.append(timed(command, dict(os.environ), work))
            check_inspect_log(inspect.parent / "python", log_dir)
    n2f_s, inspect_s = statistics.median(ours), statistics.median(theirs)
    print(f"n2f run dedc -s repeat=10 -m sim ({SAMPLES} items): median {n2f_s:.2f}s of {[round(t, 2) for t in ours]}")
    print(f"inspect eval, mockllm/model ({SAMPLES} samples): median {inspect_s:.2f}s of {[round(t, 2) for t in theirs]}")
    print(f"ratio (inspect / n2f): {inspect_s / n2f_s:.1f}x")


if __name__ == "__main__":
    main()
