"""A stored run as its engine reads it back: the engine and settings it was made with, its results.

Everything that reads a run for figures (reports, studies, agreement, comparisons) starts here,
below the front ends' facade, so that no module of a feature imports ``sessions.api``.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from engines import get_engine
from engines.contract import Engine
from engines.core import Item, ItemResult, RunResults, Tag, settings_from_json
from sessions.store.runs import RunStore


def run_settings(store: RunStore) -> tuple[Engine[Any], Any]:
    engine = get_engine(store.meta["engine"])
    return engine, settings_from_json(engine.settings_type, store.meta.get("settings", {}))


class ResultMaker:
    """Makes a run's ItemResults as its report reads them, for every reader of the report's figures
    (``load_results``, the inspector's header): tags shared per code and labelled from ``labels``,
    equal tag lists one list, and the outputs no report reads one empty list; the scores are the
    summaries' own. All of it read-only, as the briefs are: a list per item was 13 MB at 100,000
    items, and the header's copied scores as much again."""

    def __init__(self, labels: Mapping[str, str]):
        self._labels = labels
        self._tags: dict[str, Tag] = {}
        self._lists: dict[tuple[str, ...], list[Tag]] = {}
        self._unread: list[str] = []

    def __call__(self, item: Item, entry: Mapping[str, Any], codes: Sequence[str],
                 outputs: list[str] | None = None) -> ItemResult:
        tags = self._lists.get(key := tuple(codes))
        if tags is None:
            tags = self._lists[key] = [self._tag(code) for code in codes]
        return ItemResult(item=item, status=entry.get("status", "error"), scores=entry.get("scores", {}),
                          tags=tags, outputs=self._unread if outputs is None else outputs)

    def _tag(self, code: str) -> Tag:
        tag = self._tags.get(code)
        if tag is None:
            tag = self._tags[code] = Tag(code=code, label=self._labels.get(code, code))
        return tag


def load_results(store: RunStore) -> RunResults:
    """The run as its engine's report sees it.

    Reports group by ``item.meta``, name items by id and count tags by code; they never
    read an item's inputs or gold, a step's trace or a tag's evidence. So the results
    come from the index's summaries (status, scores, tag codes) and brief items, and the
    full records are read only for an engine whose report reads replies or tool results
    (``report_reads_outputs``): a 100,000-item dedc report parses no record at all. Only
    the items with a result are read (their briefs): a run mostly pending costs its results.
    Tags are labelled from the taxonomy, as the reports' tables are (``ResultMaker``).
    """
    engine, settings = run_settings(store)
    summaries = store.summaries()
    result = ResultMaker({t.code: t.label for t in engine.taxonomy()})
    if engine.report_reads_outputs:
        items = dict(store.iter_brief_items_at(summaries))
        records = {index: result(items[index], record, [str(t["code"]) for t in record.get("tags", [])],
                                 list(record.get("outputs", [])))
                   for index, record in store.iter_results()}
        results = [records[i] for i in sorted(records)]
    else:  # the summaries and the briefs read come in item order: no table of the items by index is made
        briefs = store.iter_brief_items_at(summaries)
        results = [result(_brief_at(briefs, index), summary, summary.get("tags", ()))
                   for index, summary in summaries.items()]
    return RunResults(name=store.label, model=store.meta.get("model", ""), settings=settings, results=results)


def _brief_at(briefs: Iterator[tuple[int, Item]], index: int) -> Item:
    """The next brief item read, which is the one at ``index`` as both walks go in item order (one
    past the items of the run has none: KeyError, as a lookup by index raised)."""
    for number, item in briefs:
        if number == index:
            return item
    raise KeyError(index)

