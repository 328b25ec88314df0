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
    assert held / 20_000 < 100  # about 64 measured (a tuple of values an item was 113); json.loads of the same lines holds about 1,100 bytes each


LINE = st.fixed_dictionaries(
    {"i": st.integers(0, 30), "at": st.integers(0, 100), "len": st.integers(0, 50), "status": STATUSES,
     "scores": st.dictionaries(st.sampled_from(["correct", "f1", "p", "r", "x"]), st.floats(0, 1), max_size=5),
     "tags": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), "attempt": st.integers(0, 3)})
ODD = st.one_of(LINE, st.builds(lambda line, key, value: {**line, key: value}, LINE,
                                st.sampled_from(["status", "tags", "scores", "at", "i"]),
                                st.one_of(st.none(), st.booleans(), st.just([["x"]]), st.just({"n": [1]}), st.just(-1))))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.lists(LINE, max_size=12), st.lists(st.one_of(LINE, ODD), max_size=12)), max_size=4),
       st.one_of(st.integers(0, 160), st.just(10**6)))
def test_a_block_of_index_lines_is_taken_as_line_by_line(blocks, size):
    """``take_lines`` (a block at once) leaves the table as taking each line does, or takes nothing and
    says so (a line of another shape, past ``size`` bytes, not a whole number, with a value that cannot be
    kept once); the items it takes are the lines' numbers, in order. Equal statuses, tag lists and small
    score tables are one object whichever way they came in."""
    from array import array

    block_wise, line_wise = SummaryTable(), SummaryTable()
    for block in blocks:
        taken = array("q")
        if block_wise.take_lines([dict(line) for line in block], size, taken):
            assert list(taken) == [line["i"] for line in block]
        else:
            assert not taken
            for line in block:
                line = dict(line)
                index = line.pop("i")
                if isinstance(index, int) and index >= 0 and not isinstance(index, bool):
                    block_wise[index] = line
        for line in block:
            line = dict(line)
            index = line.pop("i")
            if isinstance(index, int) and index >= 0 and not isinstance(index, bool):
                line_wise[index] = line
    assert dict(block_wise) == dict(line_wise) and len(block_wise) == len(line_wise)
    assert [block_wise.value(i, "at", "-") for i in range(32)] == [line_wise.value(i, "at", "-") for i in range(32)]
    kept = [s for s in (block_wise.get(i) for i in range(32)) if s]
    for a in kept:
        for b in kept:
            if type(a["tags"]) is list and a["tags"] == b["tags"] and all(type(t) is str for t in a["tags"]):
                assert a["tags"] is b["tags"]
            if type(a["status"]) is str and a["status"] == b["status"]:
                assert a["status"] is b["status"]


def test_a_plain_block_of_lines_in_order_or_not_is_taken_at_once():
    from array import array

    lines = [{"i": i, "at": 10 * i, "len": 9, "status": "correct", "scores": {"correct": 1.0}, "tags": [], "attempt": 0}
             for i in (3, 4, 5)]
    table, taken = SummaryTable(), array("q")
    assert table.take_lines(lines, 60, taken) and list(taken) == [3, 4, 5] and len(table) == 3
    again = [dict(line, status="wrong") for line in reversed(lines)] + [dict(lines[0], i=1)]
    assert table.take_lines(again, 60, taken) and list(taken) == [3, 4, 5, 5, 4, 3, 1] and len(table) == 4
    assert table[4] == {"at": 40, "len": 9, "status": "wrong", "scores": {"correct": 1.0}, "tags": [], "attempt": 0}
    assert not table.take_lines(lines, 59, array("q"))  # the last line ends past the records: line by line
    # one shape: a column is picked in C, as the summaries read it
    assert list(table.column("status")) == ["correct", "wrong", "wrong", "wrong"] == [table[i]["status"] for i in table]
    assert list(table.column("missing", 0)) == [0] * 4 and list(table.column("at")) == [30, 30, 40, 50]
    assert not table.take_lines(lines, 60, array("q"), items=5)  # item 5 is not one of a 5-item run's
    assert table.take_lines(lines, 60, array("q"), items=6)
