"""What the run screen shows, as plain data: items, records, annotations, order.

No Textual here: the run screen and the tests drive this object, and every question
the screen asks of a run (which items are visible, which is the next wrong one, what
tags an item has once a person's edits are applied) is answered in one place.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from engines.core import STATUSES, Tag, TagType
from n2f_tui.finding import FIELD, SORT_FIELD, ItemFields, filter_choices
from n2f_tui.items_on_demand import ItemsOnDemand
from sessions import api
from sessions.study.annotations import AnnotationLog, ItemMarks
from sessions.store.summary_line import Summary, summary_of
from sessions.store.runs import RunStore
from sessions.store.summary_table import SummaryTable
from sessions.study.sample import load as load_study
from sessions.run.usage import Usage

WRONG = ("wrong", "unparseable", "scorer_error", "error")
STATUS_RANK = {"error": 0, "scorer_error": 1, "unparseable": 2, "wrong": 3, "correct": 4, "pending": 5}


@dataclass
class ItemTags:
    """An item's tags with a person's edits applied."""

    auto: list[Tag] = field(default_factory=list)  # automatic tags still in force
    removed: list[Tag] = field(default_factory=list)  # automatic tags a person removed
    manual: dict[str, str] = field(default_factory=dict)  # code -> label, added by a person
    reviewed: bool = False
    notes: list[str] = field(default_factory=list)
    hidden: set[str] = field(default_factory=set)  # automatic codes blind mode keeps off the screen

    @property
    def codes(self) -> set[str]:
        return {t.code for t in self.auto} | set(self.manual)


def study_items(store: RunStore) -> list[int]:
    study = load_study(store)
    if study is None:
        return []
    wanted = set(study.items)
    return [i for i, item_id in enumerate(store.item_ids()) if item_id in wanted]


class RunState:
    """One run as the inspector sees it; refreshed from the runner while it runs.

    ``records`` holds each item's result summary (status, scores, tag codes), which is
    all the list, filters, sorting and counts need; a full record (outputs, evidence) is
    read from the store only for the item shown.
    """

    def __init__(self, store: RunStore, annotator: str = "", blind: bool = False):
        self.store = store
        self.blind = blind  # automatic tags and what is derived from them stay hidden
        self.engine, self.settings = api.run_settings(store)
        self.items = ItemsOnDemand(store)
        self.ids: Sequence[str] = store.item_ids()
        store.follow(hand_over=False)  # followed from here: the first look would hand every one back
        self.records: SummaryTable = store.summaries()
        self._totals()
        self.annotations: AnnotationLog = store.annotations(annotator)
        self.annotator = self.annotations.annotator
        self.marks: dict[str, ItemMarks] = self.annotations.marks(self.annotator)  # this person's marks only
        self.study = study_items(store)  # item indices of the run's study, run order (empty: none)
        self._study_set = set(self.study)
        self._positions: dict[str, int] | None = None
        self.filter = "all"
        self.query = ""
        self.sort = "index"
        self.order: Sequence[int] = range(len(self.ids))  # the listed items' indices, in list order
        self.versions: dict[int, int] = {}  # bumped when an item's row must be redrawn
        self._haystack: dict[int, str] = {}
        self._fields: ItemFields | None = None
        self.score_key = self.engine.main_score
        self._taxonomy: list[TagType] | None = None
        self._labels: dict[str, str] | None = None
        self.drafts: dict[str, str] = dict(store.meta.get("templates") or {})  # edited prompt templates

    # ------------------------------------------------------------------ basics

    @property
    def total(self) -> int:
        return len(self.ids)

    def status(self, index: int) -> str:
        return self.records.value(index, "status", "error") if index in self.records else "pending"

    def main_score(self, index: int) -> float | None:
        """The engine's list score of the item (``Engine.list_score``: 0..1, monotone with the status)."""
        record = self.records.get(index)
        if not record:
            return None
        value = self.engine.list_score(record.get("status", "error"), record.get("scores", {}))
        return float(value) if isinstance(value, (int, float)) else None

    def taxonomy(self) -> list[TagType]:
        if self._taxonomy is None:
            self._taxonomy = list(self.engine.taxonomy())
        return self._taxonomy

    def record(self, index: int) -> dict[str, Any] | None:
        """The item's full stored record (outputs, steps, tags with evidence), or None while pending."""
        return self.store.record(index) if index in self.records else None

    def tags(self, index: int, record: dict[str, Any] | None = None) -> ItemTags:
        """The item's tags with people's edits applied; from ``record`` (with evidence) when given, else its summary."""
        if record is not None:
            auto = [Tag.from_json(t) for t in record.get("tags", [])]
        else:
            labels, summary = self.labels(), self.records.get(index)
            auto = [Tag(code=c, label=labels.get(c, c)) for c in (summary.get("tags", []) if summary else [])]
        hidden = {t.code for t in auto} if self.blind else set()
        mark = self.marks.get(self.ids[index])
        if not mark:
            return ItemTags(auto=[] if self.blind else auto, hidden=hidden)
        if self.blind or mark.blind:  # the person's own labels, from none
            auto = [] if self.blind else [t for t in auto if t.code not in mark.removed]
            return ItemTags(auto=auto, manual=dict(mark.added), reviewed=mark.reviewed, notes=list(mark.notes),
                            hidden=hidden)
        kept = [t for t in auto if t.code not in mark.removed]
        kept_codes = {t.code for t in kept}
        return ItemTags(
            auto=kept,
            removed=[t for t in auto if t.code in mark.removed],
            manual={c: label for c, label in mark.added.items() if c not in kept_codes},
            reviewed=mark.reviewed,
            notes=list(mark.notes),
        )

    def labels(self) -> dict[str, str]:
        if self._labels is None:
            self._labels = {t.code: t.label for t in self.taxonomy()}
        return self._labels

    # ------------------------------------------------------------- live updates

    def apply(self, fresh: dict[int, dict[str, Any]]) -> None:
        """Take newly finished records (from the runner) into the state."""
        self.take({i: summary_of(r) for i, r in fresh.items()})

    def follow(self) -> tuple[bool, list[int]]:
        """What another process wrote to the run since the last look (``RunStore.follow``): whether
        its metadata (status) changed, and the items with a new result, taken into the state."""
        meta_changed, fresh = self.store.follow()
        self.take(fresh)
        return meta_changed, sorted(fresh)

    def take(self, fresh: dict[int, Summary]) -> None:
        """New result summaries into the records, the token totals and the rows' versions."""
        if not fresh:
            return
        statuses = self._statuses
        for index, summary in fresh.items():
            before = self.records.get(index)
            self.usage.add_record(before, -1)
            self.usage.add_record(summary)
            if before is not None:
                statuses[before.get("status", "error")] -= 1
            statuses[summary.get("status", "error")] += 1
        self.records.update(fresh)
        for index in fresh:
            self.versions[index] = self.versions.get(index, 0) + 1
            self._haystack.pop(index, None)

    def _totals(self) -> None:
        """The tokens and the statuses over the records, which ``take`` then keeps up to date."""
        self.usage: Usage = self.records.usage()
        self._statuses = Counter(self.records.column("status", "error"))

    def reload(self, store: RunStore | None = None) -> None:
        """Re-read results (after a rescore, a resume, or when the runner stops)."""
        if store is not None:
            self.store = store
            self.items = ItemsOnDemand(store)
        self.records = self.store.summaries()
        self._totals()
        self.versions = {i: self.versions.get(i, 0) + 1 for i in range(self.total)}
        self._haystack.clear()

    # ------------------------------------------------------------- annotations

    def annotate(self, index: int, kind: str, code: str = "", text: str = "", label: str = "") -> None:
        """Write one event now (durably, by the log) and refresh the item's marks."""
        self.annotations.add(self.ids[index], kind, code=code, text=text, label=label, blind=self.blind)
        self.refresh_annotations()
        self.versions[index] = self.versions.get(index, 0) + 1

    def refresh_annotations(self) -> list[int]:
        """Take in events written since the last look, by this or another process; the indices they touch."""
        fresh = self.annotations.refresh()
        if not fresh:
            return []
        if self._positions is None:
            self._positions = {item_id: i for i, item_id in enumerate(self.ids)}
        touched = sorted({self._positions[e["item"]] for e in fresh if e["item"] in self._positions})
        for index in touched:
            self.versions[index] = self.versions.get(index, 0) + 1
        return touched

    def annotation_events(self, index: int) -> list[dict[str, Any]]:
        """The item's annotation events, from the run's log kept open (no store opened per item)."""
        return self.annotations.events(self.ids[index])

    def add_tag(self, index: int, code: str) -> None:
        label = next((t.label for t in self.taxonomy() if t.code == code), code)
        self.annotate(index, "tag_add", code=code, label=label)

    def remove_tag(self, index: int, code: str) -> None:
        self.annotate(index, "tag_remove", code=code)

    def accept(self, index: int) -> None:
        codes = ",".join(sorted(self.tags(index).codes))
        self.annotate(index, "reviewed", text=codes)

    def reviewed(self, index: int) -> bool:
        mark = self.marks.get(self.ids[index])
        return bool(mark and mark.reviewed)

    def next_unlabelled(self, position: int) -> int | None:
        """The position in ``order`` of the next item this person has not reviewed, wrapping round."""
        count = len(self.order)
        for step in range(1, count + 1):
            candidate = (position + step) % count
            if not self.reviewed(self.order[candidate]):
                return candidate
        return None

    def set_blind(self, blind: bool) -> None:
        """Hide or reveal the automatic tags: every row is redrawn, and a tag filter cannot stay."""
        self.blind = blind
        if blind and self.filter.startswith("tag:"):
            self.filter = "all"
        self.versions = {i: self.versions.get(i, 0) + 1 for i in range(self.total)}
        self.recompute()

    def study_progress(self) -> tuple[int, int]:
        """(study items this person reviewed, study items)."""
        return sum(self.reviewed(i) for i in self.study), len(self.study)

    def note(self, index: int, text: str) -> None:
        self.annotate(index, "note", text=text)

    # --------------------------------------------------------- filter and sort

    @property
    def fields(self) -> ItemFields:
        """The items' meta fields (read from the run's brief file on first use)."""
        if self._fields is None:
            self._fields = ItemFields.of(b["meta"] for b in self.store.briefs())
        return self._fields

    def filter_choices(self) -> list[tuple[str, str]]:
        """(key, label with the count of items it keeps) pairs for the filter dialog (``finding``)."""
        return filter_choices(self)

    def filter_keys(self) -> list[tuple[str, str]]:
        """The filter's keys with their labels, before counts."""
        choices = [("all", "all items"), ("not-correct", f"not correct ({', '.join(WRONG)})")]
        choices += [(s, f"status {s}") for s in (*STATUSES, "pending")]
        choices += [("annotated", "annotated by you"), ("unreviewed", "not correct and not reviewed by you"),
                    ("unlabelled", "not reviewed by you")]
        if self.study:
            choices.insert(1, ("study", f"the study's {len(self.study)} items"))
        if self.blind:  # a tag filter would show the automatic tags
            return choices
        seen = {t.code for t in self.taxonomy()}
        for record in self.records.values():
            seen.update(record.get("tags", []))
        labels = {t.code: t.label for t in self.taxonomy()}
        ordered = [t.code for t in self.taxonomy()] + sorted(seen - set(labels))
        choices += [(f"tag:{code}", f"tag {code} ({labels.get(code, code)})") for code in ordered]
        return choices

    def keeps(self, index: int) -> bool:
        f = self.filter
        if f != "all":
            status = self.status(index)
            if f == "not-correct":
                if status not in WRONG:
                    return False
            elif f in STATUS_RANK:
                if status != f:
                    return False
            elif f == "study":
                if index not in self._study_set:
                    return False
            elif f == "unlabelled":
                if self.reviewed(index):
                    return False
            elif f == "annotated":
                if self.ids[index] not in self.marks:
                    return False
            elif f == "unreviewed":
                mark = self.marks.get(self.ids[index])
                if status not in WRONG or (mark and mark.reviewed):
                    return False
            elif f.startswith("tag:"):
                if self.blind or f[4:] not in self.tags(index).codes:
                    return False
            elif f.startswith(FIELD):
                if not self.fields.matches(f, index):
                    return False
            elif f.startswith("reviewer:"):
                mark = self.annotations.marks(f[9:]).get(self.ids[index])
                if not (mark and mark.reviewed):
                    return False
        if self.query and self.query not in self.haystack(index):
            return False
        return True

    def haystack(self, index: int) -> str:
        """What search looks through: the id, the item's text inputs and the outputs."""
        text = self._haystack.get(index)
        if text is None:
            item = self.items[index]
            parts = [item.id] + [v for v in item.inputs.values() if isinstance(v, str)]
            record = self.record(index)
            if record:
                parts += [o for o in record.get("outputs", []) if isinstance(o, str)]
            text = self._haystack[index] = "\n".join(parts).lower()
        return text

    def recompute(self) -> Sequence[int]:
        """The listed items in list order: a range while nothing filters or sorts them, else an array
        (8 bytes an item, where a list of ints held 36 at 100,000 items)."""
        filtered, key = self.filter != "all" or bool(self.query), self._sort_key()
        if not filtered and key is None:
            self.order = range(self.total)
            return self.order
        order = [i for i in range(self.total) if self.keeps(i)] if filtered else list(range(self.total))
        if key is not None:
            order.sort(key=key)
        self.order = array("q", order)
        return self.order

    def _sort_key(self) -> Callable[[int], Any] | None:
        """How the list is sorted (ties by index); None: by index."""
        if self.sort == "status":
            return lambda i: (STATUS_RANK.get(self.status(i), 5), i)
        if self.sort == "score":
            return lambda i: (s if (s := self.main_score(i)) is not None else float("inf"), i)
        if self.sort.startswith(SORT_FIELD):
            return lambda i: (self.fields.sort_value(self.sort, i), i)
        return None

    def set_filter(self, key: str) -> None:
        self.filter = key
        self.recompute()

    def set_query(self, query: str) -> None:
        self.query = query.strip().lower()
        self.recompute()

    def sort_choices(self) -> list[tuple[str, str]]:
        """Every order the list can take: index, status, score, then each item field."""
        return [("index", "run order"), ("status", "status (errors first)"),
                ("score", f"score ({self.score_key}, lowest first)")] + self.fields.sort_choices()

    def set_sort(self, key: str) -> None:
        self.sort = key
        self.recompute()

    def next_wrong(self, position: int, step: int) -> int | None:
        """The position in ``order`` of the next (step=1) or previous (-1) wrong item."""
        pos = position + step
        while 0 <= pos < len(self.order):
            if self.status(self.order[pos]) in WRONG:
                return pos
            pos += step
        return None

    def counts(self) -> dict[str, int]:
        """Items per status, pending included: kept by ``take``, not counted on each redraw of the header."""
        counts = {s: 0 for s in STATUS_RANK}
        counts.update((status, n) for status, n in self._statuses.items() if n)
        counts["pending"] = self.total - len(self.records)
        return counts
