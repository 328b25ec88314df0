"""The run store: append-only results with one owner, readers that touch nothing, run lookup, layouts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core import Item
from old_runs import make_format_1
from sessions.errors import InputError
from sessions.store.results_log import INDEX, RECORDS
from sessions.store.runs import PersistError, RunStore, resolve_run


def make_store(n=5, name="", own=True):
    items = [Item(id=f"it-{i}", engine="fake", inputs={"q": f"question {i}"}, gold={}) for i in range(n)]
    store = RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=items,
                            templates={}, concurrency=1, name=name)
    if own:
        store.acquire()
    return store


def record(i, status="correct", attempt=0):
    return {"id": f"it-{i}", "index": i, "status": status, "scores": {"s": 1.0}, "attempt": attempt,
            "tags": [{"code": "omission", "label": "Omission", "evidence": f"e{i}", "source": "auto"}],
            "outputs": [f"o{i}"]}


def test_results_are_buffered_then_appended_as_one_batch():
    store = make_store()
    store.add_result(0, record(0))
    assert not (store.folder / RECORDS).exists(), "a single item must not trigger a write"
    store.add_result(1, record(1))
    store.flush()
    lines = (store.folder / RECORDS).read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["it-0", "it-1"]
    index = [json.loads(line) for line in (store.folder / INDEX).read_text().splitlines()]
    assert [(e["i"], e["status"], e["tags"]) for e in index] == [(0, "correct", ["omission"]), (1, "correct", ["omission"])]
    assert not [p for p in os.listdir(store.folder) if ".tmp-" in p]


def test_a_reader_sees_summaries_and_one_full_record_without_the_others():
    store = make_store()
    store.add_result(0, record(0))
    store.add_result(3, record(3, "wrong"))
    store.flush()
    reader = RunStore.open(store.id)
    assert {i: s["status"] for i, s in reader.summaries().items()} == {0: "correct", 3: "wrong"}
    assert "outputs" not in reader.summaries()[3]
    assert reader.record(3)["outputs"] == ["o3"]
    assert reader.record(2) is None
    store.add_result(2, record(2))
    store.flush()
    assert sorted(reader.summaries()) == [0, 2, 3], "a reader picks up what was appended since it last looked"


def test_a_retried_item_keeps_its_latest_record_and_errors_count_pending():
    store = make_store(3)
    store.add_result(0, record(0))
    store.add_result(1, record(1, "error"))
    store.flush()
    assert store.pending_indices() == [1, 2]
    store.add_result(1, record(1, "wrong", attempt=1))
    store.flush()
    reopened = RunStore.open(store.id)
    assert reopened.results()[1]["status"] == "wrong"
    assert reopened.summaries()[1]["attempt"] == 1
    assert reopened.pending_indices() == [2]


def test_only_the_lock_holder_writes_results():
    store = make_store(own=False)
    store.add_result(0, record(0))
    with pytest.raises(RuntimeError, match="lock"):
        store.flush()


def test_readers_never_remove_temp_files_and_the_owner_removes_only_dead_writers():
    store = make_store(own=False)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                                  capture_output=True, text=True).stdout.strip()
        dead = store.folder / f"meta.json.tmp-{dead_pid}-dead"
        alive = store.folder / f"results.jsonl.tmp-{live.pid}-live"
        dead.write_text("half")
        alive.write_text("being written")
        RunStore.open(store.id).summaries()
        RunStore.open(store.id).results()
        assert dead.exists() and alive.exists(), "a reader must not delete anything"
        store.acquire()
        assert not dead.exists()
        assert alive.exists(), "a live process's temp file is not the owner's to remove"
        store.close()
    finally:
        live.kill()
        live.wait()


def test_the_owner_cuts_a_torn_tail_left_by_a_crash():
    store = make_store()
    store.add_result(0, record(0))
    store.flush()
    store.close()
    with open(store.folder / RECORDS, "ab") as f:
        f.write(b'{"id": "it-1", "stat')  # the records of a batch whose index never got written
    with open(store.folder / INDEX, "ab") as f:
        f.write(b'{"i": 1, "at"')
    reader = RunStore.open(store.id)
    assert sorted(reader.summaries()) == [0], "a partial last line is not a result"
    owner = RunStore.open(store.id)
    owner.acquire()
    owner.add_result(1, record(1))
    owner.flush()
    owner.close()
    assert RunStore.open(store.id).results()[1]["outputs"] == ["o1"]
    for name in (RECORDS, INDEX):
        assert all(json.loads(line) for line in (store.folder / name).read_text().splitlines())


def test_a_failed_write_raises_and_keeps_what_was_stored(monkeypatch):
    import sessions.store.results_log as log

    store = make_store()
    store.add_result(0, record(0))
    store.flush()
    real = log.append_durably
    calls = []

    def full_disk(fd, data):
        calls.append(len(data))
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(log, "append_durably", full_disk)
    store.add_result(1, record(1))
    with pytest.raises(PersistError, match="No space left on device.*n2f resume"):
        store.flush()
    with pytest.raises(PersistError, match="earlier write failed"):
        store.flush()
    monkeypatch.setattr(log, "append_durably", real)
    store.discard_buffer()
    store.close()
    reopened = RunStore.open(store.id)
    assert sorted(reopened.summaries()) == [0]
    reopened.acquire()
    assert reopened.pending_indices() == [1, 2, 3, 4]
    reopened.close()


def test_items_are_read_one_at_a_time_and_found_by_id():
    store = make_store(50)
    reader = RunStore.open(store.id)
    assert reader.item(37).inputs == {"q": "question 37"}
    assert reader.item_files._items is None, "one item must not parse the others"
    assert reader.find_item("it-42") == 42
    assert reader.find_item("it-4") == 4
    assert reader.find_item("nope") is None


def test_runs_resolve_by_id_name_prefix_and_last():
    a = make_store(name="first", own=False)
    b = make_store(name="second", own=False)
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
    other = RunStore.open(store.id)
    with pytest.raises(InputError, match="another process"):
        other.acquire()
    store.close()
    other.acquire()
    other.close()


def test_annotations_live_in_their_own_log_and_survive_rescoring():
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
    events = RunStore.open(store.id).annotations().events()
    assert len({e["id"] for e in events}) == 3 and all(e["annotator"] for e in events)


def test_a_damaged_index_line_is_a_clear_error():
    store = make_store()
    (store.folder / INDEX).write_text("{not json\n")
    with pytest.raises(InputError, match="damaged"):
        RunStore.open(store.id).summaries()


def test_a_run_from_the_earlier_tinydb_layout_opens_and_is_converted_by_its_owner():
    store = make_store(3, own=False)
    legacy_results = {"results": {"1": record(0), "3": record(2, "wrong")}}
    (store.folder / "results.json").write_text(json.dumps(legacy_results))
    make_format_1(store.folder, index=False, brief=False)
    store = RunStore(store.folder)  # opened as the earlier version left it
    legacy_events = {"events": {"1": {"item": "it-0", "kind": "tag_add", "code": "omission", "label": "Omission",
                                      "text": "", "time": "t", "source": "manual"}}}
    (store.folder / "annotations.json").write_text(json.dumps(legacy_events))

    reader = RunStore.open(store.id)
    assert {i: s["status"] for i, s in reader.summaries().items()} == {0: "correct", 2: "wrong"}
    assert reader.record(2)["outputs"] == ["o2"]
    assert reader.item(1).id == "it-1" and reader.find_item("it-2") == 2
    assert reader.annotations().effective()["it-0"]["added"] == {"omission": "Omission"}
    assert (store.folder / "results.json").exists(), "reading converts nothing"

    store.acquire()
    assert not (store.folder / "results.json").exists()
    assert (store.folder / "items.idx").exists() and (store.folder / "items.brief.jsonl").exists()
    assert store.pending_indices() == [1]
    store.close()
    log = RunStore.open(store.id).annotations()
    log.add("it-1", "note", text="after the upgrade")
    assert not (store.folder / "annotations.json").exists()
    assert [e["kind"] for e in RunStore.open(store.id).annotations().events()] == ["tag_add", "note"]
    assert {i: s["status"] for i, s in RunStore.open(store.id).summaries().items()} == {0: "correct", 2: "wrong"}


def test_delete_run_removes_it_unless_it_is_being_written():
    from sessions.store.runs import delete_run

    keep = make_store(name="keep", own=False)
    busy = make_store(name="busy")
    with pytest.raises(InputError, match="another process"):
        delete_run("busy")
    assert delete_run("keep") == "keep"
    assert not keep.folder.exists()
    with pytest.raises(InputError, match="no run"):
        resolve_run("keep")
    busy.close()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=8, unique=True))
def test_item_ids_are_read_back_exactly_whatever_they_contain(ids):
    items = [Item(id=i, engine="fake", inputs={}, gold={}, meta={"id": "not this", "n": n}) for n, i in enumerate(ids)]
    store = RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=items,
                            templates={}, concurrency=1)
    assert [RunStore.open(store.id).find_item(i) for i in ids] == list(range(len(ids))), "by byte search"
    reader = RunStore.open(store.id)
    assert reader.item_ids() == ids
    assert [b["meta"]["n"] for b in reader.briefs()] == list(range(len(ids)))
    assert reader.find_item(ids[-1]) == len(ids) - 1


def test_a_one_off_reader_finds_the_latest_record_of_an_item_without_the_index_parsed():
    store = make_store(120)
    for i in (1, 10, 100, 11):
        store.add_result(i, record(i, "wrong"))
    store.flush()
    store.add_result(10, record(10, "correct", attempt=1))
    store.flush()
    for i, status in ((1, "wrong"), (10, "correct"), (100, "wrong"), (11, "wrong")):
        fresh = RunStore.open(store.id)
        assert fresh.record(i)["status"] == status and fresh.record(i)["index"] == i
        assert fresh._log._read_to == 0, "the index was not parsed"
    assert RunStore.open(store.id).record(2) is None
