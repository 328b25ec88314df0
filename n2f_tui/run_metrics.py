"""The engine's headline metrics over a run's results so far, for the run screen's header."""

from __future__ import annotations

from typing import Any

from engines.core import ItemResult, RunResults, Tag
from n2f_tui.state import RunState

BULK_READ = 500  # more changed records than this: one pass over the log beats one read each


def engine_metrics(state: RunState, cache: dict[int, tuple[int, ItemResult]]) -> dict[str, Any]:
    """The engine's report metrics over the results so far (pure: runs in a thread).

    ``cache`` keeps each item's ItemResult between calls (keyed by the record's version),
    so a live run pays for reading and converting each record once, not once per refresh;
    the first call reads the whole log in one pass.
    """
    versions = dict(state.versions)
    stale = [i for i in list(state.records) if (hit := cache.get(i)) is None or hit[0] != versions.get(i, 0)]
    if stale:
        bulk = len(stale) > BULK_READ
        full = state.store.results() if bulk else {i: state.store.record(i) for i in stale}
        items = state.store.brief_items() if bulk else state.items
        for index in stale:
            record = full.get(index)
            if record is None:
                continue
            cache[index] = (versions.get(index, 0), ItemResult(
                item=items[index], status=record.get("status", "error"), scores=dict(record.get("scores", {})),
                tags=[Tag.from_json(t) for t in record.get("tags", [])], outputs=list(record.get("outputs", []))))
    results = [cache[i][1] for i in sorted(cache)]
    run = RunResults(name=state.store.label, model=state.store.meta.get("model", ""), settings=state.settings,
                     results=results)
    return dict(state.engine.report(run, []).metrics)
