"""A report reads rows of equal results, not items, for an engine that names what its report reads of an item.

``EngineParts.report_keys`` names the meta keys an engine's aggregate (and its paper record) read;
each result keeps them (``Engine.report_meta``, in its record and index line), so a report
(``load_results`` with ``rows_except``) makes one ``ItemResult`` per distinct status, scores, tags
and keys, and reads only the annotated items. These tests hold the figures to those of a report
that reads every item, on runs whose items vary in every key the engines group by.
"""

from __future__ import annotations

import json

import pytest

from cli_support import n2f
from sessions.reports import report as report_module
from sessions.reports.report import build_report
from sessions.store import runs as runs_module
from sessions.store.results import ReportMeta, UndeclaredReportKey, load_results
from sessions.store.runs import RunStore
from sessions.study import final_tags

RUNS = {  # engine -> settings whose items differ in the keys its report groups by
    "dedc": ("-s", "names=anomalous"),  # graph types, and a gap or not (gap=base)
    "logic": ("-s", "r_step=0.25"),  # clause ratios and counts
    "robogrid": ("-s", "task=judge,goal,instruct", "-s", "depth=5,10", "-s", "style=block,c", "-s", "count=20"),
}


def annotate(store: RunStore) -> list[str]:
    """Remove a wrong item's first tag, add one to another, settle a third: the review changes counts."""
    summaries = store.summaries()
    ids = store.item_ids()
    wrong = [i for i, s in summaries.items() if s["status"] != "correct" and s["tags"]][:2]
    right = next(i for i, s in summaries.items() if s["status"] == "correct")
    log = store.annotations()
    log.add(ids[wrong[0]], "tag_remove", code=summaries[wrong[0]]["tags"][0])
    log.add(ids[wrong[1]], "tag_add", code="made_up", label="Made up")
    log.add(ids[right], "reviewed")
    log.close()
    return [ids[wrong[0]], ids[wrong[1]], ids[right]]


def every_item_its_own(monkeypatch):
    """Reports that read every item, as they did before rows."""
    real = final_tags.load_final_results
    monkeypatch.setattr(final_tags, "load_final_results", lambda store, rows=False: real(store))


@pytest.mark.parametrize("engine", sorted(RUNS))
def test_a_report_from_rows_is_the_report_from_every_item(engine, monkeypatch):
    n2f("run", engine, "-n", "240", "-q", "--name", "rows", "-m", "sim:error_rate=0.6", *RUNS[engine], check=True)
    store = RunStore.open("rows")
    annotated = annotate(store)
    read: list[int] = []
    real_briefs = runs_module.RunStore.iter_brief_items_at

    def briefs(self, indices):
        for index, item in real_briefs(self, indices):
            read.append(index)
            yield index, item

    monkeypatch.setattr(runs_module.RunStore, "iter_brief_items_at", briefs)
    monkeypatch.setattr(report_module, "read_kept", lambda store, key: None)
    rows_report, rows_summary = build_report(RunStore.open("rows"))
    assert len(read) == len(annotated)  # the annotated items alone were read
    run = load_results(RunStore.open("rows"), rows_except=())
    assert all(isinstance(r.item.meta, ReportMeta) and not r.item.id for r in run.results)
    assert len({id(r) for r in run.results}) < len(run.results)  # equal results are one row

    every_item_its_own(monkeypatch)
    read.clear()
    items_report, items_summary = build_report(RunStore.open("rows"))
    assert len(read) == len(run.results)
    assert json.dumps(rows_summary, sort_keys=True) == json.dumps(items_summary, sort_keys=True)
    assert rows_summary["review"]["reviewed"] == len(annotated) and rows_report.metrics == items_report.metrics


def test_the_keys_go_where_the_report_groups():
    """dedc's accuracy-by tables group by what each result kept of its item."""
    n2f("run", "dedc", "-n", "120", "-q", "--name", "grouped", "-m", "sim", check=True)
    store = RunStore.open("grouped")
    summaries = store.summaries()
    items = store.brief_items()
    assert all(s["keys"] == {k: items[i].meta[k] for k in ("graph_type", "gap")} for i, s in summaries.items())
    by_gap = next(t for t in build_report(store)[0].tables if t.name == "by gap")
    assert sorted(row[0] for row in by_gap.rows) == ["False", "True"]  # the base setting samples gaps


def test_a_report_reading_a_key_its_engine_did_not_name_fails_loudly():
    meta = ReportMeta({"gap": "0", "graph_type": None}, ("gap", "graph_type"))  # None: the item had no graph_type
    assert meta.get("gap") == "0" and meta.get("graph_type", "?") == "?" and "graph_type" not in meta
    assert dict(meta) == {"gap": "0"} and len(meta) == 1
    with pytest.raises(UndeclaredReportKey, match="depth"):
        meta.get("depth")
    with pytest.raises(UndeclaredReportKey):
        "depth" in meta  # noqa: B015 - the look-up is the test


@pytest.mark.parametrize("kept", ["none", "fewer"])
def test_a_run_whose_results_kept_no_keys_reads_its_items_until_rescored(kept):
    """A run from before results kept their keys, or kept fewer than the engine's report now reads (code that
    grouped by less), reports from its items; ``n2f rescore`` gives them the keys."""
    n2f("run", "dedc", "-n", "60", "-q", "--name", "older", "-m", "sim:error_rate=0.5", check=True)
    store = RunStore.open("older")
    store.acquire()
    records = store.results()
    for record in records.values():
        if kept == "none":
            del record["keys"]
        else:
            del record["keys"]["gap"]
    store.replace_all_results(records)
    store.close()
    before = build_report(RunStore.open("older"))[1]
    older = load_results(RunStore.open("older"), rows_except=())
    assert len({id(r) for r in older.results}) == 60  # every item read, as before rows

    n2f("rescore", "older", check=True)
    rescored = load_results(RunStore.open("older"), rows_except=())
    assert all(isinstance(r.item.meta, ReportMeta) for r in rescored.results)
    assert len({id(r) for r in rescored.results}) < 60
    after = build_report(RunStore.open("older"))[1]
    assert after["metrics"] == before["metrics"] and after["tags"] == before["tags"]
