"""The run store: atomic batched writes, stale temp files, run lookup, annotations kept apart."""

from __future__ import annotations

import json
import os

import pytest

from engines.core import Item
from sessions.errors import InputError
from sessions.store import RunStore, resolve_run


def make_store(n=5, name=""):
    items = [Item(id=f"it-{i}", engine="fake", inputs={}, gold={}) for i in range(n)]
    return RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=items,
                           templates={}, concurrency=1, name=name)


def record(i, status="correct"):
    return {"id": f"it-{i}", "index": i, "status": status, "scores": {}, "tags": [], "outputs": [f"o{i}"]}


def test_results_are_buffered_then_flushed_atomically():
    store = make_store()
    store.add_result(0, record(0))
    results_file = store.folder / "results.json"
    assert not results_file.exists() or not json.loads(results_file.read_text()).get("results"), (
        "a single item must not trigger a whole-file rewrite"
    )
    store.flush()
    on_disk = json.loads((store.folder / "results.json").read_text())
    assert on_disk["results"]["1"]["id"] == "it-0"
    assert not [p for p in os.listdir(store.folder) if ".tmp-" in p]


def test_error_results_are_replaced_on_retry_and_counted_pending():
    store = make_store(3)
    store.add_result(0, record(0))
    store.add_result(1, record(1, "error"))
    store.flush()
    assert store.pending_indices() == [1, 2]
    store.add_result(1, record(1, "wrong"))
    store.flush()
    reopened = RunStore.open(store.id)
    assert reopened.results()[1]["status"] == "wrong"
    assert reopened.pending_indices() == [2]


def test_stale_temp_files_are_cleaned_on_open():
    store = make_store()
    stale = store.folder / "results.json.tmp-999-dead"
    stale.write_text("half")
    RunStore.open(store.id)
    assert not stale.exists()


def test_runs_resolve_by_id_name_prefix_and_last():
    a = make_store(name="first")
    b = make_store(name="second")
    assert resolve_run("first") == a.folder
    assert resolve_run(b.id) == b.folder
    assert resolve_run("last") == b.folder
    with pytest.raises(InputError, match="no run"):
        resolve_run("nope")
    with pytest.raises(InputError, match="exists already"):
        make_store(name="first")
    with pytest.raises(InputError, match="run name"):
        make_store(name="bad name!")


def test_a_second_writer_is_refused():
    store = make_store()
    store.acquire()
    other = RunStore.open(store.id)
    with pytest.raises(InputError, match="another process"):
        other.acquire()
    store.close()
    other.acquire()
    other.close()


def test_annotations_live_in_their_own_file_and_survive_rescoring():
    store = make_store()
    notes = store.annotations()
    notes.add("it-0", "tag_add", code="omission", label="Omission")
    notes.add("it-0", "tag_remove", code="redundancy")
    notes.add("it-0", "note", text="looks like a scope slip")
    store.replace_all_results({0: record(0, "wrong")})
    state = RunStore.open(store.id).annotations().effective()["it-0"]
    assert state["added"] == {"omission": "Omission"}
    assert state["removed"] == {"redundancy"}
    assert state["notes"] == ["looks like a scope slip"]


def test_a_corrupt_results_file_is_a_clear_error():
    store = make_store()
    (store.folder / "results.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        RunStore.open(store.id).results()


def test_delete_run_removes_it_unless_it_is_being_written():
    from sessions.store import delete_run

    keep = make_store(name="keep")
    busy = make_store(name="busy")
    busy.acquire()
    with pytest.raises(InputError, match="another process"):
        delete_run("busy")
    assert delete_run("keep") == "keep"
    assert not keep.folder.exists()
    with pytest.raises(InputError, match="no run"):
        resolve_run("keep")
    busy.close()
