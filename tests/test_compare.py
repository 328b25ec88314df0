"""Two runs over the same items, side by side."""

from __future__ import annotations

import pytest

from engines.core import parse_settings
from fake_engine import FakeEngine, FakeSettings, register
from sessions.api import prepare_run
from sessions.run.attempts import fork_with_templates
from sessions.reports.compare import ItemComparison, compare_runs, comparison_summary
from sessions.errors import InputError
from sessions.store.runs import RunStore


async def sim_run(error_rate, n):
    prepared = await prepare_run("dedc", model=f"sim:error_rate={error_rate}", limit=n)
    await prepared.runner.run()
    prepared.store.close()
    return RunStore.open(prepared.store.id)


async def test_two_sim_runs_with_different_error_rates():
    good, poor = await sim_run(0.0, 8), await sim_run(0.8, 6)
    rows = compare_runs(good, poor)
    assert [r.id for r in rows] == [i.id for i in poor.items()]  # item 7 and 8 only in the first run
    assert [(r.index_a, r.index_b) for r in rows] == [(i, i) for i in range(6)]
    assert all(r.status_a == "correct" and r.scores_a == {"correct": 1.0} and r.tags_a == [] for r in rows)
    results = poor.results()
    for r in rows:
        assert r.status_b == results[r.index_b]["status"]
        assert r.tags_b == [t["code"] for t in results[r.index_b]["tags"]]
        assert r.different == (r.status_b != "correct")
    wrong = sum(r.status_b != "correct" for r in rows)
    assert wrong > 0
    assert comparison_summary(rows) == {"items": 6, "both_correct": 6 - wrong, "only_a": wrong, "only_b": 0,
                                        "neither": 0, "unjudged": 0, "different": wrong}
    flipped = comparison_summary(compare_runs(poor, good))
    assert (flipped["only_a"], flipped["only_b"]) == (0, wrong)


async def test_pending_items_are_unjudged():
    run = await sim_run(0.5, 3)
    rows = compare_runs(run, fork_with_templates(run, {}))
    assert [r.status_b for r in rows] == ["pending"] * 3 and all(r.scores_b == {} for r in rows)
    summary = comparison_summary(rows)
    assert summary["unjudged"] == 3 and summary["different"] == 3 and summary["both_correct"] == 0


def test_main_score_decides_difference_when_statuses_agree():
    row = ItemComparison("x", 0, 0, "wrong", "wrong", {"precision": 1.0, "f1": 0.5}, {"precision": 1.0, "f1": 0.2},
                         [], [], main_score="f1")
    assert row.different
    same = ItemComparison("x", 0, 0, "wrong", "wrong", {"f1": 0.5}, {"f1": 0.5}, ["a"], ["b"], main_score="f1")
    assert not same.different


def fake_run(ids):
    engine = FakeEngine()
    items = [i for i in engine.items(parse_settings(FakeSettings, ["count=4"]), 0) if i.id in ids]
    store = RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=items,
                            templates={}, concurrency=1)
    store.acquire()
    return store


async def test_refuses_other_engines_and_runs_without_common_items(monkeypatch):
    register(monkeypatch)
    dedc = await sim_run(0.5, 2)
    with pytest.raises(InputError, match="cannot compare"):
        compare_runs(dedc, fake_run({"fake-0"}))
    a, b = fake_run({"fake-0", "fake-1"}), fake_run({"fake-2"})
    with pytest.raises(InputError, match=f"runs {a.id} and {b.id} share no items"):
        compare_runs(a, b)


async def test_unmatched_items_are_counted_and_differences_listed():
    from sessions.reports.describe import describe_run, run_differences, template_hash
    from sessions.reports.compare import unmatched

    prepared = await prepare_run("dedc", ["shots=2"], model="sim", limit=5)
    await prepared.runner.run()
    prepared.store.close()
    fewer, more = RunStore.open(prepared.store.id), await sim_run(0.3, 8)
    assert unmatched(more, fewer) == {"only_in_a": 3, "only_in_b": 0}
    assert len(compare_runs(more, fewer)) == 5
    assert describe_run(fewer.meta).text == "shots=2" and describe_run(more.meta).text == "defaults"
    assert "shots 3 → 2" in run_differences(more.meta, fewer.meta)
    assert not any(line.startswith("template") for line in run_differences(more.meta, fewer.meta))  # shots is no edit
    short = "Short.\n{question}"
    fork = fork_with_templates(more, {"answer": short})
    was = template_hash(more.meta["templates"]["answer"])
    assert run_differences(more.meta, fork.meta) == [f"template answer #{was} → #{template_hash(short)}"]
    assert describe_run(fork.meta).templates == {"answer": template_hash(short)}
