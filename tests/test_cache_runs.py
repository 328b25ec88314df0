"""The response cache through the real ``n2f``: a cached reply costs nothing, counts apart, never
against a budget; it can be bypassed, refreshed, inspected, cleared and expired.

What the server was asked is read from the stub's own request log, not from our counters.
"""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import pytest

from stub_openai import FINGERPRINT, running_stub
from cli_support import n2f as cli_n2f

ANSWER = "view_1 := f0 (all, attr_1, 2); result := view_1;"


n2f = partial(cli_n2f, check=True)


def run_json(url: str, *extra: str) -> dict:
    return json.loads(n2f("run", "dedc", "-m", f"openai:stub-model@{url}", "-n", "4", "--json", "-q", *extra).stdout)


@pytest.mark.slow
def test_the_same_run_twice_spends_nothing_the_second_time_and_says_so():
    with running_stub(reply=lambda messages: ANSWER) as stub:
        first = run_json(stub.base_url)
        asked = len(stub.chat_requests())
        second = run_json(stub.base_url, "--name", "again")
        assert len(stub.chat_requests()) == asked == 4  # the second run sent no completion
        report = n2f("report", "again").stdout
        refreshed = run_json(stub.base_url, "--refresh-cache")
        assert len(stub.chat_requests()) == 8
        bypassed = run_json(stub.base_url, "--no-cache")
        assert len(stub.chat_requests()) == 12
        after_bypass = run_json(stub.base_url)
        assert len(stub.chat_requests()) == 12  # --no-cache stored nothing new, the refreshed replies serve
    spent = sum(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in stub.chat_requests()[:4])
    assert first["usage"]["total_tokens"] == spent and first["cache"] == {"replies": 4, "cached": 0}
    assert second["usage"]["total_tokens"] == 0 and second["usage"]["cost"] is None
    assert second["usage"]["cached_tokens"] == spent and second["cache"] == {"replies": 4, "cached": 4}
    assert "4 of 4 replies from the cache" in report and "0 tokens (0 in / 0 out) spent" in report
    assert refreshed["cache"]["cached"] == 0 and refreshed["usage"]["total_tokens"] == spent
    assert bypassed["cache"]["cached"] == 0 and after_bypass["cache"]["cached"] == 4
    assert first["served"] == [{"model": "stub-model", "system_fingerprint": FINGERPRINT, "replies": 4}]
    assert second["served"][0]["system_fingerprint"] == FINGERPRINT  # recorded with the cached reply
    assert f"stub-model ({FINGERPRINT})" in report


def test_a_cost_budget_is_not_touched_by_cached_replies(n2f_home):
    (n2f_home / "config.toml").write_text('[prices.stub-model]\ninput = 1000\noutput = 1000\n')
    with running_stub(reply=lambda messages: ANSWER) as stub:
        run_json(stub.base_url)
        capped = n2f("run", "dedc", "-m", f"openai:stub-model@{stub.base_url}", "-n", "4", "-j", "1",
                     "--max-cost", "0.000001", "--json", "-q")
        assert len(stub.chat_requests()) == 4
        fresh = n2f("run", "dedc", "-m", f"openai:stub-model@{stub.base_url}", "-n", "4", "-j", "1",
                    "--max-cost", "0.000001", "--json", "-q", "--refresh-cache", check=False)
    summary = json.loads(capped.stdout)
    assert capped.returncode == 0 and summary["status"] == "finished" and summary["counts"]["pending"] == 0
    assert summary["usage"]["cost"] == 0.0
    assert fresh.returncode == 3 and "stopped at the budget" in fresh.stderr  # its own exit status
    assert json.loads(fresh.stdout)["status"] == "stopped (budget)"


def test_cache_info_and_clear_by_model_and_age(n2f_home):
    with running_stub(reply=lambda messages: ANSWER) as stub:
        run_json(stub.base_url)
    n2f("run", "dedc", "-m", "sim", "-n", "3", "-q")  # the simulator is never cached
    info = json.loads(n2f("cache", "info", "--json").stdout)
    assert info["entries"] == 4 and info["models"] == {"stub-model": 4}
    assert Path(info["path"]) == n2f_home / "cache" / "responses.sqlite3"
    assert "replies  4" in n2f("cache", "info").stdout
    assert "0 replies deleted" in n2f("cache", "clear", "--model", "gpt-4o").stderr
    assert "0 replies deleted" in n2f("cache", "clear", "--older-than", "7d").stderr  # all made a moment ago
    assert "4 replies deleted" in n2f("cache", "clear", "--model", "stub-model").stderr
    assert json.loads(n2f("cache", "info", "--json").stdout)["entries"] == 0
    bad = n2f("cache", "clear", "--older-than", "a week", check=False)
    assert bad.returncode == 2 and "expected a number and a unit" in bad.stderr


def test_an_expiry_in_the_config_asks_the_model_again(n2f_home):
    with running_stub(reply=lambda messages: ANSWER) as stub:
        run_json(stub.base_url)
        (n2f_home / "config.toml").write_text("[cache]\nexpire_days = 0.00001\n")  # 0.864 s
        time.sleep(1.0)
        again = run_json(stub.base_url)
        assert len(stub.chat_requests()) == 8
    assert again["cache"]["cached"] == 0
