"""A run's item ids as one string and where each one starts: what the inspector holds of every id.

Held as a list, 100,000 ids were 6.7 MB (a string object each, 49 bytes before its text);
joined they are their text and four bytes an id. An id is sliced out when it is read, which
costs about what reading a list does; a lookup by id searches the joined text.

On disk (``items.ids``, written with the run's items) they are the same two things: the
joined text in UTF-8, then each start as a little-endian uint32 (the text's end last),
then how many ids there are (uint32). Reading them back is one read and two copies, where
finding them in the brief file was a search of all of it (0.1 s at 100,000 ids).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import accumulate, islice
from operator import le, sub
from typing import Any, BinaryIO, Iterable, Iterator, Sequence

from engines.core import OnDemand
from sessions.store.files import from_little_endian, little_endian


class ItemIds(OnDemand[str]):
    """Every item's id in run order, read-only, each sliced out when asked for; equal to any sequence of the
    same ids."""

    __slots__ = ("_text", "_starts")

    def __init__(self, text: str, starts: array[int]):
        self._text = text
        self._starts = starts  # where each id starts in ``text``, and its end last

    @classmethod
    def of(cls, blocks: Iterable[Sequence[str]]) -> "ItemIds":
        """The ids of blocks of ids, in order (a block at a time: no list of every id is made)."""
        parts: list[str] = []
        starts = array("I", [0])
        for ids in blocks:
            starts.extend(accumulate(map(len, ids), initial=starts[-1]))
            del starts[-len(ids) - 1]  # the block's first start, which ended the one before
            parts.append("".join(ids))
        return cls("".join(parts), starts)

    @classmethod
    def from_bytes(cls, data: bytes, count: int) -> "ItemIds | None":
        """The ``count`` ids ``IdsWriter`` wrote, or None when ``data`` is not that (damaged, cut, another count)."""
        size = array("I").itemsize
        end = len(data) - size * (count + 2)
        if end < 0 or int.from_bytes(data[-size:], "little") != count:
            return None
        starts = from_little_endian("I", data[end:-size])
        try:
            text = data[:end].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if starts[0] != 0 or starts[-1] != len(text) or not all(map(le, starts, islice(starts, 1, None))):
            return None
        return cls(text, starts)

    def __len__(self) -> int:
        return len(self._starts) - 1

    def element(self, index: int) -> str:
        return self._text[self._starts[index]:self._starts[index + 1]]

    def longest(self, default: int) -> int:
        """The length of the longest id (``default`` when there is none), from the starts alone."""
        starts = self._starts
        return max(map(sub, islice(starts, 1, None), starts), default=default)

    def __iter__(self) -> Iterator[str]:
        starts = self._starts
        return map(self._text.__getitem__, map(slice, starts, islice(starts, 1, None)))

    def index(self, item_id: Any, start: int = 0, stop: int | None = None) -> int:
        """The position of ``item_id``: a search of the joined text for a whole id (ValueError if none)."""
        if not isinstance(item_id, str) or not item_id:
            return super().index(item_id, start, len(self) if stop is None else stop)
        starts, at = self._starts, self._text.find(item_id)
        while at >= 0:
            found = bisect_right(starts, at) - 1  # the last id starting here: those before it are empty
            if (found < len(self) and starts[found] == at and starts[found + 1] == at + len(item_id)
                    and start <= found and (stop is None or found < stop)):
                return found
            at = self._text.find(item_id, at + 1)
        raise ValueError(f"{item_id!r} is not an item id of the run")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable as they are

    def __repr__(self) -> str:
        return f"ItemIds({len(self)} ids)"


class IdsWriter:
    """Writes ids one at a time in the form ``ItemIds.from_bytes`` reads: the text as it comes, the starts
    (four bytes an id, kept meanwhile) and the count at the end."""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.starts = array("I", [0])

    def add(self, item_id: str) -> None:
        self.handle.write(item_id.encode("utf-8"))
        self.starts.append(self.starts[-1] + len(item_id))

    def close(self) -> None:
        self.handle.write(little_endian(self.starts) + (len(self.starts) - 1).to_bytes(self.starts.itemsize, "little"))
