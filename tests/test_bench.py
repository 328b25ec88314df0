"""``n2f bench``: figures through the real entry point, a clean store afterwards, clear errors.

No timing thresholds: the machine running the tests may be busy; the figures themselves
are reported by hand.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from sessions.run import bench, latency_stub
from cli_support import n2f


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
        assert f.floor_per_s > 0 and f.ratio == pytest.approx(f.calls_per_s / f.floor_per_s, abs=0.01)
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
    assert bench.plan_for(0.2) == ((1, 10), (16, 160), (64, 640), (256, 2560))
    assert bench.plan_for(2.0) == ((1, 3), (16, 48), (64, 192), (256, 768))


def test_the_json_report_has_the_floor_and_ratio_of_each_point(n2f_home):
    report = bench.BenchReport(concurrency=bench.bench_concurrency(0.02, plan=((2, 4), (4, 8))))
    points = report.to_json()["concurrency"]
    assert [p["concurrency"] for p in points] == [2, 4]
    assert all(p["floor_per_s"] > 0 and p["ratio"] > 0 for p in points)


def test_the_printed_table_shows_the_floor_and_the_ratio():
    from n2f_tui.commands.upkeep import _concurrency_table

    point = bench.ConcurrencyFigures(transport="aiohttp", latency_s=0.2, concurrency=256, items=2560, calls=2560,
                                     seconds=10.0, calls_per_s=256.0, ideal_per_s=1280.0, efficiency=0.2,
                                     floor_per_s=280.0, ratio=0.914)
    table = _concurrency_table(bench.BenchReport(concurrency=[point]))
    headers = [column.header for column in table.columns]
    assert headers[-2:] == ["sdk/s", "ratio"]
    assert [list(column.cells)[0] for column in table.columns][-2:] == ["280.0", "0.91x"]


def test_the_bench_stub_streams_when_asked(n2f_home):
    import asyncio

    with latency_stub.stub_process(0.01) as url, bench.scratch_home():
        timing = asyncio.run(bench.timed_run("dedc", (), f"openai:{latency_stub.STUB_MODEL}@{url}", 8, 4,
                                             bench.stub_config("aiohttp"), stream=True))
    assert timing.items == timing.calls == 8 and timing.cpu_seconds > 0


def test_the_stub_holds_a_request_for_the_whole_latency_never_less():
    async def held(seconds: float) -> float:
        started = time.monotonic()
        await latency_stub.hold(seconds)
        return time.monotonic() - started

    for seconds in (0.0, 0.01, 2.5 * latency_stub.HOLD_STEP_S):
        assert asyncio.run(held(seconds)) >= seconds
