"""The item list's id column: as much of each id as the row has room for, the parts that tell ids apart kept.

A robogrid id (``robogrid-instruct-block-alien-d10-e2-p0.5-0008``) is wider than the list
at 80 columns. Cut at the end it loses its number; cut to "the part after the prefix all
ids share" it loses the task, depth and style that differ between items. Instead the id's
``-``-separated fields that are the same in every id of the run are left out
(``…alien-d10-0008``): what is left is exactly what tells items apart. The detail's head
has the whole id.
"""

from __future__ import annotations

from itertools import islice, repeat
from typing import Sequence

from sessions.store.item_ids import ItemIds

ROW_FIXED = 9  # columns of a list row besides the id and the chips: glyph, score
MIN_ID = 12
CHIP_ROOM = 32  # a row keeps this much room for chips (the longest tag code whole) before it shortens the ids
SEPARATOR = "-"
BLOCK = 4096  # ids split at once


class IdColumn:
    """How the list shows ids: whole when they fit beside the score and the widest chip; else without the
    fields every id of the run shares; else that with its middle elided.

    Which fields every id shares is worked out only once an id does not fit (a look at every id: 0.08 s at
    100,000 ids, which a dedc run's list at any usual width never needs)."""

    __slots__ = ("full", "chip", "_ids", "_shared")

    def __init__(self, ids: Sequence[str], codes: list[str]):
        self.full = ids.longest(4) if isinstance(ids, ItemIds) else max(map(len, ids), default=4)  # the longest id
        self.chip = min(CHIP_ROOM, max(map(len, codes), default=0) + 3)  # columns kept for chips, at most CHIP_ROOM
        self._ids = ids
        self._shared: tuple[frozenset[int], int, int] | None = None

    @property
    def same(self) -> frozenset[int]:
        """The positions of the fields equal in every id (ids with as many fields)."""
        return self._fields()[0]

    @property
    def fields(self) -> int:
        """How many fields the ids have (-1: not all the same)."""
        return self._fields()[1]

    @property
    def short(self) -> int:
        """The longest shortened id."""
        return self._fields()[2]

    def _fields(self) -> tuple[frozenset[int], int, int]:
        if self._shared is None:
            self._shared = shared_fields(self._ids, self.full)
        return self._shared

    def shortened(self, item_id: str) -> str:
        """The id without the fields every id shares, marked with a leading "…" (the id itself if none)."""
        if not self.same:
            return item_id
        parts = item_id.split(SEPARATOR)
        if len(parts) != self.fields:
            return item_id
        return "…" + SEPARATOR.join(p for i, p in enumerate(parts) if i not in self.same)

    def width(self, row_width: int) -> int:
        room = row_width - ROW_FIXED - self.chip
        return self.full if self.full <= room else self.short if self.short <= room else max(MIN_ID, room)

    def text(self, item_id: str, width: int) -> str:
        if len(item_id) <= width:
            return item_id.ljust(width)
        return elided(self.shortened(item_id), width).ljust(width)


def shared_fields(ids: Sequence[str], full: int) -> tuple[frozenset[int], int, int]:
    """(the positions of the fields equal in every id, how many fields the ids have or -1 when not all the
    same, the longest id with those fields left out): ``full`` is the longest id."""
    first = ids[0].split(SEPARATOR) if len(ids) > 1 else []
    shared = set(range(len(first)))  # the fields equal in every id so far, against the first
    each = iter(ids)
    # a block of ids at a time, split and compared field by field in C: nothing is kept (a 100,000-item
    # run's ids split and held were 20 MB) and no Python line runs per id
    while block := list(islice(each, BLOCK)):
        parts = list(map(str.split, block, repeat(SEPARATOR)))
        if any(map(len(first).__ne__, map(len, parts))):
            return frozenset(), -1, full
        fields = list(zip(*parts))
        shared = {p for p in shared if fields[p].count(first[p]) == len(block)}
    if not shared or len(shared) == len(first):  # one id, nothing shared, or all alike: nothing to leave out
        return frozenset(), len(first) or -1, full
    # a shortened id is "…" and its other fields joined: the longest id's length less the shared
    # fields (the same in every id) and their separators, plus the "…"
    return frozenset(shared), len(first), full - sum(len(first[p]) + 1 for p in shared) + 1


def elided(text: str, width: int) -> str:
    """``text`` in ``width`` columns: whole if it fits, else its start and its (distinguishing) end around "…"."""
    if len(text) <= width:
        return text
    head = max(1, (width - 1) // 3)
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]
