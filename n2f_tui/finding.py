"""Finding items by what they are: the filter's choices with counts, over statuses, tags, reviewers and
every field of the items' meta (gap, graph type, depth, level, split, setting, style...), and the
sorts over any of those fields.

An engine declares its items' grouping keys as ``Item.meta`` (what its reports group by); the
fields are read from the run's brief file (ids and meta only), once per screen, so a
10,013-item run is looked through without parsing its items' inputs and gold.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from n2f_tui.state import RunState  # which imports this module

MAX_VALUES = 24  # a field with more distinct values (an index, a free text) is offered for sorting only
FIELD = "field:"  # filter key prefix: ``field:depth=3``
SORT_FIELD = "field:"  # sort key prefix: ``field:depth``


@dataclass
class ItemFields:
    """Each meta field's value per item (run order); None where an item has no such field."""

    values: dict[str, list[Any]]

    @staticmethod
    def of(metas: Iterable[Mapping[str, Any]]) -> "ItemFields":
        metas = list(metas)
        keys: dict[str, None] = {}
        for meta in metas:
            keys.update((k, None) for k, v in meta.items() if not isinstance(v, (list, dict)))
        return ItemFields({key: [meta.get(key) for meta in metas] for key in keys})

    def filter_choices(self) -> list[tuple[str, str]]:
        """(``field:KEY=VALUE``, ``KEY = VALUE (count)``) for each field with few values."""
        choices = []
        for key, column in self.values.items():
            counts = Counter(str(v) for v in column if v is not None)
            if 1 < len(counts) <= MAX_VALUES:
                choices += [(f"{FIELD}{key}={value}", f"{key} = {value} ({count:,})")
                            for value, count in sorted(counts.items(), key=lambda kv: sort_key(kv[0]))]
        return choices

    def matches(self, filter_key: str, index: int) -> bool:
        key, _, value = filter_key[len(FIELD):].partition("=")
        column = self.values.get(key)
        return column is not None and column[index] is not None and str(column[index]) == value

    def sort_choices(self) -> list[tuple[str, str]]:
        return [(f"{SORT_FIELD}{key}", f"field {key}") for key in self.values]

    def sort_value(self, sort: str, index: int) -> tuple[int, Any]:
        column = self.values.get(sort[len(SORT_FIELD):])
        value = column[index] if column is not None else None
        return (1, "") if value is None else (0, sort_key(value))


def sort_key(value: Any) -> tuple[int, Any]:
    """Numbers in numeric order before text in text order (``d2`` < ``d10`` stays a text order)."""
    if isinstance(value, bool):
        return (1, str(value))
    if isinstance(value, (int, float)):
        return (0, value)
    try:
        return (0, float(value))
    except (TypeError, ValueError):
        return (1, str(value))


def counted(choices: list[tuple[str, str]], count: Any) -> list[tuple[str, str]]:
    """The same choices, each label followed by how many items it keeps (``count(key)``)."""
    return [(key, f"{label} ({count(key):,})") if key != "all" else (key, label) for key, label in choices]


def filter_choices(state: RunState) -> list[tuple[str, str]]:
    """(key, label with the count of items it keeps) for a ``RunState``'s filter dialog: statuses, reviews,
    tags, other people's reviews, then every item field with few values."""
    keys = state.filter_keys()
    counts = filter_counts(state, [k for k, _ in keys])
    choices = counted(keys, counts.__getitem__)
    reviewers = {name: marks for name, marks in state.annotations.by_annotator().items() if name != state.annotator}
    choices += [(f"reviewer:{name}", f"reviewed by {name} ({sum(m.reviewed for m in marks.values()):,})")
                for name, marks in sorted(reviewers.items())]
    return choices + state.fields.filter_choices()


def filter_counts(state: RunState, keys: list[str]) -> Counter[str]:
    """How many items each filter key keeps, the search aside: the tags in one pass over the items."""
    counts: Counter[str] = Counter()
    if any(k.startswith("tag:") for k in keys) and not state.blind:
        for index in range(state.total):
            counts.update(f"tag:{code}" for code in state.tags(index).codes)
    kept, query = state.filter, state.query
    try:
        for key in (k for k in keys if not k.startswith("tag:")):
            state.filter, state.query = key, ""
            counts[key] = sum(1 for i in range(state.total) if state.keeps(i))
    finally:
        state.filter, state.query = kept, query
    return counts
