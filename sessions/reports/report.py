"""A run's report: the engine's tables with the fields every report has, people's final tags counted.

The summary's fields (engine, model, n, counts, accuracy with its interval, usage, cache,
provenance, the paper block) are the same for every engine, so ``report --json``, the
report screen and the table formats read one shape. The figures that come from the
results are read from the run's kept report when it was made in the run's present state
(``sessions.reports.kept_report``), and kept for the next report when they are computed.
"""

from __future__ import annotations

from typing import Any, Sequence

from engines.contract import Engine
from sessions.collector import collector_paused
from sessions.errors import InputError
from sessions.reports.kept_report import KeptReport, keep, read_kept, report_key
from sessions.run.prepare import price_of
from sessions.store.results import run_settings
from sessions.store.runs import RunStore


def build_report(store: RunStore, against: Sequence[RunStore] = ()) -> tuple[Any, dict[str, Any]]:
    """The engine's report plus the fields every report has (engine, model, n, counts, accuracy, tags);
    built with the collector paused (sessions.collector): the records read are garbage only after it."""
    with collector_paused():
        return _build_report(store, against)


def _build_report(store: RunStore, against: Sequence[RunStore]) -> tuple[Any, dict[str, Any]]:
    from sessions.reports.describe import describe_run

    engine, _ = run_settings(store)
    for other in against:
        if other.meta["engine"] != engine.name:
            raise InputError(f"run {other.label} is a {other.meta['engine']} run; cannot report it against {engine.name}")
    kept, paired = _results_figures(store, engine, against) if against else (_kept_figures(store, engine), [])
    report, figures = kept.report, kept.figures
    summaries = store.summaries()
    usage = summaries.usage().to_json(price_of(store))
    total = int(store.meta.get("total", figures["done"]))
    reasons = [r for item_reasons in summaries.column("finish_reasons", ()) for r in item_reasons]
    cache = {"replies": sum(map(int, summaries.column("replies", 0))), "cached": sum(map(int, summaries.column("cached", 0)))}
    summary = {
        "run": store.id,
        "name": store.meta.get("name", ""),
        "engine": engine.name,
        "model": store.meta.get("model", ""),
        "settings": store.meta.get("settings", {}),
        "description": describe_run(store.meta).to_json(),
        "seed": store.meta.get("seed"),
        "provenance": store.meta.get("provenance"),  # revision, dataset hashes, OS and Python, cache counts
        "status": store.meta.get("status", ""),
        "n": total,
        "counts": {**figures["counts"], "pending": total - figures["done"]},
        "accuracy": figures["accuracy"],
        "accuracy_ci": figures["accuracy_ci"],  # 95% Wilson interval, the same for every engine
        **figures["review"],
        "metrics": report.metrics,
        "usage": usage,
        # replies whose backend reported a finish reason, and how many of them the reply cap cut
        "replies": {"reported": len(reasons), "truncated": reasons.count("length"),
                    "max_tokens": store.meta.get("params", {}).get("max_tokens")},
        "cache": cache,  # model replies, and how many of them the response cache served (no tokens spent)
        "served": store.meta.get("served", []),  # the model ids and fingerprints the server reported
        "against": [o.label for o in against],
        "paired": [comparison.to_json() for comparison in paired],
        **({"sandbox": store.meta["sandbox"]} if "sandbox" in store.meta else {}),  # the isolation programs ran under
        **{k: v for k, v in report.to_json().items() if k != "metrics"},
        "paper": figures["paper"],
    }
    return report, summary


def report_metrics(store: RunStore) -> dict[str, float]:
    """The engine's headline metrics of the run as it is, as its report has them: what the inspector's
    header shows of a run that is not going on. Read from the run's kept report (made and kept here
    when there is none of the run's present state), so that opening a finished run costs what the
    header shows, where working them out again read every result (a second of CPU at 100,000 items,
    in a thread the keys wait on)."""
    with collector_paused():
        engine, _ = run_settings(store)
        return dict(_kept_figures(store, engine).report.metrics)


def _kept_figures(store: RunStore, engine: Engine[Any]) -> KeptReport:
    """The run's report figures kept for its present state, or computed from its results and kept."""
    key = report_key(store, engine)
    found = read_kept(store, key)
    if found is None:
        found, _ = _results_figures(store, engine, ())
        if report_key(store, engine) == key:  # a run written meanwhile: its figures are of no one state
            keep(store, key, found)
    return found


def _results_figures(store: RunStore, engine: Engine[Any], against: Sequence[RunStore]) -> tuple[KeptReport, list[Any]]:
    """The report's figures computed from the run's results (and the paired comparisons with ``against``)."""
    from engines.reporting import accuracy, accuracy_interval, status_counts
    from sessions.reports.papers import paper_block
    from sessions.study.final_tags import load_final_results, review_summary
    from sessions.study.paired import paired_comparison

    run, labels = load_final_results(store, rows=not against)  # a comparison pairs items by id
    others = [load_final_results(other)[0] for other in against]
    report = engine.report(run, others)
    paired = [paired_comparison(engine, run, other) for other in others]
    report.tables += [comparison.table() for comparison in paired]
    review = review_summary(report, run.results, labels, {t.code: t.label for t in engine.taxonomy()})
    figures = {"counts": status_counts(run.results), "done": len(run.results), "accuracy": accuracy(run.results),
               "accuracy_ci": accuracy_interval(run.results), "review": review,
               "paper": paper_block(engine.name, run, report.metrics)}
    return KeptReport(report, figures), paired
