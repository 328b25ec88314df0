"""The list's id column: which fields every id shares, and how wide the shortened ids are."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, strategies as st

from n2f_tui.widgets import idcolumn
from n2f_tui.widgets.idcolumn import IdColumn

FIELD = st.sampled_from(["robogrid", "instruct", "block", "alien", "d10", "e2", "p0.5", "0008", "0009", "x", ""])


def test_a_robogrid_run_keeps_the_fields_that_tell_items_apart():
    ids = ["robogrid-instruct-block-alien-d10-e2-p0.5-0008", "robogrid-instruct-block-alien-d12-e2-p0.5-0009"]
    column = IdColumn.of(ids, ["fiction"])
    assert column.same == frozenset({0, 1, 2, 3, 5, 6})
    assert column.shortened(ids[0]) == "…d10-0008"
    assert (column.full, column.short, column.chip) == (len(ids[0]), len("…d10-0008"), len("fiction") + 3)


@given(st.lists(st.lists(FIELD, min_size=1, max_size=5).map("-".join), max_size=30), st.sampled_from([1, 2, 7, 4096]))
def test_the_widths_are_those_of_the_ids_as_shown(ids, block):
    """``of`` works the widths out column by column, a block of ids at a time; they are the lengths of the
    ids ``shortened`` shows."""
    with patch.object(idcolumn, "BLOCK", block):
        column = IdColumn.of(ids, [])
    assert column.full == max(map(len, ids), default=4)
    assert column.short == max((len(column.shortened(i)) for i in ids), default=4)
    split = [i.split("-") for i in ids]
    if len(ids) > 1 and len(set(map(len, split))) == 1:
        shared = {p for p in range(len(split[0])) if len({parts[p] for parts in split}) == 1}
        assert column.same == (frozenset() if len(shared) == len(split[0]) else frozenset(shared))
    else:
        assert column.same == frozenset()
