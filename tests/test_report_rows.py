"""A report reads rows of equal results, not items, for an engine that names what its report reads of an item.

``EngineParts.report_keys`` names the meta keys an engine's aggregate (and its paper record) read;
``items.keys`` holds them for every item, so a report (``load_results`` with ``rows_except``) makes
one ``ItemResult`` per distinct status, scores, tags and keys, and reads only the annotated items. These tests hold the figures to those of a report
that reads every item, on runs whose items vary in every key the engines group by.
"""

from __future__ import annotations

import json

import pytest

from cli_support import n2f
from sessions.reports import report as report_module
from sessions.reports.report import build_report
from sessions.store import runs as runs_module
from sessions.store.item_keys import ITEM_KEYS, KeysWriter, read_item_keys
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


def reading_briefs(monkeypatch) -> list[int]:
    """The indices of every brief item read from now on."""
    read: list[int] = []
    real = runs_module.RunStore.iter_brief_items_at

    def briefs(self, indices):
        for index, item in real(self, indices):
            read.append(index)
            yield index, item

    monkeypatch.setattr(runs_module.RunStore, "iter_brief_items_at", briefs)
    return read


@pytest.mark.parametrize("engine", sorted(RUNS))
def test_a_report_from_rows_is_the_report_from_every_item(engine, monkeypatch):
    n2f("run", engine, "-n", "240", "-q", "--name", "rows", "-m", "sim:error_rate=0.6", *RUNS[engine], check=True)
    store = RunStore.open("rows")
    annotated = annotate(store)
    read = reading_briefs(monkeypatch)
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
    """``items.keys``, written with the items, gives each item dedc's graph type and gap, which its accuracy-by
    tables group by."""
    n2f("run", "dedc", "-n", "120", "-q", "--name", "grouped", "-m", "sim", check=True)
    store = RunStore.open("grouped")
    known = read_item_keys(store, ("graph_type", "gap"))
    assert known is not None and len(known.codes) == store.total == 120
    assert [known.values[code] for code in known.codes] == [
        {"graph_type": item.meta["graph_type"], "gap": item.meta["gap"]} for item in store.brief_items()]
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


@pytest.mark.parametrize("kept", ["none", "other keys", "cut"])
def test_a_run_without_its_item_keys_has_them_made_by_its_first_report(kept, monkeypatch):
    """A run from before ``items.keys``, one whose file names other keys (code whose report grouped by less),
    or a damaged one: the first report reads every item once and keeps the file; the next reads none."""
    n2f("run", "dedc", "-n", "60", "-q", "--name", "older", "-m", "sim:error_rate=0.5", check=True)
    folder = RunStore.open("older").folder
    monkeypatch.setattr(report_module, "read_kept", lambda store, key: None)
    before = build_report(RunStore.open("older"))[1]
    if kept == "none":
        (folder / ITEM_KEYS).unlink()
    elif kept == "other keys":
        writer = KeysWriter(("graph_type",))
        for item in RunStore.open("older").brief_items():
            writer.add(item.meta)
        (folder / ITEM_KEYS).write_bytes(writer.to_bytes())
    else:
        (folder / ITEM_KEYS).write_bytes((folder / ITEM_KEYS).read_bytes()[:-3])
    read = reading_briefs(monkeypatch)
    assert build_report(RunStore.open("older"))[1] == before
    assert sorted(read) == list(range(60))
    read.clear()
    assert build_report(RunStore.open("older"))[1] == before and read == []
    assert read_item_keys(RunStore.open("older"), ("graph_type", "gap")) is not None


def test_a_store_the_reader_may_not_write_reports_all_the_same(monkeypatch):
    n2f("run", "dedc", "-n", "30", "-q", "--name", "readonly", "-m", "sim:error_rate=0.5", check=True)
    folder = RunStore.open("readonly").folder
    (folder / ITEM_KEYS).unlink()

    def refuse(path, chunks):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("sessions.store.item_keys.replace_unsynced", refuse)
    first = build_report(RunStore.open("readonly"))[1]
    assert not (folder / ITEM_KEYS).exists()
    assert build_report(RunStore.open("readonly"))[1] == first
