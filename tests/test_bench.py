"""``n2f bench``: figures through the real entry point, a clean store afterwards, clear errors.

No timing thresholds: the machine running the tests may be busy; the figures themselves
are reported by hand.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from sessions.run import bench


def n2f(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "n2f_tui", *args], capture_output=True, text=True, timeout=120)


def no_runs(home) -> bool:
    runs = home / "runs"
    return not runs.exists() or not any(runs.iterdir())


def test_bench_json_for_one_engine_leaves_no_run(n2f_home):
    result = n2f("bench", "--json", "--engine", "dedc", "-n", "50", "--no-concurrency")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    [dedc] = report["engines"]
    assert dedc["engine"] == "dedc" and dedc["items"] == 50
    assert dedc["items_per_s"] > 0
    assert dedc["peak_heap_mb"] > 0 and dedc["max_rss_mb"] > 0
    assert "tracemalloc" in report["method"] and "ru_maxrss" in report["method"]
    assert report["concurrency"] == []
    assert no_runs(n2f_home)


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_concurrency_check_at_small_sizes(n2f_home, transport):
    figures = bench.bench_concurrency(0.05, transport, plan=((1, 4), (8, 16)))
    assert [(f.concurrency, f.items, f.calls) for f in figures] == [(1, 4, 4), (8, 16, 16)]
    for f in figures:
        assert f.transport == transport and f.latency_s == 0.05
        assert 0 < f.efficiency <= 1.2
        assert f.ideal_per_s == f.concurrency / 0.05
    assert os.environ["N2F_HOME"] == str(n2f_home)
    assert no_runs(n2f_home)


def test_concurrency_items_beyond_one_dedc_round(n2f_home):
    [point] = bench.bench_concurrency(0.01, plan=((16, 400),))
    assert point.items == 400 and point.calls == 400


def test_scratch_home_restores_the_environment(n2f_home):
    with bench.scratch_home() as folder:
        assert os.environ["N2F_HOME"] == folder
    assert os.environ["N2F_HOME"] == str(n2f_home)
    assert not os.path.exists(folder)


def test_unknown_engine_is_one_clear_line():
    result = n2f("bench", "--engine", "nosuch", "--no-concurrency")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("n2f: error:") and "nosuch" in lines[0]


def test_limit_below_one_is_bad_input():
    result = n2f("bench", "-n", "0", "--no-concurrency")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["n2f: error: -n must be at least 1"]


def test_the_plan_keeps_a_fixed_number_of_latency_rounds():
    assert bench.plan_for(0.2) == ((1, 10), (8, 80), (64, 640))
    assert bench.plan_for(2.0) == ((1, 3), (8, 24), (64, 192))


def test_the_bench_stub_streams_when_asked(n2f_home):
    import asyncio

    with bench.stub_process(0.01) as url, bench.scratch_home():
        timing = asyncio.run(bench.timed_run("dedc", (), f"openai:{bench.STUB_MODEL}@{url}", 8, 4,
                                             bench.stub_config("aiohttp"), stream=True))
    assert timing.items == timing.calls == 8 and timing.cpu_seconds > 0


def test_the_stub_holds_a_request_for_the_whole_latency_never_less():
    async def held(seconds: float) -> float:
        started = time.monotonic()
        await bench.hold(seconds)
        return time.monotonic() - started

    for seconds in (0.0, 0.01, 2.5 * bench.HOLD_STEP_S):
        assert asyncio.run(held(seconds)) >= seconds
