"""Whose labels an item carries, and the final tags every count uses.

For each annotated item: the automatic codes (the stored result's tags), each person's
label set (``ItemMarks.labels``: their corrections of the automatic codes, or their own
labels when they labelled blind) and the adjudicator's settled labels. The final tags,
used by the report, its charts, compare, agreement and export, are:

1. the settled labels, when the item was settled;
2. else the people's labels when they all agree (one person: automatic - removed + added);
3. else the automatic tags: the people disagree and nobody settled the item yet, so it
   is *disputed* (the adjudication queue) and counted as such.

An item is *reviewed* when a person reviewed it (``sessions.study.annotations``) or it was
settled; that one definition is what the report, ``A`` and the export count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from sessions.study.annotations import AnnotationLog
from sessions.store.runs import RunStore


@dataclass
class ItemLabels:
    """One item's automatic codes, each reviewer's label set and the settled labels."""

    item: str
    auto: frozenset[str]
    by_annotator: dict[str, frozenset[str]] = field(default_factory=dict)  # reviewers only
    settled: frozenset[str] | None = None

    @property
    def reviewed(self) -> bool:
        return bool(self.by_annotator) or self.settled is not None

    @property
    def disputed(self) -> bool:
        """Reviewers disagree and nobody settled the item: it waits in the adjudication queue."""
        return self.settled is None and len(set(self.by_annotator.values())) > 1

    @property
    def final(self) -> frozenset[str]:
        if self.settled is not None:
            return self.settled
        if self.by_annotator and not self.disputed:
            return next(iter(self.by_annotator.values()))
        return self.auto

    @property
    def source(self) -> str:
        """Where the final tags come from: settled, reviewed, disputed or automatic."""
        if self.settled is not None:
            return "settled"
        if self.disputed:
            return "disputed"
        return "reviewed" if self.by_annotator else "automatic"


@dataclass
class RunLabels:
    """The annotated items of a run (anything else carries its automatic tags only)."""

    items: dict[str, ItemLabels]
    annotators: list[str]  # everyone who reviewed at least one item, sorted
    names: dict[str, str]  # code -> label of codes people added or settled

    def final(self, item_id: str, auto: Iterable[str]) -> set[str]:
        labels = self.items.get(item_id)
        return set(auto) if labels is None else set(labels.final)

    def counts(self) -> dict[str, int]:
        """How many items are reviewed, settled and disputed."""
        values = self.items.values()
        return {"reviewed": sum(v.reviewed for v in values), "settled": sum(v.settled is not None for v in values),
                "disputed": sum(v.disputed for v in values)}

    def queue(self) -> list[str]:
        """The disputed items, in the order of ``items`` (run order when built by ``store_labels``)."""
        return [item for item, labels in self.items.items() if labels.disputed]


def annotated_items(log: AnnotationLog) -> set[str]:
    """The ids of the items anyone marked or someone settled: the only ones a run's labels describe."""
    return set(log.settled()).union(*(set(marks) for marks in log.by_annotator().values()))


def run_labels(log: AnnotationLog, auto: Mapping[str, Iterable[str]], order: Iterable[str]) -> RunLabels:
    """Labels of the items in ``order`` that someone annotated; ``auto`` gives each one's automatic codes."""
    people = log.by_annotator()
    settled = log.settled()
    names: dict[str, str] = {}
    for marks in log.marks().values():
        names.update(marks.added)
    for labelled in settled.values():
        names.update(labelled)
    annotated = annotated_items(log)
    items: dict[str, ItemLabels] = {}
    for item_id in order:
        if item_id not in annotated:
            continue
        codes = frozenset(auto.get(item_id, ()))
        by = {name: frozenset(marks[item_id].labels(codes)) for name, marks in people.items()
              if item_id in marks and marks[item_id].reviewed}
        items[item_id] = ItemLabels(item=item_id, auto=codes, by_annotator=dict(sorted(by.items())),
                                    settled=frozenset(settled[item_id]) if item_id in settled else None)
    reviewers = sorted({name for labels in items.values() for name in labels.by_annotator})
    return RunLabels(items=items, annotators=reviewers, names=names)


def store_labels(store: RunStore, summaries: Mapping[int, Mapping[str, Any]] | None = None) -> RunLabels:
    """The run's labels, read from its annotation log and result summaries (given, or read here)."""
    return labels_and_summaries(store, summaries)[0]


def labels_and_summaries(store: RunStore, summaries: Mapping[int, Mapping[str, Any]] | None = None
                         ) -> tuple[RunLabels, dict[str, Mapping[str, Any]]]:
    """The run's labels and the result summaries of its annotated items (by id, those with a result), read
    from the annotation log and the summaries (given, or read here) of the annotated items alone: a run
    nobody annotated costs its log, whatever its size."""
    log = store.annotations()
    try:
        places = annotated_places(store, annotated_items(log))
        if not places:
            return run_labels(log, {}, ()), {}
        summaries = store.summaries() if summaries is None else summaries
        annotated = {item_id: summary for item_id, index in places.items()
                     if (summary := summaries.get(index)) is not None}
        return run_labels(log, {item_id: s.get("tags", []) for item_id, s in annotated.items()}, places), annotated
    finally:
        log.close()


def annotated_places(store: RunStore, annotated: Iterable[str]) -> dict[str, int]:
    """Each annotated item's index, in run order (an id the run does not have is left out).

    One look at each id and none at any result: ``n2f agreement`` on 100,000 items made a dict
    of every item's tags and another of every status (0.4 s and 23 MB) for the few people annotated."""
    wanted = set(annotated)
    if not wanted:
        return {}
    return {item_id: index for index, item_id in enumerate(store.item_ids()) if item_id in wanted}
