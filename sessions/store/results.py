"""A stored run as its engine reads it back: the engine and settings it was made with, its results.

Everything that reads a run for figures (reports, studies, agreement, comparisons) starts here,
below the front ends' facade, so that no module of a feature imports ``sessions.api``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Collection, Iterator, Mapping, Sequence

from engines import get_engine
from engines.contract import Engine
from engines.core import Item, ItemResult, RunResults, Tag, settings_from_json
from engines.reporting import Rows
from sessions.store.item_keys import item_keys
from sessions.store.runs import RunStore
from sessions.store.summary_table import SummaryTable


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


def load_results(store: RunStore, rows_except: Collection[int] | None = None) -> RunResults:
    """The run as its engine's report sees it.

    Reports group by ``item.meta``, name items by id and count tags by code; they never
    read an item's inputs or gold, a step's trace or a tag's evidence. So the results
    come from the index's summaries (status, scores, tag codes) and brief items, and the
    full records are read only for an engine whose report reads replies or tool results
    (``report_reads_outputs``): a 100,000-item dedc report parses no record at all. Only
    the items with a result are read (their briefs): a run mostly pending costs its results.
    Tags are labelled from the taxonomy, as the reports' tables are (``ResultMaker``).

    Given ``rows_except``, an engine that names what its report reads of an item
    (``EngineParts.report_keys``) reads no item at all: those keys come from ``items.keys``, equal
    results are one ``ItemResult`` of no id (``report_rows``), and only the items at
    ``rows_except`` (the annotated ones, whose tags the review replaces) are read and made apart.
    Without it (a comparison pairs items by id) every result is its item's.
    """
    engine, settings = run_settings(store)
    summaries = store.summaries()
    result = ResultMaker({t.code: t.label for t in engine.taxonomy()})
    keys = None if rows_except is None else engine.parts.report_keys
    results = (_item_results(store, engine, summaries, result) if keys is None or rows_except is None
               else report_rows(store, summaries, result, keys, rows_except))
    return RunResults(name=store.label, model=store.meta.get("model", ""), settings=settings, results=results)


def _item_results(store: RunStore, engine: Engine[Any], summaries: SummaryTable, result: ResultMaker) -> list[ItemResult]:
    """Every result of its own item, with its replies for an engine whose report reads them."""
    if engine.report_reads_outputs:
        items = dict(store.iter_brief_items_at(summaries))
        records = {index: result(items[index], record, [str(t["code"]) for t in record.get("tags", [])],
                                 list(record.get("outputs", [])))
                   for index, record in store.iter_results()}
        return [records[i] for i in sorted(records)]
    # the summaries and the briefs read come in item order: no table of the items by index is made
    briefs = store.iter_brief_items_at(summaries)
    return [result(_brief_at(briefs, index), summary, summary.get("tags", ())) for index, summary in summaries.items()]


_MISSING: dict[str, Any] = {"status": "error", "scores": {}, "tags": ()}  # what a summary without the key has


def report_rows(store: RunStore, summaries: SummaryTable, result: ResultMaker, keys: tuple[str, ...],
                own: Collection[int]) -> Rows:
    """The results as ``Rows``: those with the same status, scores, tags and report keys one ``ItemResult`` of
    an item with no id whose meta holds those keys (``ReportMeta``, from ``items.keys``); the items at ``own``
    each their own, of their brief item. The summary table keeps equal statuses, tag lists and small score
    tables once, so a row is told by the identities of its parts and counted in C: a 50,000-item dedc run is
    some 450 rows, where reading an item for each result was 0.5 s of CPU and 24 MB."""
    def column(key: str) -> Iterator[Any]:
        return summaries.column(key, _MISSING[key])

    known = item_keys(store, keys)
    metas = [ReportMeta(values, keys) for values in known.values]
    shared = [dict(zip(map(id, column(key)), column(key))) for key in ("scores", "tags")]
    tally: Counter[tuple[Any, ...]] = Counter(zip(column("status"), map(id, column("scores")), map(id, column("tags")),
                                                  map(known.codes.__getitem__, summaries)))
    mine = dict(store.iter_brief_items_at(sorted(set(own).intersection(summaries))))
    pairs: list[tuple[ItemResult, int]] = []
    for index, item in mine.items():
        status, scores, codes = (summaries.value(index, key, _MISSING[key]) for key in ("status", "scores", "tags"))
        tally[(status, id(scores), id(codes), known.codes[index])] -= 1
        pairs.append((result(item, {"status": status, "scores": scores}, codes), 1))
    for (status, scores_id, codes_id, number), n in tally.items():
        item = Item(id="", engine=store.meta["engine"], inputs={}, gold={}, meta=metas[number])
        pairs.append((result(item, {"status": status, "scores": shared[0][scores_id]}, shared[1][codes_id]), n))
    return Rows(pairs)


class UndeclaredReportKey(LookupError):
    """A report read an item's meta key its engine does not name in ``EngineParts.report_keys``."""


class ReportMeta(Mapping[str, Any]):
    """An item's meta as a report row holds it: the keys its engine's report reads. Any other key raises
    ``UndeclaredReportKey`` (not KeyError, which ``get`` would answer with its default): a report that
    read one would count every row under the default, where a test of the engine now fails."""

    __slots__ = ("_values", "_declared")

    def __init__(self, values: Mapping[str, Any], declared: tuple[str, ...]):
        self._values = values
        self._declared = declared

    def __getitem__(self, key: str) -> Any:
        if key not in self._declared:
            raise UndeclaredReportKey(f"the report read meta key {key!r}, which its engine's report_keys do not name")
        value = self._values[key]
        if value is None:  # the item has no such key (items.keys holds None)
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return (key for key, value in self._values.items() if value is not None)

    def __len__(self) -> int:
        return sum(value is not None for value in self._values.values())


def _brief_at(briefs: Iterator[tuple[int, Item]], index: int) -> Item:
    """The next brief item read, which is the one at ``index`` as both walks go in item order (one
    past the items of the run has none: KeyError, as a lookup by index raised)."""
    for number, item in briefs:
        if number == index:
            return item
    raise KeyError(index)

