"""An engine's error taxonomy and the tags it makes, with the two codes every engine shares.

``unparseable`` (no answer could be read) and ``format_violation`` (text around the answer
had to be removed) keep one label everywhere; each engine says in its own words what they
mean for its answers.
"""

from __future__ import annotations

from typing import Final, Iterator, Sequence, overload

from engines.core import Tag, TagType

UNPARSEABLE: Final = "unparseable"  # a tag code and the status of an item whose answer could not be read
FORMAT_VIOLATION: Final = "format_violation"


def unparseable(description: str, group: str) -> TagType:
    return TagType(UNPARSEABLE, "Unparseable", description, group)


def format_violation(description: str, group: str) -> TagType:
    return TagType(FORMAT_VIOLATION, "Format violation", description, group)


class Taxonomy(Sequence[TagType]):
    """The tag types in their report order; ``tag`` makes an automatic tag with the type's label."""

    def __init__(self, types: Sequence[TagType]):
        self.types = tuple(types)
        self.labels = {t.code: t.label for t in self.types}

    @overload
    def __getitem__(self, index: int) -> TagType: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[TagType, ...]: ...
    def __getitem__(self, index: int | slice) -> TagType | tuple[TagType, ...]:
        return self.types[index]

    def __len__(self) -> int:
        return len(self.types)

    def __iter__(self) -> Iterator[TagType]:
        return iter(self.types)

    def tag(self, code: str, evidence: str) -> Tag:
        return Tag(code=code, label=self.labels.get(code, code), evidence=evidence, source="auto")
