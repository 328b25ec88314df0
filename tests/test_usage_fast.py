"""Token counts in the fast loop: ``Usage``, ``Budget``, the stored summaries' token fields, and a resumed
run under a larger budget, counted by hand against a backend that reports a fixed usage per call.

The slow CLI tests (test_usage_budget.py) check the same through a real HTTP server; these catch a
wrong count (a budget off by one token, totals without the prompt tokens, summaries without the
completion tokens, a resume that forgets what was spent) in a few seconds.
"""

from __future__ import annotations

from sessions import api
from sessions.backends.base import Backend, CallRequest, Completion
from sessions.config import Price
from sessions.store.summary_line import summary_of
from sessions.run.runner import Runner
from sessions.store.runs import RunStore
from sessions.run.usage import Budget, Usage, run_usage

PROMPT, COMPLETION = 10, 5  # what the metered model reports for every call
PER_ITEM = PROMPT + COMPLETION  # dedc: one step per item
REPLY = "view_1 := f0 (all, attr_1, 2); result := view_1;"


class Metered(Backend):
    """A model whose every call costs PROMPT + COMPLETION tokens."""

    def __init__(self, spec):
        self.spec = spec
        self.calls = 0

    async def complete(self, request: CallRequest) -> Completion:
        self.calls += 1
        return Completion(REPLY, usage={"prompt_tokens": PROMPT, "completion_tokens": COMPLETION})


def test_usage_adds_both_kinds_of_token_and_skips_steps_without_usage():
    usage = Usage()
    usage.add_steps([{"usage": {"prompt_tokens": 7, "completion_tokens": 3}}, {"tool": "sandbox"},
                     {"usage": {"prompt_tokens": 11, "completion_tokens": None}}])
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (18, 3, 21)
    usage.add({"prompt_tokens": 7, "completion_tokens": 3}, sign=-1)  # a record being replaced
    assert (usage.prompt_tokens, usage.completion_tokens) == (11, 0)


def test_run_totals_count_full_records_and_summaries_alike():
    record = {"steps": [{"usage": {"prompt_tokens": 100, "completion_tokens": 20}},
                        {"usage": {"prompt_tokens": 50, "completion_tokens": 4}}], "status": "correct"}
    summary = summary_of(record)
    assert summary["usage"] == {"prompt_tokens": 150, "completion_tokens": 24}
    assert run_usage([record, summary]).to_json(Price(input=2.0, output=10.0)) == {
        "prompt_tokens": 300, "completion_tokens": 48, "total_tokens": 348, "cached_tokens": 0,
        "cost": round((300 * 2.0 + 48 * 10.0) / 1e6, 6)}
    assert "usage" not in summary_of({"steps": [{"tool": "sparql"}]})  # nothing used: nothing stored


def test_a_token_budget_is_reached_at_its_last_token_not_one_after():
    budget = Budget(max_tokens=30)
    assert not budget.reached(Usage(20, 9))
    assert budget.reached(Usage(20, 10))
    assert budget.reached(Usage(30, 0)) and budget.reached(Usage(0, 30))  # either kind of token counts


def test_a_cost_budget_needs_the_price_and_is_reached_at_its_amount():
    price = Price(input=1000.0, output=3000.0)  # $ per million: a prompt token costs $0.001, a completion $0.003
    budget = Budget(max_cost=0.013, price=price)
    assert not budget.reached(Usage(9, 1)) and budget.reached(Usage(10, 1))
    assert not Budget(max_cost=0.0, price=None).reached(Usage(10**9, 10**9))  # no price: no cost to compare
    assert not Budget() and Budget(max_tokens=1) and Budget(max_cost=1.0)


async def test_stored_summaries_carry_both_token_fields_of_every_item():
    prepared = await api.prepare_run("dedc", [], model="sim", limit=4, concurrency=2, name="metered")
    runner = Runner(prepared.store, prepared.engine, prepared.runner.settings, Metered(prepared.backend.spec),
                    concurrency=2)
    progress = await runner.run()
    prepared.store.close()
    assert (progress.usage.prompt_tokens, progress.usage.completion_tokens) == (4 * PROMPT, 4 * COMPLETION)
    store = RunStore.open("metered")  # read back from disk, as `n2f runs` and the report do
    assert [s["usage"] for s in store.summaries().values()] == [{"prompt_tokens": PROMPT,
                                                                 "completion_tokens": COMPLETION}] * 4
    assert store.summary().usage == Usage(4 * PROMPT, 4 * COMPLETION)


async def test_a_resume_under_a_larger_budget_counts_what_was_spent_before():
    prepared = await api.prepare_run("dedc", [], model="sim", limit=8, concurrency=1, name="capped")
    first = Metered(prepared.backend.spec)
    runner = Runner(prepared.store, prepared.engine, prepared.runner.settings, first, concurrency=1,
                    budget=Budget(max_tokens=3 * PER_ITEM))
    await runner.run()
    prepared.store.close()
    assert first.calls == 3 and RunStore.open("capped").meta["status"] == "stopped (budget)"

    resumed = await api.prepare_resume("capped", max_tokens=5 * PER_ITEM)  # two more items' worth
    second = Metered(resumed.backend.spec)
    resumed.runner.backend = second
    progress = await resumed.runner.run()
    resumed.store.close()
    assert second.calls == 2 and progress.budget_reached  # not five: the first 45 tokens count
    store = RunStore.open("capped")
    assert store.meta["status"] == "stopped (budget)" and len(store.pending_indices()) == 3
    assert run_usage(store.summaries().values()).total_tokens == 5 * PER_ITEM
