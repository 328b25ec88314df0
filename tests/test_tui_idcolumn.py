"""The list's id column: which fields every id shares, and how wide the shortened ids are."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, strategies as st

from n2f_tui.widgets import idcolumn
from n2f_tui.widgets.idcolumn import IdColumn
from sessions.store.item_ids import ItemIds

FIELD = st.sampled_from(["robogrid", "instruct", "block", "alien", "d10", "e2", "p0.5", "0008", "0009", "x", ""])


def test_a_robogrid_run_keeps_the_fields_that_tell_items_apart():
    ids = ["robogrid-instruct-block-alien-d10-e2-p0.5-0008", "robogrid-instruct-block-alien-d12-e2-p0.5-0009"]
    column = IdColumn(ids, ["fiction"])
    assert column.same == frozenset({0, 1, 2, 3, 5, 6})
    assert column.shortened(ids[0]) == "…d10-0008"
    assert (column.full, column.short, column.chip) == (len(ids[0]), len("…d10-0008"), len("fiction") + 3)


@given(st.lists(st.lists(FIELD, min_size=1, max_size=5).map("-".join), max_size=30), st.sampled_from([1, 2, 7, 4096]))
def test_the_widths_are_those_of_the_ids_as_shown(ids, block):
    """``of`` works the widths out column by column, a block of ids at a time; they are the lengths of the
    ids ``shortened`` shows."""
    with patch.object(idcolumn, "BLOCK", block):
        column = IdColumn(ids, [])
        joined = IdColumn(ItemIds.of([ids]), [])  # as the inspector holds a run's ids
        assert (joined.full, joined.same, joined.fields, joined.short) == (
            column.full, column.same, column.fields, column.short)
    assert column.full == max(map(len, ids), default=4)
    assert column.short == max((len(column.shortened(i)) for i in ids), default=4)
    split = [i.split("-") for i in ids]
    if len(ids) > 1 and len(set(map(len, split))) == 1:
        shared = {p for p in range(len(split[0])) if len({parts[p] for parts in split}) == 1}
        assert column.same == (frozenset() if len(shared) == len(split[0]) else frozenset(shared))
    else:
        assert column.same == frozenset()


def test_ids_that_fit_are_shown_without_a_look_at_every_id():
    """Which fields every id shares is worked out once, and only when an id does not fit its row: a dedc run's
    list at 80 columns never looks at every id (0.08 s at 100,000 ids); a robogrid run's at 50 does, once."""
    dedc = ItemIds.of([[f"dedc-{s:03d}-{k}" for s in range(323) for k in range(30)]])
    robogrid = ItemIds.of([[f"robogrid-instruct-block-alien-d{d}-e2-p0.5-{k:04d}" for d in (8, 10) for k in range(99)]])
    looks = []
    real = idcolumn.shared_fields

    def counted(ids, full):
        looks.append(len(ids))
        return real(ids, full)

    with patch.object(idcolumn, "shared_fields", counted):
        column = IdColumn(dedc, ["fiction"])
        assert [column.text(dedc[i], column.width(80)) for i in (0, 9689)] == ["dedc-000-0 ", "dedc-322-29"]
        assert looks == []
        column = IdColumn(robogrid, ["fiction"])
        assert column.text(robogrid[0], column.width(80)).rstrip() == robogrid[0] and looks == []  # it fits at 80
        assert column.text(robogrid[0], column.width(50)).strip() == "…d8-0000" and looks == [len(robogrid)]
        assert column.text(robogrid[1], column.width(50)).strip() == "…d8-0001" and looks == [len(robogrid)]
