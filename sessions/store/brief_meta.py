"""Item metas as a report's reading of the briefs keeps them: a tuple of values under shared keys.

A report holds the meta of every item with a result. As parsed, each is a dict of its own
(a dedc meta of nine keys is 272 bytes before its values): 27 MB at 100,000 items. Metas
have few shapes (the same keys in the same order), so ``MetaReading`` keeps each one's
values in a tuple and its keys' positions once per shape, and the strings, numbers and lists that
metas repeat once per reading (not in the interpreter's table of interned strings, which
would keep growing with every run read). A ``Meta`` is read-only, as every item meta is
once made.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping


class Meta(Mapping[str, Any]):
    """One item's meta: ``positions`` (key -> place in ``values``) is shared by the metas of its shape."""

    __slots__ = ("_positions", "_values")

    def __init__(self, positions: Mapping[str, int], values: tuple[Any, ...]):
        self._positions = positions
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[self._positions[key]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(dict(self))


class MetaReading:
    """Makes the ``Meta`` of each parsed meta of one reading, sharing shapes and repeated values."""

    def __init__(self) -> None:
        self._shapes: dict[tuple[str, ...], dict[str, int]] = {}
        self._values: dict[Any, Any] = {}  # a repeated string, or a list of plain values keyed by its members

    def meta(self, parsed: Mapping[str, Any]) -> Meta:
        keys = tuple(parsed)
        positions = self._shapes.get(keys)
        if positions is None:
            positions = self._shapes[keys] = {key: place for place, key in enumerate(keys)}
        return Meta(positions, tuple(self._shared(value) for value in parsed.values()))

    def _shared(self, value: Any) -> Any:
        """The reading's one copy of a string, a whole number (past the interpreter's small ones) or a list
        of strings; anything else as it is. Keys are never equal across these kinds (a bool is not
        taken for the number it equals)."""
        kind = type(value)
        if kind is str or kind is int:
            return self._values.setdefault(value, value)
        if kind is list and all(type(member) is str for member in value):
            return self._values.setdefault(("list", *value), value)
        return value
