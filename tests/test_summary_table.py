"""The compact table of a run's result summaries reads back what was put in, as a dict of dicts would."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings, strategies as st

from sessions.store.summary_table import SummaryTable

STATUSES = st.sampled_from(["correct", "wrong", "unparseable", "error"])
SUMMARY = st.fixed_dictionaries(
    {"status": STATUSES, "scores": st.dictionaries(st.sampled_from(["correct", "f1", "p"]), st.floats(0, 1), max_size=3),
     "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), "attempt": st.integers(0, 3)},
    optional={"at": st.integers(0, 2**40), "len": st.integers(0, 2**20), "usage": st.just({"prompt_tokens": 3}),
              "legacy": st.booleans(), "replies": st.integers(0, 5)})
ACTIONS = st.lists(st.one_of(st.tuples(st.just("set"), st.integers(0, 40), SUMMARY),
                             st.tuples(st.just("del"), st.integers(0, 40), st.none()),
                             st.tuples(st.just("copy"), st.none(), st.none())), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ACTIONS)
def test_the_table_reads_as_a_dict_of_the_summaries_put_in(actions):
    table, model = SummaryTable(), {}
    earlier = []  # each table copied from, with what it must still read
    for action, index, summary in actions:
        if action == "set":
            table[index], model[index] = summary, dict(summary)
        elif action == "del" and index in model:
            del table[index], model[index]
        elif action == "copy":
            copy, table = table, table.copy()
            extra = {"status": "wrong", "scores": {}, "tags": [], "attempt": 0, "at": 7, "len": 1}
            copy[999] = extra  # the copy changes apart, and the table copied changes apart from it
            earlier.append((copy, {**model, 999: extra}))
    for copied, expected in earlier:
        assert dict(copied) == {i: expected[i] for i in sorted(expected)}
    assert dict(table) == {i: model[i] for i in sorted(model)}
    assert list(table) == sorted(model) and len(table) == len(model)
    for key in ("status", "at", "len", "usage", "missing"):
        assert list(table.column(key, "-")) == [model[i].get(key, "-") for i in sorted(model)]
        assert [table.value(i, key, "-") for i in range(42)] == [model[i].get(key, "-") if i in model else "-"
                                                                 for i in range(42)]
    assert 999 not in table and -1 not in table and "1" not in table


def test_equal_tags_and_scores_are_kept_once_and_a_summary_costs_a_fraction_of_its_dict():
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    table = SummaryTable()
    for i in range(20_000):
        table[i] = {"at": 1_000 * i, "len": 400 + i % 7, "status": ["correct", "wrong"][i % 2],
                    "scores": {"correct": float(i % 2)}, "tags": [] if i % 2 else ["incorrect_meaning"],
                    "attempt": 0, "replies": 1}
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert table[3]["scores"] is table[5]["scores"] and table[3]["tags"] is table[7]["tags"]
    assert held / 20_000 < 200  # about 113 measured; json.loads of the same lines holds about 1,100 bytes each
