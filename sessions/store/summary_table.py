"""Every item's result summary in a run, kept as a column of values per key under a shared tuple of keys.

A reader that holds a whole run's summaries (a report, the inspector, a resume) held one
parsed dict per item: about 510 bytes each, 51 MB at 100,000 items. Summaries have a few
shapes (the same keys in the same order), so ``SummaryTable`` keeps the number of each
item's ``Shape`` in an array, each key's values in a list of their own (a column: eight
bytes an item), where its record lies in an array (16 bytes an item), and equal tag lists
and small score tables once: 100,000 dedc summaries take about 6 MB (a tuple of values an
item was 11 MB). Looking an item up gives a new dict, the summary as it was parsed; the
values in it (its scores, its tags) are shared between items and read-only, as the
summaries' readers already treat them. ``value`` reads one key without making the dict,
and ``column`` every item's, for the loops over every item (a status count, the pending).
"""

from __future__ import annotations

from array import array
from itertools import chain, compress, count, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, MutableMapping, cast

from sessions.run.usage import Usage

if TYPE_CHECKING:
    from sessions.store.summary_line import Summary

SHARED_SCORES = 4  # score tables of up to this many keys are shared between equal summaries
KEPT = ("status", "tags", "scores")  # the values kept once however many items have them
PLACE = ("at", "len")  # where the record lies: two numbers an item, kept in an array


class Shape:
    """The keys of summaries that have the same keys in the same order, and its number in the table.

    ``placed``: the summaries have an ``at`` and a ``len`` (whole numbers), kept in the table's
    array of places instead of columns; ``stored`` are the other keys, each a column.
    """

    __slots__ = ("number", "keys", "placed", "stored", "has")

    def __init__(self, number: int, keys: tuple[str, ...], placed: bool):
        self.number = number  # what the table's array of shapes holds for its items (0: no summary)
        self.keys = keys  # in the summaries' order
        self.placed = placed
        self.stored = tuple(key for key in keys if not (placed and key in PLACE))
        self.has = frozenset(self.stored)


class SummaryTable(MutableMapping[int, "Summary"]):
    """Item index -> summary; iterates in item order.

    A column holds a value for each item whose shape has its key; at the other items it
    holds None or an earlier summary's value, never read."""

    def __init__(self) -> None:
        self._kinds = array("I")  # item index -> its shape's number, 0 where it has no summary
        self._columns: dict[str, list[Any]] = {}  # key -> item index -> value
        self._places = array("q")  # item index * 2 -> at, then len (items of a placed shape)
        self._size = 0
        self._lent = False  # the arrays and columns may be another table's too (``copy``): copied before a change
        self._shapes: dict[tuple[Any, ...], Shape] = {}
        self._numbered: list[Shape] = []  # shape number - 1 -> shape
        # statuses, equal tag lists (by their codes) and small score tables (by their items), each kept once
        self._shared: tuple[dict[str, str], dict[tuple[Any, ...], Any], dict[tuple[Any, ...], Any]] = ({}, {}, {})

    def __getitem__(self, index: int) -> Summary:
        shape = self._shape(index)
        if shape is None:
            raise KeyError(index)
        columns = self._columns
        summary = {key: columns[key][index] for key in shape.stored}
        if shape.placed:
            summary["at"], summary["len"] = self._places[2 * index], self._places[2 * index + 1]
        return cast("Summary", summary)

    def value(self, index: int, key: str, default: Any = None) -> Any:
        """The item's value for ``key``; ``default`` when it has no summary or no such key."""
        shape = self._shape(index)
        return default if shape is None else self._value(index, shape, key, default)

    def column(self, key: str, default: Any = None) -> Iterator[Any]:
        """Every item's value for ``key`` in item order (``default`` where it has none), making no dict.
        When every summary has one shape (a run's usually do), the values are picked in C."""
        if len(self._shapes) == 1 and key not in PLACE:
            (shape,) = self._shapes.values()
            if key not in shape.has:
                return repeat(default, self._size)
            # a table copied from before the shape came has no column for it, and no summary of it
            return compress(self._columns.get(key, ()), self._kinds)
        shapes = self._numbered
        return (self._value(index, shapes[number - 1], key, default)
                for index, number in enumerate(self._kinds) if number)

    def usage(self) -> Usage:
        """The tokens over every summary (``run_usage`` of the summaries, making no dict)."""
        usage = Usage()
        for tokens in filter(None, self.column("usage")):  # most summaries have none: no call for them
            usage.add(tokens)
        return usage

    def __setitem__(self, index: int, summary: Mapping[str, Any]) -> None:
        if self._lent:
            self._own()
        at, length = summary.get("at"), summary.get("len")
        placed = type(at) is int and type(length) is int
        shape = self._shape_of(tuple(summary), placed)
        self._grow(index + 1)
        if not self._kinds[index]:
            self._size += 1
        self._kinds[index] = shape.number
        columns = self._columns
        for key in shape.stored:
            columns[key][index] = self._kept(key, summary[key])
        if placed:
            self._places[2 * index] = cast(int, at)
            self._places[2 * index + 1] = cast(int, length)

    def __delitem__(self, index: int) -> None:
        if self._shape(index) is None:
            raise KeyError(index)
        if self._lent:
            self._own()
        self._kinds[index] = 0
        self._size -= 1

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and 0 <= index < len(self._kinds) and self._kinds[index] != 0

    def __iter__(self) -> Iterator[int]:
        return compress(count(), self._kinds)

    def __len__(self) -> int:
        return self._size

    def copy(self) -> "SummaryTable":
        """A table of the same summaries that changes apart from this one: its arrays and columns are lent to
        both until either changes (a reader's copy of 100,000 summaries was 2.4 MB more)."""
        table = SummaryTable()
        table._kinds, table._columns, table._places, table._size = self._kinds, self._columns, self._places, self._size
        table._lent = self._lent = True
        table._shapes, table._numbered, table._shared = self._shapes, self._numbered, self._shared
        return table

    def coded(self) -> tuple[array[int], array[int], list[Shape], list[tuple[str, list[Any], array[int] | None]]]:
        """The table as a snapshot stores it (``sessions.store.summary_snapshot``): each item's shape number,
        the places, the shapes, and each column as its distinct values (by identity: what the table keeps
        once is one value) and each item's code among them, or as itself (codes None) when most of its
        values differ. What ``of_coded`` reads back."""
        columns: list[tuple[str, list[Any], array[int] | None]] = []
        for key, values in self._columns.items():
            identities = list(map(id, values))
            distinct = dict(zip(identities, values))
            if len(distinct) > len(values) // 2:
                columns.append((key, values, None))
                continue
            codes = {identity: code for code, identity in enumerate(distinct)}
            columns.append((key, list(distinct.values()), array("I", map(codes.__getitem__, identities))))
        return self._kinds, self._places, self._numbered, columns

    @classmethod
    def of_coded(cls, kinds: array[int], places: array[int], shapes: list[tuple[tuple[str, ...], bool]],
                 columns: list[tuple[str, list[Any], array[int] | None]]) -> "SummaryTable":
        """The table ``coded`` gave, from its parts read back (ValueError where they do not fit together).
        The values kept once are shared with later summaries as when they were read from the index."""
        table = cls()
        for keys, placed in shapes:
            table._shape_of(keys, placed)
        if len(places) != 2 * len(kinds) or (kinds and max(kinds) > len(shapes)):
            raise ValueError("the shapes or places do not fit the items")
        with_places = {shape.number for shape in table._numbered if shape.placed}
        mask = list(map(with_places.__contains__, kinds))  # the items whose record has a place
        if min(chain(compress(places[0::2], mask), compress(places[1::2], mask), [0])) < 0:
            raise ValueError("a record is placed before the file's start")
        loaded: dict[str, list[Any]] = {}
        for key, values, codes in columns:
            if key in KEPT:
                values = [table._kept(key, value) for value in values]
            if codes is not None and codes and max(codes) >= len(values):
                raise ValueError(f"a code of {key} names no value")
            loaded[key] = values if codes is None else list(map(values.__getitem__, codes))
            if len(loaded[key]) != len(kinds):
                raise ValueError(f"the column {key} does not fit the items")
        if any(key not in loaded for shape in table._numbered for key in shape.stored):
            raise ValueError("a shape's key has no column")
        table._columns = loaded
        table._kinds, table._places, table._size = kinds, places, len(kinds) - kinds.count(0)
        return table

    def _own(self) -> None:
        """Arrays and columns of this table's own, before its first change since a ``copy`` lent them."""
        self._kinds, self._places = array("I", self._kinds), array("q", self._places)
        self._columns = {key: list(values) for key, values in self._columns.items()}
        self._lent = False

    def _shape(self, index: int) -> Shape | None:
        number = self._kinds[index] if 0 <= index < len(self._kinds) else 0
        return self._numbered[number - 1] if number else None

    def _shape_of(self, keys: tuple[str, ...], placed: bool) -> Shape:
        """The shape of summaries with these keys, made (with a column for each new key) on its first use."""
        shape = self._shapes.get((placed, keys))
        if shape is None:
            shape = self._shapes[(placed, keys)] = Shape(len(self._numbered) + 1, keys, placed)
            self._numbered.append(shape)
        for key in shape.stored:
            if key not in self._columns:  # a table lent by ``copy`` may lack a column its lender added
                self._columns[key] = [None] * len(self._kinds)
        return shape

    def _grow(self, size: int) -> None:
        """Room for items below ``size``."""
        more = size - len(self._kinds)
        if more > 0:
            self._kinds.extend(repeat(0, more))
            self._places.extend(repeat(-1, 2 * more))
            for values in self._columns.values():
                values.extend(repeat(None, more))

    def _value(self, index: int, shape: Shape, key: str, default: Any) -> Any:
        if key in shape.has:
            return self._columns[key][index]
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
        if self._lent:
            self._own()
        shape = self._shape_of(first[1:], True)
        try:
            columns = [self._kept_column(key, list(map(itemgetter(key), lines))) for key in shape.stored]
        except TypeError:  # a value kept once that is not hashable: each line by itself keeps it as it is
            return False
        kinds, places = self._kinds, self._places
        self._grow(max(numbers) + 1)
        self._size += list(map(kinds.__getitem__, set(numbers))).count(0)
        start = numbers[0]
        if numbers == list(range(start, start + len(numbers))):  # the usual block: the next items in order
            end = start + len(numbers)
            kinds[start:end] = array("I", [shape.number]) * len(numbers)
            for key, values in zip(shape.stored, columns):
                self._columns[key][start:end] = values
            places[2 * start:2 * end] = array("q", chain.from_iterable(zip(ats, lengths)))
        else:
            for key, values in zip(shape.stored, columns):
                column = self._columns[key]
                for number, value in zip(numbers, values):
                    column[number] = value
            for number, at, length in zip(numbers, ats, lengths):
                kinds[number] = shape.number
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
