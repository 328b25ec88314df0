"""Every item's result summary in a run, kept as a tuple of values per item under a shared tuple of keys.

A reader that holds a whole run's summaries (a report, the inspector, a resume) held one
parsed dict per item: about 510 bytes each, 51 MB at 100,000 items. Summaries have a few
shapes (the same keys in the same order), so ``SummaryTable`` keeps each item's values
in one tuple that starts with its ``Shape``, where its record lies in an array (16 bytes
an item), and equal tag lists and small score tables once: 100,000 dedc summaries take
about 13 MB. Looking an item up gives a new dict, the
summary as it was parsed; the values in it (its scores, its tags) are shared between
items and read-only, as the summaries' readers already treat them. ``value`` reads one
key without making the dict, for the loops over every item (a status count, the pending).
"""

from __future__ import annotations

from array import array
from itertools import chain, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, MutableMapping, cast

from sessions.run.usage import Usage

if TYPE_CHECKING:
    from sessions.store.results_log import Summary

SHARED_SCORES = 4  # score tables of up to this many keys are shared between equal summaries
KEPT = ("status", "tags", "scores")  # the values kept once however many items have them
PLACE = ("at", "len")  # where the record lies: two numbers an item, kept in an array


class Shape:
    """The keys of summaries that have the same keys in the same order, and where each one lies in a row.

    ``placed``: the summaries have an ``at`` and a ``len`` (whole numbers), kept in the table's
    array of places instead of the row; ``stored`` are the other keys, the row's values.
    """

    __slots__ = ("stored", "positions", "kept", "placed", "dropped")

    def __init__(self, keys: tuple[str, ...], placed: bool):
        self.placed = placed
        self.stored = tuple(key for key in keys if not (placed and key in PLACE))
        self.positions = {key: position for position, key in enumerate(self.stored, start=1)}
        self.kept = [(position, key) for key, position in self.positions.items() if key in KEPT]
        # where at and len lie among the summary's values, last first (taken out of the row)
        self.dropped = sorted((keys.index(key) for key in PLACE), reverse=True) if placed else []


class SummaryTable(MutableMapping[int, "Summary"]):
    """Item index -> summary; iterates in item order."""

    def __init__(self) -> None:
        self._rows: list[tuple[Any, ...] | None] = []  # item index -> (shape, value, ...) or None
        self._places = array("q")  # item index * 2 -> at, then len (rows of a placed shape)
        self._size = 0
        self._lent = False  # the rows and places may be another table's too (``copy``): copied before a change
        self._shapes: dict[tuple[Any, ...], Shape] = {}
        # statuses, equal tag lists (by their codes) and small score tables (by their items), each kept once
        self._shared: tuple[dict[str, str], dict[tuple[Any, ...], Any], dict[tuple[Any, ...], Any]] = ({}, {}, {})

    def __getitem__(self, index: int) -> Summary:
        row = self._row(index)
        if row is None:
            raise KeyError(index)
        shape = row[0]
        summary = dict(zip(shape.stored, row[1:]))
        if shape.placed:
            summary["at"], summary["len"] = self._places[2 * index], self._places[2 * index + 1]
        return cast("Summary", summary)

    def value(self, index: int, key: str, default: Any = None) -> Any:
        """The item's value for ``key``; ``default`` when it has no summary or no such key."""
        row = self._row(index)
        return default if row is None else self._value(index, row, key, default)

    def column(self, key: str, default: Any = None) -> Iterator[Any]:
        """Every item's value for ``key`` in item order (``default`` where it has none), making no dict.
        When every summary has one shape (a run's usually do), the values are picked in C."""
        if len(self._shapes) == 1 and key not in PLACE:
            (shape,) = self._shapes.values()
            position = shape.positions.get(key)
            if position is None:
                return repeat(default, self._size)
            return map(itemgetter(position), filter(None, self._rows))
        return (self._value(index, row, key, default) for index, row in enumerate(self._rows) if row is not None)

    def usage(self) -> Usage:
        """The tokens over every summary (``run_usage`` of the summaries, making no dict)."""
        usage = Usage()
        for tokens in filter(None, self.column("usage")):  # most summaries have none: no call for them
            usage.add(tokens)
        return usage

    def __setitem__(self, index: int, summary: Mapping[str, Any]) -> None:
        if self._lent:
            self._own()
        keys = tuple(summary)
        at, length = summary.get("at"), summary.get("len")
        placed = type(at) is int and type(length) is int
        shape = self._shapes.get((placed, keys))
        if shape is None:
            shape = self._shapes[(placed, keys)] = Shape(keys, placed)
        row: list[Any] = [shape, *summary.values()]
        for position in shape.dropped:
            del row[position + 1]
        for position, key in shape.kept:
            row[position] = self._kept(key, row[position])
        rows = self._rows
        if index >= len(rows):
            rows.extend([None] * (index + 1 - len(rows)))
            self._places.extend([-1] * (2 * len(rows) - len(self._places)))
        if rows[index] is None:
            self._size += 1
        rows[index] = tuple(row)
        if placed:
            self._places[2 * index] = cast(int, at)
            self._places[2 * index + 1] = cast(int, length)

    def __delitem__(self, index: int) -> None:
        if self._row(index) is None:
            raise KeyError(index)
        if self._lent:
            self._own()
        self._rows[index] = None
        self._size -= 1

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self._row(index) is not None

    def __iter__(self) -> Iterator[int]:
        return (index for index, row in enumerate(self._rows) if row is not None)

    def __len__(self) -> int:
        return self._size

    def copy(self) -> "SummaryTable":
        """A table of the same summaries that changes apart from this one: the rows themselves are shared, and
        their list and places are lent to both until either changes (a reader's copy of 100,000 summaries was
        2.4 MB more)."""
        table = SummaryTable()
        table._rows, table._places, table._size = self._rows, self._places, self._size
        table._lent = self._lent = True
        table._shapes, table._shared = self._shapes, self._shared
        return table

    def _own(self) -> None:
        """Rows and places of this table's own, before its first change since a ``copy`` lent them."""
        self._rows, self._places, self._lent = list(self._rows), array("q", self._places), False

    def _row(self, index: int) -> tuple[Any, ...] | None:
        return self._rows[index] if 0 <= index < len(self._rows) else None

    def _value(self, index: int, row: tuple[Any, ...], key: str, default: Any) -> Any:
        shape = row[0]
        position = shape.positions.get(key)
        if position is not None:
            return row[position]
        if shape.placed and key in PLACE:
            return self._places[2 * index + PLACE.index(key)]
        return default

    def _kept(self, key: str, value: Any) -> Any:
        statuses, tag_lists, score_tables = self._shared
        if key == "status" and type(value) is str:
            return statuses.setdefault(value, value)
        if key == "tags" and type(value) is list:
            try:
                return tag_lists.setdefault(tuple(value), value)
            except TypeError:  # a code that is not hashable is kept as it is
                return value
        if key == "scores" and type(value) is dict and len(value) <= SHARED_SCORES:
            try:
                return score_tables.setdefault(tuple(value.items()), value)
            except TypeError:  # a score that is not hashable is kept as it is
                return value
        return value

    def take_lines(self, lines: list[dict[str, Any]], size: int, taken: array[int], items: int | None = None) -> bool:
        """Take a block of parsed index lines (each with its item's number ``i``) at once, in C, when the
        block allows it: every line of one shape, with whole numbers, naming items below ``items`` (when
        known), pointing inside ``size`` bytes of records, and values kept once as ``__setitem__`` keeps
        them. Their numbers go to ``taken``, in order. False, having taken nothing, for any other block
        (then each line is taken by itself).
        100,000 summaries took 0.37 s of CPU line by line, 0.14 s a block at a time (the collector paused).
        """
        first = tuple(lines[0]) if lines else ()
        if (first[:1] != ("i",) or "at" not in first or "len" not in first
                or any(map(first.__ne__, map(tuple, lines)))):
            return False
        numbers, ats, lengths = (list(map(itemgetter(key), lines)) for key in ("i", "at", "len"))
        if (set(map(type, chain(numbers, ats, lengths))) != {int} or min(numbers) < 0 or min(ats) < 0
                or min(lengths) < 0 or max(map(add, ats, lengths)) + 1 > size
                or (items is not None and max(numbers) >= items)):
            return False
        keys = first[1:]
        shape = self._shapes.get((True, keys)) or self._shapes.setdefault((True, keys), Shape(keys, True))
        try:
            columns = [self._kept_column(key, list(map(itemgetter(key), lines))) for key in shape.stored]
        except TypeError:  # a value kept once that is not hashable: each line by itself keeps it as it is
            return False
        if self._lent:
            self._own()
        rows, places = self._rows, self._places
        if max(numbers) >= len(rows):
            rows.extend([None] * (max(numbers) + 1 - len(rows)))
            places.extend([-1] * (2 * len(rows) - len(places)))
        self._size += list(map(rows.__getitem__, set(numbers))).count(None)
        made = zip(repeat(shape), *columns)
        start = numbers[0]
        if numbers == list(range(start, start + len(numbers))):  # the usual block: the next items in order
            rows[start:start + len(numbers)] = made
            places[2 * start:2 * (start + len(numbers))] = array("q", chain.from_iterable(zip(ats, lengths)))
        else:
            for number, row, at, length in zip(numbers, made, ats, lengths):
                rows[number] = row
                places[2 * number], places[2 * number + 1] = at, length
        taken.extend(numbers)
        return True

    def _kept_column(self, key: str, values: list[Any]) -> Iterable[Any]:
        """``_kept`` over a column of values, in C when they are all of the kind kept once."""
        statuses, tag_lists, score_tables = self._shared
        kinds = set(map(type, values))
        if key == "status" and kinds == {str}:
            return list(map(statuses.setdefault, values, values))
        if key == "tags" and kinds == {list}:
            return list(map(tag_lists.setdefault, map(tuple, values), values))
        if key == "scores" and kinds == {dict} and max(map(len, values)) <= SHARED_SCORES:
            return list(map(score_tables.setdefault, map(tuple, map(dict.items, values)), values))
        if key in KEPT:
            return [self._kept(key, value) for value in values]
        return values
