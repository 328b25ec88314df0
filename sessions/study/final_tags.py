"""The final tags in a report: each annotated item's tags replaced by its final tags (``sessions.study.labels``).

Reports, charts and the engines' error-type tables count what ``load_results`` hands
them, so replacing the tags there is what makes every count follow the human review.
The summary keeps the automatic counts beside the final ones, and tags on items judged
correct are counted apart: they are not errors of the model (a ``format_violation`` on a
correct item is a remark, not a failure).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

from engines.core import UNJUDGED, ItemResult, Report, RunResults, Table, Tag
from engines.reporting import counted, keep
from sessions.study.annotations import AnnotationLog
from sessions.store.results import load_results, run_settings
from sessions.study.labels import RunLabels, annotated_items, annotated_places, run_labels
from sessions.store.runs import RunStore


def apply_final_tags(results: Sequence[ItemResult], log: AnnotationLog, names: Mapping[str, str]) -> RunLabels:
    """Replace, in place, the tags of every annotated item by its final tags; return the run's labels.

    ``names`` (code -> label, the engine's taxonomy) labels codes a person added.
    """
    annotated = annotated_items(log)  # the results of no other item are looked at: a dict of all was 8 MB at 50,000
    by_id = {r.item.id: r for r, _ in counted(results) if r.item.id in annotated}
    labels = run_labels(log, {i: [t.code for t in r.tags] for i, r in by_id.items()}, list(by_id))
    known = {**labels.names, **names}
    for item_id, item_labels in labels.items.items():
        result = by_id[item_id]
        if item_labels.final == item_labels.auto:
            continue
        kept = [t for t in result.tags if t.code in item_labels.final]
        added = sorted(item_labels.final - {t.code for t in kept})
        result.tags = kept + [Tag(code=code, label=known.get(code, code), source="manual") for code in added]
    return labels


def load_final_results(store: RunStore, rows: bool = False) -> tuple[RunResults, RunLabels]:
    """``api.load_results`` with each annotated item's final tags, and the run's labels. With ``rows``, the
    results of items no one annotated may be shared rows of no id (``load_results``' ``rows_except``)."""
    engine, _ = run_settings(store)
    log = store.annotations()
    try:
        run = load_results(store, annotated_places(store, annotated_items(log)).values() if rows else None)
        labels = apply_final_tags(run.results, log, {t.code: t.label for t in engine.taxonomy()})
    finally:
        log.close()
    return run, labels


def _counts(results: Sequence[ItemResult], codes_of: Callable[[ItemResult], Iterable[str]]) -> Counter[str]:
    """Items per code, of the codes ``codes_of`` gives each result (a row counts its items)."""
    counter: Counter[str] = Counter()
    for result, n in counted(results):
        for code in set(codes_of(result)):
            counter[code] += n
    return counter


def review_summary(report: Report, results: Sequence[ItemResult], labels: RunLabels,
                   taxonomy: Mapping[str, str]) -> dict[str, Any]:
    """The report's review fields; adds to ``report`` the table of automatic vs final counts per tag
    and, once items are reviewed, the tagger's quality.

    The counts are of items that are not correct (and not infrastructure errors); a tag on
    a correct item goes to ``tags_on_correct``.
    """
    judged = keep(results, lambda r: r.status != "correct" and r.status not in UNJUDGED)
    auto_of = {item_id: item.auto for item_id, item in labels.items.items()}
    final = _counts(judged, lambda r: [t.code for t in r.tags])
    auto = _counts(judged, lambda r: auto_of.get(r.item.id, [t.code for t in r.tags]))
    on_correct = _counts(keep(results, lambda r: r.status == "correct"), lambda r: [t.code for t in r.tags])
    codes = list(taxonomy) + sorted((set(final) | set(auto) | set(on_correct)) - set(taxonomy))
    counts = labels.counts()
    fields = {
        "tags": _sorted(final),
        "tags_automatic": _sorted(auto),
        "tags_on_correct": _sorted(on_correct),
        "review": {**counts, "annotators": labels.annotators, "items": len(results)},
    }
    rows = [[{**labels.names, **taxonomy}.get(code, code), code, auto.get(code, 0) or "-", final.get(code, 0) or "-",
             on_correct.get(code, 0) or "-"] for code in codes]
    note = (f"{counts['reviewed']} of {len(results)} scored item(s) reviewed, {counts['settled']} settled, "
            f"{counts['disputed']} disputed (disputed items keep their automatic tags until settled); "
            f"automatic and final count items not judged correct")
    table = Table(name="Review", title="Error tags: automatic vs final (items per tag)",
                  columns=["error type", "code", "automatic", "final", "on correct items"], rows=rows, note=note)
    quality = quality_table(results, labels, taxonomy)
    report.tables += [table] + ([quality] if quality is not None else [])
    return fields


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def quality_table(results: Sequence[ItemResult], labels: RunLabels, taxonomy: Mapping[str, str]) -> Table | None:
    """The automatic tagger against the final tags of reviewed items, per code (None before any review)."""
    from sessions.study.agreement import tagger_quality
    from sessions.reports.figures import figure

    statuses = {r.item.id: r.status for r, _ in counted(results) if r.item.id in labels.items}  # labelled only
    rows, n, reference = tagger_quality(labels, statuses, dict(taxonomy))
    if not n:
        return None
    body = [[q.label, q.code, q.tp, q.fp, q.fn, figure(q.precision, q.precision_ci), figure(q.recall, q.recall_ci),
             figure(q.f1, q.f1_ci)] for q in rows if q.tp + q.fp + q.fn]
    return Table(name="Tagger quality", title=f"Automatic tags against {reference} ({n} item(s))",
                 columns=["error type", "code", "tp", "fp", "fn", "precision (95% CI)", "recall (95% CI)",
                          "F1 (95% CI)"], rows=body, note="intervals: 1,000 bootstrap draws over the reviewed items")
