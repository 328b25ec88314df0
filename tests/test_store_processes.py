"""The store under real processes: readers during a run, a full disk, concurrent annotators, kill -9 loops.

Each test compares against the report of the same seeded run written without any
interference, so "nothing lost" means the same counts, tags, metrics and tables.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sessions.store.results_log import INDEX, RECORDS, ResultsLog
from test_cli import n2f

COMPARED = ("n", "counts", "accuracy", "tags", "metrics", "tables")


def n2f_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "n2f_tui", *args]


def run_folder(name: str) -> Path | None:
    runs = Path(os.environ["N2F_HOME"], "runs")
    for folder in runs.glob("*") if runs.exists() else []:
        try:
            if json.loads((folder / "meta.json").read_text())["name"] == name:
                return folder
        except (OSError, ValueError):
            continue
    return None


def assert_logs_whole(folder: Path) -> None:
    """Every line of both result logs parses and every summary points at a record that parses."""
    log = ResultsLog(folder)
    for name in (RECORDS, INDEX):
        data = (folder / name).read_bytes()
        assert data.endswith(b"\n")
        for line in data.splitlines():
            json.loads(line)
    for index, record in log.iter_records():
        assert record["index"] == index


def reference_report(args: list[str], name: str) -> dict:
    return json.loads(n2f(*args, "-m", "sim", "--name", name, "--json", "-q").stdout)


@pytest.mark.slow
def test_readers_during_a_run_lose_nothing():
    """Another process writes the run while this one reads it (the readers run here, through the CLI's main)."""
    args = ["run", "dedc", "-s", "repeat=10", "--seed", "3"]
    # the replies' latency, not the machine's speed, sets how long the run goes on after its folder appears: at
    # 20 ms and -j 16, about 4 s for 3,230 items, several rounds of the readers (at 2 ms the run got shorter than
    # one round once scoring got faster, and the readers only ever saw the items being generated)
    writer = subprocess.Popen(n2f_cmd(*args, "-m", "sim:latency=0.02", "-j", "16", "--name", "raced", "-q"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reads = {"show": 0, "report": 0, "runs": 0}
    failures = []
    rounds = 0
    readers = [("show", ("show", "raced", str(n))) for n in (1, 50, 500)]
    readers += [("report", ("report", "raced", "--json")), ("runs", ("runs",))]
    while writer.poll() is None:
        rounds += 1
        for kind, command in readers:
            reader = n2f(*command, check=False)
            if reader.returncode == 0:
                reads[kind] += 1
            elif run_folder("raced") is not None and "no run" not in reader.stderr:
                failures.append(f"{kind}: {reader.stderr.strip()}")
    assert writer.wait() == 0, writer.stderr.read()
    assert not failures, failures
    assert rounds >= 3 and min(reads.values()) >= 2, (rounds, reads)  # the readers really overlapped the run

    raced = json.loads(n2f("report", "raced", "--json").stdout)
    whole = reference_report(args, "quiet")
    assert raced["counts"]["pending"] == 0 and raced["status"] == "finished"
    for key in COMPARED:
        assert raced[key] == whole[key], key
    assert_logs_whole(run_folder("raced"))


FULL_DISK = textwrap.dedent("""
    import json, os, subprocess, sys, time
    home, out = sys.argv[1], sys.argv[2]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", home], check=True)
    env = dict(os.environ, N2F_HOME=home)
    cmd = [sys.executable, "-m", "n2f_tui"]
    run = subprocess.Popen(cmd + ["run", "dedc", "-s", "repeat=10", "--seed", "5", "-m", "sim:latency=0.004",
                                  "-j", "2", "--name", "full", "-q"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    index = None
    while time.monotonic() < deadline and run.poll() is None:
        found = [p for p in os.listdir(os.path.join(home, "runs"))] if os.path.isdir(os.path.join(home, "runs")) else []
        if found and os.path.exists(os.path.join(home, "runs", found[0], "results.index.jsonl")):
            index = os.path.join(home, "runs", found[0], "results.index.jsonl")
            if sum(1 for _ in open(index, "rb")) >= 300:
                break
        time.sleep(0.02)
    ballast = os.path.join(home, "ballast")
    try:  # fill the disk while the run goes on (under load, the open itself can be the write that finds it full)
        with open(ballast, "wb") as f:
            while True:
                f.write(b"\\0" * 65536)
                f.flush()
    except OSError:
        pass
    _, stderr = run.communicate(timeout=120)
    stored_at_stop = sum(1 for line in open(index, "rb") if line.endswith(b"\\n"))
    if os.path.exists(ballast):
        os.remove(ballast)
    resumed = subprocess.run(cmd + ["resume", "full", "--json", "-q"], env=env, capture_output=True, text=True)
    json.dump({"status": run.returncode, "stderr": stderr, "stored_at_stop": stored_at_stop,
               "resume_status": resumed.returncode, "resume_stderr": resumed.stderr,
               "report": json.loads(resumed.stdout) if resumed.returncode == 0 else None}, open(out, "w"))
    subprocess.run(["umount", home])
""")


def namespaces_available() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs tmpfs $d && umount $d"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not namespaces_available(), reason="needs unshare and a tmpfs mount in a user namespace")
def test_a_full_disk_stops_the_run_clearly_and_resume_finishes_it(tmp_path):
    home, out = tmp_path / "small-disk", tmp_path / "outcome.json"
    home.mkdir()
    subprocess.run(["unshare", "-rm", sys.executable, "-c", FULL_DISK, str(home), str(out)], check=True, timeout=300,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    outcome = json.loads(out.read_text())
    assert outcome["status"] == 1, outcome["stderr"]
    lines = outcome["stderr"].strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0] and "n2f resume full" in lines[0], lines
    assert "Traceback" not in outcome["stderr"]
    assert 300 <= outcome["stored_at_stop"] < 3230
    assert outcome["resume_status"] == 0, outcome["resume_stderr"]
    whole = reference_report(["run", "dedc", "-s", "repeat=10", "--seed", "5"], "roomy")
    for key in COMPARED:
        assert outcome["report"][key] == whole[key], key


ANNOTATE = textwrap.dedent("""
    import sys
    from pathlib import Path
    from sessions.study.annotations import AnnotationLog
    folder, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    log = AnnotationLog(folder, annotator=who)
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    for n in range(count):
        log.add(f"dedc-{n % 7}", "note", text=f"{who} {n}")
""")


def test_two_processes_annotating_at_once_keep_every_event():
    n2f("run", "dedc", "-n", "7", "--name", "shared", "-q")
    folder = run_folder("shared")
    writers = [subprocess.Popen([sys.executable, "-c", ANNOTATE, str(folder), who, "500"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True) for who in ("ada", "bob")]
    for writer in writers:
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers:
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        assert writer.wait(timeout=120) == 0

    from sessions.store.runs import RunStore

    events = RunStore(folder).annotations().events()
    assert len(events) == 1000 and len({e["id"] for e in events}) == 1000
    for who in ("ada", "bob"):
        texts = [e["text"] for e in events if e["annotator"] == who]
        assert texts == [f"{who} {n}" for n in range(500)], "each writer's events, all there, in its order"
    lines = (folder / "annotations.jsonl").read_bytes().splitlines()
    assert len(lines) == 1000 and all(json.loads(line) for line in lines)


def started_running(since: str, timeout: float = 60) -> bool:
    """Wait until run ``cut`` has been (re)started after ``since`` (its meta says running, updated later)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        folder = run_folder("cut")
        if folder is not None:
            meta = json.loads((folder / "meta.json").read_text())
            if meta["status"] == "running" and meta["updated"] > since:
                return True
        time.sleep(0.01)
    return False


@pytest.mark.slow
def test_twenty_kill_9s_then_resume_equal_an_uninterrupted_run():
    args = ["run", "dedc", "-s", "repeat=20", "--seed", "11"]  # 6,460 items at ~80 a second: long enough for 20 kills
    rng = random.Random(20261201)
    kills, since = 0, ""
    while kills < 20:
        started = run_folder("cut") is not None
        cmd = n2f_cmd("resume", "cut", "-q") if started else n2f_cmd(*args, "-m", "sim:latency=0.024", "-j", "2",
                                                                      "--name", "cut", "-q")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert started_running(since), "the run did not start"
        time.sleep(rng.uniform(0.2, 2.2))  # a random moment of the run (flushes come every second): mid-batch, mid-append
        if proc.poll() is not None:
            assert proc.returncode == 0, "a run or resume failed on its own"
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        folder = run_folder("cut")
        since = json.loads((folder / "meta.json").read_text())["updated"]
        if (folder / INDEX).exists():
            ResultsLog(folder).summaries()  # what a reader sees after every kill parses
    assert kills == 20, "the run finished before it was killed 20 times: make it longer"
    assert 0 < len(ResultsLog(run_folder("cut")).summaries()) < 6460, "the kills landed while the run was writing"

    resumed = json.loads(n2f("resume", "cut", "--json", "-q").stdout)
    whole = reference_report(args, "whole")
    assert resumed["counts"]["pending"] == 0
    for key in COMPARED:
        assert resumed[key] == whole[key], key
    folder = run_folder("cut")
    assert_logs_whole(folder)
    assert not list(folder.glob("*.tmp-*"))
