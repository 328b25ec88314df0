"""The engine's headline metrics over a run's results so far, for the run screen's header."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from engines.core import ItemResult, RunResults
from n2f_tui.state import RunState
from sessions import api
from sessions.store.results import ResultMaker
from sessions.store.runs import RunStore

BULK_READ = 500  # more changed records than this: one pass over the log beats one read each


def header_metrics(state: RunState, cache: dict[int, tuple[int, ItemResult]], going_on: bool) -> dict[str, Any]:
    """The engine's headline metrics for the run screen's header (pure but for reading the store: runs in a
    thread). A run going on: over its results so far (``engine_metrics``, ``cache`` kept for the next
    call). Any other: its report's metrics (``api.report_metrics``: read from the run's kept report, or
    made once and kept), ``cache`` emptied: working them out from every result took a second of CPU
    on a 100,000-item run, in a thread the keys wait on, each time a finished run was opened."""
    if going_on:
        return engine_metrics(state, cache)
    cache.clear()
    return api.report_metrics(RunStore(state.store.folder))


def engine_metrics(state: RunState, cache: dict[int, tuple[int, ItemResult]]) -> dict[str, Any]:
    """The engine's report metrics over the results so far (pure: runs in a thread).

    ``cache`` keeps each item's ItemResult between calls (keyed by the record's version),
    so a live run pays for converting each result once, not once per refresh. The results
    are made as the report's (``sessions.store.results.load_results``): from the summaries
    the state holds and the items' briefs, the full records read (one at a time) only for an
    engine whose report reads outputs, so a 100,000-item run's header costs no record and
    no item's inputs.
    """
    versions = dict(state.versions)
    stale = [i for i in list(state.records) if (hit := cache.get(i)) is None or hit[0] != versions.get(i, 0)]
    if stale:
        _convert(state, cache, stale, versions)
    return _metrics(state, cache)


def _convert(state: RunState, cache: dict[int, tuple[int, ItemResult]], stale: list[int],
             versions: Mapping[int, int]) -> None:
    """Make the ItemResults of the ``stale`` items into ``cache`` (as ``load_results`` makes them)."""
    wanted = set(stale)
    items = (dict(state.store.iter_brief_items_at(wanted)) if len(stale) > BULK_READ
             else {i: state.items[i] for i in stale})
    result = ResultMaker(state.labels())
    converted: Iterable[tuple[int, Mapping[str, Any], Sequence[str], list[str] | None]]
    if state.engine.report_reads_outputs:
        found: Iterable[tuple[int, Mapping[str, Any] | None]] = (
            ((i, r) for i, r in state.store.iter_results() if i in wanted) if len(stale) > BULK_READ
            else ((i, state.store.record(i)) for i in stale))
        converted = ((i, r, [str(t["code"]) for t in r.get("tags", [])], list(r.get("outputs", [])))
                     for i, r in found if r is not None)
    else:
        converted = ((i, s, s.get("tags", ()), None) for i in stale if (s := state.records.get(i)) is not None)
    for index, entry, codes, outputs in converted:
        if index in items:
            cache[index] = (versions.get(index, 0), result(items[index], entry, codes, outputs))


def _metrics(state: RunState, cache: dict[int, tuple[int, ItemResult]]) -> dict[str, Any]:
    results = [cache[i][1] for i in sorted(cache)]
    run = RunResults(name=state.store.label, model=state.store.meta.get("model", ""), settings=state.settings,
                     results=results)
    return dict(state.engine.report(run, []).metrics)
