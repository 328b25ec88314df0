"""Token usage and cost through the real entry point: totals equal what the server reported,
and a run with a token budget stops at it (status ``stopped (budget)``) and resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engines import engine_names
from sessions.store.runs import RunStore
from stub_openai import running_stub
from test_cli import assert_clear_error, n2f

REPLY = "view_1 := f0 (all, attr_1, 2); result := view_1;"


def reported(stub) -> list[dict[str, int]]:
    return [r["usage"] for r in stub.chat_requests()]


def total(usages) -> int:
    return sum(u["prompt_tokens"] + u["completion_tokens"] for u in usages)


def write_config(text: str) -> None:
    Path(os.environ["N2F_HOME"], "config.toml").write_text(text)


@pytest.mark.slow
def test_usage_totals_equal_the_servers_reported_usage_and_cost_follows_the_price():
    write_config('[prices.stub-model]\ninput = 2.5\noutput = 10\n')
    with running_stub(reply=lambda messages: REPLY) as stub:
        summary = json.loads(n2f("run", "dedc", "-n", "7", "-j", "3", "-m", f"openai:stub-model@{stub.base_url}",
                                 "--json", "-q").stdout)
        sent = reported(stub)
    assert len(sent) == 7
    prompt = sum(u["prompt_tokens"] for u in sent)
    completion = sum(u["completion_tokens"] for u in sent)
    report = json.loads(n2f("report", summary["run"], "--json").stdout)
    assert report["usage"]["prompt_tokens"] == prompt and report["usage"]["completion_tokens"] == completion
    assert report["usage"]["total_tokens"] == prompt + completion
    assert report["usage"]["cost"] == round((prompt * 2.5 + completion * 10) / 1e6, 6)
    [row] = json.loads(n2f("runs", "--json").stdout)
    assert row["usage"] == report["usage"]
    assert f"{prompt + completion:,}" in n2f("runs").stdout  # the tokens column
    assert f"{prompt + completion:,} tokens ({prompt:,} in / {completion:,} out)" in n2f("report", summary["run"]).stdout


@pytest.mark.slow
def test_a_token_budget_stops_the_run_and_resume_finishes_it():
    with running_stub(reply=lambda messages: REPLY) as probe:  # what each item costs, in order
        n2f("run", "dedc", "-n", "8", "-j", "1", "-m", f"openai:stub-model@{probe.base_url}", "-q")
        per_item = [total([u]) for u in reported(probe)]
    budget = sum(per_item[:3])  # reached exactly by the third item
    with running_stub(reply=lambda messages: REPLY) as stub:  # another URL: nothing comes from the cache
        model = f"openai:stub-model@{stub.base_url}"
        result = n2f("run", "dedc", "-n", "8", "-j", "1", "-m", model, "--max-tokens", str(budget), "--name", "capped",
                     "--json", "-q", check=False)
        assert result.returncode == 3, result.stderr  # a budget stop's own exit status
        summary = json.loads(result.stdout)
        assert "stopped at the budget" in result.stderr and "n2f resume capped" in result.stderr
        assert summary["status"] == "stopped (budget)"
        assert summary["counts"]["pending"] == 5 and len(stub.chat_requests()) == 3
        assert summary["usage"]["total_tokens"] == budget == total(reported(stub))
        assert RunStore.open("capped").meta["status"] == "stopped (budget)"

        again = json.loads(n2f("resume", "capped", "--max-tokens", str(budget), "--json", "-q", check=False).stdout)
        assert again["status"] == "stopped (budget)" and len(stub.chat_requests()) == 3  # spent already: nothing runs

        resumed = json.loads(n2f("resume", "capped", "--json", "-q").stdout)
        assert resumed["status"] == "finished" and resumed["counts"]["pending"] == 0
        assert len(stub.chat_requests()) == 8
        assert resumed["usage"]["total_tokens"] == total(reported(stub)) == sum(per_item)


def test_a_cost_budget_needs_a_price():
    with running_stub() as stub:
        result = n2f("run", "dedc", "-n", "2", "-m", f"openai:stub-model@{stub.base_url}", "--max-cost", "0.01",
                     check=False)
    assert_clear_error(result, 2, "--max-cost needs a price for openai:stub-model@", "[prices.")
    assert not list(Path(os.environ["N2F_HOME"]).glob("runs/*"))


def test_a_cost_budget_stops_the_run():
    write_config('[prices.stub-model]\ninput = 1000\noutput = 1000\n')  # a token costs a tenth of a cent
    with running_stub(reply=lambda messages: REPLY) as stub:
        result = n2f("run", "dedc", "-n", "6", "-j", "1", "-m", f"openai:stub-model@{stub.base_url}",
                     "--max-cost", "0.000001", "--json", "-q", check=False)
        summary = json.loads(result.stdout)
    assert result.returncode == 3, result.stderr
    assert summary["status"] == "stopped (budget)" and summary["counts"]["pending"] == 5


@pytest.mark.slow
def test_smoke_runs_every_engine_as_one_group():
    result = n2f("smoke", "-m", "sim", "-n", "3", "--json")
    smoke = json.loads(result.stdout)
    rows = smoke["runs"]
    assert [r["engine"] for r in rows] == list(engine_names())
    assert all(r["items"] == 3 and r["errors"] == 0 and r["status"] == "finished" for r in rows)
    assert all(r["run"] == f"{smoke['group']}-{r['engine']}" for r in rows)
    runs = json.loads(n2f("runs", "--json").stdout)
    assert sorted(r["group"] for r in runs) == [smoke["group"]] * len(rows)
    assert [(r["engine"], r["metric"]) for r in rows] == [
        ("dedc", "accuracy"), ("logic", "accuracy"), ("robogrid", "svr"), ("rgp", "mean_C"), ("compost", "macro_f1")]
    table = n2f("smoke", "-m", "sim", "-n", "2", "--engine", "dedc", "logic").stdout
    assert "metric" in table and "dedc" in table and "logic" in table and "accuracy" in table, table
    assert "robogrid" not in table, table


def test_smoke_draws_a_seeded_sample_not_the_first_items():
    smoke = json.loads(n2f("smoke", "-m", "sim", "-n", "4", "--engine", "dedc", "--json").stdout)
    first = [json.loads(line)["id"] for line in n2f("items", "dedc").stdout.splitlines()]
    store = RunStore.open(smoke["runs"][0]["run"])
    ids = [item.id for item in store.items()]
    assert len(ids) == 4 and ids != first[:4] and set(ids) <= set(first)
    assert ids == [i for i in first if i in ids]  # in the dataset's order
    again = json.loads(n2f("smoke", "-m", "sim", "-n", "4", "--engine", "dedc", "--json").stdout)
    assert [item.id for item in RunStore.open(again["runs"][0]["run"]).items()] == ids  # same seed, same sample


@pytest.mark.slow
def test_smoke_settings_go_to_the_engines_that_have_them():
    smoke = json.loads(n2f("smoke", "-m", "sim", "-n", "2", "--engine", "dedc", "logic", "-s", "max_tokens=64",
                           "-s", "names=cross", "--json").stdout)
    dedc, logic = (RunStore.open(r["run"]).meta["settings"] for r in smoke["runs"])
    assert dedc["max_tokens"] == 64 and dedc["names"] == "cross"
    assert logic["max_tokens"] == 64 and "names" not in logic
    result = n2f("smoke", "-m", "sim", "-n", "2", "-s", "colour=red", check=False)
    assert_clear_error(result, 2, "colour")
    assert len(json.loads(n2f("runs", "--json").stdout)) == 2  # the bad one created nothing
