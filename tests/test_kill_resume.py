"""A run killed with SIGKILL mid-way resumes to exactly the report of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sessions.store.results_log import ResultsLog
from test_cli import n2f

COMPARED = ("n", "counts", "accuracy", "tags", "metrics", "tables")


def results_on_disk(run_dir: Path) -> int:
    """Items with a stored result, read as any reader would (a partial last line does not count)."""
    return len(ResultsLog(run_dir).summaries())


@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run():
    args = ["run", "dedc", "-s", "repeat=10", "--seed", "7", "-q"]
    proc = subprocess.Popen([sys.executable, "-m", "n2f_tui", *args, "-m", "sim:latency=0.004", "-j", "2", "--name", "cut"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = Path(os.environ["N2F_HOME"], "runs")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        folders = list(runs.glob("dedc-*")) if runs.exists() else []
        if folders and results_on_disk(folders[0]) >= 300:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    run_dir = folders[0]
    done_at_kill = results_on_disk(run_dir)  # parses: the file is never half-written
    assert 300 <= done_at_kill < 3230
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "running"

    resumed = json.loads(n2f("resume", "cut", "--json", "-q").stdout)
    full = json.loads(n2f(*args, "-m", "sim", "--name", "whole", "--json").stdout)
    assert resumed["counts"]["pending"] == 0
    for key in COMPARED:
        assert resumed[key] == full[key], key
    assert not list(run_dir.glob("*.tmp-*"))
