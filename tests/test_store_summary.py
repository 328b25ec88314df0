"""Lists of runs read one small file per run: summary.json kept by the writer, the description kept in meta."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engines.core import Item
from sessions.reports import describe
from sessions.store.results_log import INDEX, RECORDS, ResultsLog
from sessions.store.runs import RunStore
from sessions.store.summary import SUMMARY, summarize

ROOT = Path(__file__).resolve().parents[1]


def make_store(n=6, engine="fake", own=True):
    items = [Item(id=f"it-{i}", engine=engine, inputs={"q": f"question {i}"}, gold={}) for i in range(n)]
    store = RunStore.create(engine=engine, settings={}, seed=0, model="sim", backend={}, items=items,
                            templates={}, concurrency=1)
    if own:
        store.acquire()
    return store


def record(i, status="correct", tokens=0):
    steps = [{"kind": "model", "usage": {"prompt_tokens": tokens, "completion_tokens": 1}}] if tokens else []
    return {"id": f"it-{i}", "index": i, "status": status, "scores": {"s": 1.0}, "tags": [], "outputs": [], "steps": steps}


def index_figures(store: RunStore):
    """The figures as parsed from the whole index, by a fresh reader."""
    return summarize(ResultsLog(store.folder).summaries())


def test_the_writer_keeps_summary_json_equal_to_the_index_through_retries_and_rescores():
    store = make_store()
    store.add_result(0, record(0, "correct", tokens=10))
    store.add_result(1, record(1, "error", tokens=5))
    store.add_result(2, record(2, "scorer_error"))
    store.flush()
    store.add_result(1, record(1, "wrong", tokens=7))  # a retried error: its old status and tokens go
    store.add_result(0, record(0, "wrong"))  # a rescore without tokens
    store.flush()
    reader = RunStore.open(store.id)
    from_file = reader.summary()
    assert from_file == index_figures(store)
    assert (from_file.done, from_file.errors, from_file.accuracy) == (3, 0, 0.0)
    assert (from_file.usage.prompt_tokens, from_file.usage.completion_tokens) == (7, 1)
    assert reader._log._read_to == 0, "a current summary.json is read instead of the index"
    store.close()


def test_a_reader_reads_the_index_when_summary_json_does_not_cover_it():
    store = make_store()
    store.add_result(0, record(0))
    store.flush()
    store.close()
    with open(store.folder / RECORDS, "ab") as records, open(store.folder / INDEX, "ab") as index:
        at = records.tell()  # what a writer of an earlier version appends: no summary.json update
        line = json.dumps(record(3, "wrong")).encode()
        records.write(line + b"\n")
        index.write(json.dumps({"i": 3, "at": at, "len": len(line), "status": "wrong", "scores": {},
                                "tags": [], "attempt": 0}).encode() + b"\n")
    figures = RunStore.open(store.id).summary()
    assert (figures.done, figures.accuracy) == (2, 0.5)
    (store.folder / SUMMARY).write_text("{damaged")
    assert RunStore.open(store.id).summary() == figures
    (store.folder / SUMMARY).unlink()
    assert RunStore.open(store.id).summary() == figures, "a run written before summary.json is read from its index"


def test_a_next_owner_writes_summary_json_for_a_run_that_lacks_it():
    store = make_store()
    store.add_result(0, record(0))
    store.close()
    (store.folder / SUMMARY).unlink()
    owner = RunStore.open(store.id)
    owner.acquire()
    owner.close()
    reader = RunStore.open(store.id)
    assert reader.summary().done == 1 and reader._log._read_to == 0


def test_a_shortened_results_file_is_not_hidden_by_summary_json():
    store = make_store()
    store.add_result(0, record(0))
    store.add_result(1, record(1))
    store.flush()
    store.close()
    os.truncate(store.folder / RECORDS, 10)
    reader = RunStore.open(store.id)
    assert reader.summary().done == 0 and "shorter than its index" in reader.damage


def test_the_description_is_made_at_creation_and_read_without_the_engine(monkeypatch):
    store = make_store(own=False)
    assert store.meta["description"]["text"] == "defaults"

    def no_engine(name):
        raise AssertionError("a stored description needs no engine")

    monkeypatch.setattr(describe, "get_engine", no_engine)
    assert describe.describe_run(store.meta).text == "defaults"
    old = {k: v for k, v in store.meta.items() if k != "description"}  # a run made before it was stored
    with pytest.raises(AssertionError):
        describe.describe_run(old)


PROBE = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and isinstance(args[0], str) else None)
from n2f_tui.cli import main
main(["runs", "--json"])
print(json.dumps({"engines": sorted(m for m in sys.modules if m.startswith("engines.dedc")),
                  "run_files": sorted({p.rsplit("/", 1)[-1] for p in opened if "/runs/" in p})}))
"""


def test_n2f_runs_imports_no_engine_and_opens_only_meta_and_summary_of_each_run():
    for _ in range(2):
        store = make_store(n=50, engine="dedc")
        for i in range(40):
            store.add_result(i, record(i, "correct" if i % 4 else "wrong"))
        store.close()
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.strip().splitlines()
    rows, probe = json.loads(out[0]), json.loads(out[-1])
    assert [(r["done"], r["accuracy"], r["changes"]) for r in rows] == [(40, 0.75, "defaults")] * 2
    assert probe["engines"] == [], "listing runs imports no engine"
    assert probe["run_files"] == ["meta.json", SUMMARY], "one small file per run besides its meta"


def test_a_report_reads_the_briefs_of_the_items_with_results_only(monkeypatch):
    from sessions.store import items as item_files
    from sessions.store.results import load_results

    store = make_store(n=400)
    for i in (3, 50, 399):
        store.add_result(i, record(i, "wrong" if i == 50 else "correct"))
    store.close()
    decoded = []
    real_json = item_files.json

    class Counting:  # the module's json, recording every brief it parses
        @staticmethod
        def loads(text, *args, **kwargs):
            value = real_json.loads(text, *args, **kwargs)
            decoded.extend(value if isinstance(value, list) else [value])
            return value

    monkeypatch.setattr(item_files, "json", Counting)
    monkeypatch.setattr(item_files.RunItems, "items", lambda self: pytest.fail("no item is parsed whole"))
    monkeypatch.setattr("sessions.store.results.run_settings", lambda store: (FakeEngine(), None))
    run = load_results(RunStore.open(store.id))
    assert [(r.item.id, r.status) for r in run.results] == [("it-3", "correct"), ("it-50", "wrong"), ("it-399", "correct")]
    assert [brief["id"] for brief in decoded] == ["it-3", "it-50", "it-399"], decoded


class FakeEngine:
    report_reads_outputs = False

    def taxonomy(self):
        return []


def export_peak(n: int) -> int:
    """Peak traced bytes of an export's store reads (columns, then every record in item order) on an n-item run."""
    import tracemalloc

    from sessions.reports.export import plan_columns
    from sessions.store.places import records_in_item_order

    store = make_store(n=n)
    for i in range(n):
        store.add_result(i, {**record(i), "outputs": ["x" * 200]})
    store.close()
    reader = RunStore.open(store.id)
    tracemalloc.start()
    try:
        columns = plan_columns([reader])
        seen = sum(1 for r in records_in_item_order(reader) if r is not None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (columns.scores, seen) == (["s"], n)
    return peak


def test_an_export_reads_a_run_in_memory_that_does_not_grow_with_it():
    """Only where each record lies grows with the run (24 bytes an item here); a summary is about 700."""
    small, large = export_peak(2000), export_peak(16000)
    assert large < small + 40 * 14000, f"{small:,} bytes at 2,000 items, {large:,} at 16,000"


async def test_an_export_of_a_run_reads_no_summaries_and_no_whole_file(monkeypatch):
    from sessions.reports.export import export_rows, plan_columns
    from sessions.store.items import RunItems
    from tui_support import make_run

    run = await make_run("exported", limit=12)
    for owner, name in ((RunStore, "summaries"), (RunStore, "results"), (RunItems, "briefs"), (RunItems, "items")):
        monkeypatch.setattr(owner, name, lambda *a, name=name: pytest.fail(f"an export calls {name}()"))
    store = RunStore.open(run)
    rows = list(export_rows([store], plan_columns([store])))
    assert [r["index"] for r in rows] == list(range(1, 13)) and all(r["status"] != "pending" for r in rows)


async def test_the_inspectors_header_metrics_read_no_record_and_no_item_inputs(monkeypatch):
    from n2f_tui import run_metrics
    from n2f_tui.state import RunState
    from tui_support import make_run

    run = await make_run("metrics", limit=30)
    state = RunState(RunStore.open(run))
    monkeypatch.setattr(run_metrics, "BULK_READ", 5)  # 30 results: the bulk path, as a big run's first refresh
    for name in ("record", "results", "iter_results", "item", "items"):
        monkeypatch.setattr(RunStore, name, lambda *a, name=name: pytest.fail(f"the metrics call store.{name}()"))
    cache: dict = {}
    metrics = run_metrics.engine_metrics(state, cache)
    assert metrics and len(cache) == 30
    assert all(not result.item.inputs and not result.outputs for _, result in cache.values())


async def test_the_inspectors_state_takes_its_reading_once_and_keeps_its_counts(monkeypatch):
    """Opening a run reads its summaries once: the first look for another process's writes finds nothing
    to take again, and the status counts the header shows follow the records ``take`` changes."""
    from collections import Counter

    from n2f_tui.state import RunState
    from tui_support import make_run

    run = await make_run("counted", limit=30)
    state = RunState(RunStore.open(run))
    assert state.follow() == (False, [])

    def direct() -> Counter:
        return Counter(r["status"] for r in state.records.values())

    def shown() -> dict:
        return {k: v for k, v in state.counts().items() if v and k != "pending"}

    assert shown() == direct() and state.counts()["pending"] == 0
    wrong = next(i for i, r in state.records.items() if r["status"] != "correct")
    right = next(i for i, r in state.records.items() if r["status"] == "correct")
    state.take({wrong: {**state.records[wrong], "status": "correct"}, right: {**state.records[right], "status": "error"}})
    assert shown() == direct() and state.counts()["pending"] == 0


async def test_the_header_metrics_of_a_run_that_will_not_change_are_its_kept_reports(monkeypatch):
    """A finished run's header shows its report's metrics, read from the run's kept report (made and kept
    by the first reader), no result held: the same figures as a cache over every result gives; a run
    going on keeps its cache for the next call. The run screen keeps it while a job or another process writes."""
    from n2f_tui import run_metrics
    from n2f_tui.state import RunState
    from sessions.reports import kept_report
    from sessions.reports.report import build_report
    from tui_support import make_run

    run = await make_run("metrics-once", limit=30)
    (RunStore.open(run).folder / kept_report.KEPT_REPORT).unlink(missing_ok=True)
    state = RunState(RunStore.open(run))
    kept: dict = {}
    metrics = run_metrics.header_metrics(state, kept, going_on=True)
    assert len(kept) == 30
    assert run_metrics.header_metrics(state, kept, going_on=False) == metrics and kept == {}
    assert (state.store.folder / kept_report.KEPT_REPORT).exists()  # the first reader kept them

    def no_results(*args, **kwargs):
        raise AssertionError("the kept figures are read, not the results")

    monkeypatch.setattr("sessions.study.final_tags.load_results", no_results)
    assert run_metrics.header_metrics(state, kept, going_on=False) == metrics and kept == {}
    assert metrics == build_report(RunStore.open(run))[0].metrics  # the report's own figures
