"""A reader's snapshot of a run's summary table: loaded back as the table parsed from the index, trusted only while
it is a true copy of the index's start."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from engines.core import Item
from sessions.store import results_log, summary_snapshot
from sessions.store.results_log import INDEX, RECORDS, ResultsLog
from sessions.store.runs import RunStore
from sessions.store.summary_snapshot import SNAPSHOT
from sessions.store.summary_table import SummaryTable
from test_summary_table import ACTIONS


@settings(max_examples=300, deadline=None)
@given(ACTIONS)
def test_a_coded_table_reads_back_as_the_table(actions):
    """``coded`` and ``of_coded`` give back the same summaries, values and columns, equal values kept once
    shared as before, and later summaries share them too."""
    table = SummaryTable()
    for action, index, summary in actions:
        if action == "set":
            table[index] = summary
        elif action == "del" and index in table:
            del table[index]
    kinds, places, shapes, columns = table.coded()
    back = SummaryTable.of_coded(kinds, places, [(shape.keys, shape.placed) for shape in shapes],
                                 [(key, json.loads(json.dumps(values)), codes) for key, values, codes in columns])
    assert dict(back) == dict(table) and len(back) == len(table) and list(back) == list(table)
    for key in ("status", "tags", "at", "len", "usage", "missing"):
        assert list(back.column(key, "-")) == list(table.column(key, "-"))
        assert [back.value(i, key, "-") for i in range(42)] == [table.value(i, key, "-") for i in range(42)]
    tagged = [i for i in back if back[i]["tags"] == ["a"]]
    assert all(back[i]["tags"] is back[tagged[0]]["tags"] for i in tagged)
    back[41] = {"status": "correct", "scores": {}, "tags": ["a"], "attempt": 0}
    assert not tagged or back[41]["tags"] is back[tagged[0]]["tags"]


def make_run(n=40):
    items = [Item(id=f"it-{i}", engine="fake", inputs={"q": f"question {i}"}, gold={}) for i in range(n)]
    store = RunStore.create(engine="fake", settings={}, seed=0, model="sim", backend={}, items=items, templates={},
                            concurrency=1)
    store.acquire()
    return store


def add(store, indices, status="correct", tags=()):
    for i in indices:
        store.add_result(i, {"id": f"it-{i}", "index": i, "status": status, "scores": {"s": float(i % 2)},
                             "tags": [{"code": c} for c in tags], "outputs": [], "steps": []})
    store.flush()


def parsed(folder, items=40):
    """The summaries as a reader that never saw a snapshot parses them from the index."""
    table = SummaryTable()
    for index, summary in ResultsLog(folder, items).scan():
        table[index] = summary
    return dict(table)


def test_the_next_reader_loads_what_a_reader_read_and_parses_only_what_came_after(monkeypatch):
    store = make_run()
    add(store, range(0, 30, 2), tags=["x"])
    add(store, range(1, 30, 2), status="wrong")
    first = ResultsLog(store.folder, 40)
    assert dict(first.summaries()) == parsed(store.folder) and (store.folder / SNAPSHOT).exists()
    add(store, [5, 31], status="correct")  # a re-run and a new item, after the snapshot
    lines = []
    original = results_log.json_line_blocks
    monkeypatch.setattr(results_log, "json_line_blocks",
                        lambda path, start, **kw: lines.append(start) or original(path, start, **kw))
    second = ResultsLog(store.folder, 40)
    table = second.summaries()
    assert dict(table) == parsed(store.folder) and table.value(5, "status") == "correct" and 31 in table
    assert lines and lines[0] > 0, "the index was parsed from where the snapshot ends, not from its start"
    assert table[0]["tags"] is table[2]["tags"] == ["x"]
    assert set(second.take_unfollowed()) == set(range(30)) | {31}
    store.close()


@pytest.mark.parametrize("damage", ["cut", "header", "more items", "body longer", "codes", "not json", "no tail",
                                    "negative place"])
def test_a_damaged_snapshot_is_passed_over(damage):
    store = make_run()
    add(store, range(40))
    ResultsLog(store.folder, 40).summaries()
    path = store.folder / SNAPSHOT
    data = path.read_bytes()
    head, body = data.split(b"\n", 1)
    header = json.loads(head)
    if damage == "more items":
        header["items"] = 41
    if damage == "no tail":  # claims more of the index than there is: what it cannot hash is never trusted
        header["tail"], header["index_bytes"] = "", 10**9
    places_at = 4 * 40  # the places follow the shape numbers: item 0's offset first
    changed = {"cut": data[:-5], "header": b"{}\n" + body, "body longer": data + b"\0" * 4,
               "codes": head + b"\n" + body[:-4] + (10**6).to_bytes(4, "little"), "not json": b"\xff" * 50,
               "more items": json.dumps(header).encode() + b"\n" + body,
               "no tail": json.dumps(header).encode() + b"\n" + body,
               "negative place": head + b"\n" + body[:places_at] + (-5).to_bytes(8, "little", signed=True)
               + body[places_at + 8:]}[damage]
    path.write_bytes(changed)
    add(store, [3], status="wrong")  # a line after the snapshot, which a reader trusting it would not parse
    assert dict(ResultsLog(store.folder, 40).summaries()) == parsed(store.folder)
    store.close()


def test_a_snapshot_of_another_index_is_passed_over():
    """An index of the same length whose lines end otherwise (rewritten), or shorter than the snapshot covers,
    or records shorter than it points at: the index is parsed (and what it finds wrong is said)."""
    store = make_run()
    add(store, range(20))
    ResultsLog(store.folder, 40).summaries()
    index = store.folder / INDEX
    data = index.read_bytes()
    index.write_bytes(data.replace(b'"correct"', b'"wrong"  '))
    assert dict(ResultsLog(store.folder, 40).summaries()) == parsed(store.folder)
    index.write_bytes(data)
    ResultsLog(store.folder, 40).summaries()
    index.write_bytes(data[:len(data) // 2])
    assert dict(ResultsLog(store.folder, 40).summaries()) == parsed(store.folder)
    index.write_bytes(data)
    ResultsLog(store.folder, 40).summaries()
    records = store.folder / RECORDS
    records.write_bytes(records.read_bytes()[:-100])
    reader = ResultsLog(store.folder, 40)
    assert dict(reader.summaries()) == parsed(store.folder) and "shorter than its index" in reader.damage
    store.close()


def test_a_snapshot_of_index_lines_the_owner_cut_is_never_read_for_the_lines_appended_after():
    """After a crash the owner cuts the index lines past the records and appends new ones over them; a
    snapshot of the lines cut (a reader's that read the index just before the cut and wrote after it) is
    never taken for the new lines, however far the index grows."""
    store = make_run()
    add(store, range(20))
    store.close()
    ResultsLog(store.folder, 40).summaries()
    stale = (store.folder / SNAPSHOT).read_bytes()
    covered = json.loads(stale.split(b"\n", 1)[0])["index_bytes"]
    records = store.folder / RECORDS
    records.write_bytes(records.read_bytes()[:-50])
    owner = RunStore.open(store.id)
    owner.acquire()
    assert (owner.folder / INDEX).stat().st_size < covered, "the owner cut the index"
    (owner.folder / SNAPSHOT).write_bytes(stale)
    add(owner, range(18, 40), status="wrong")
    assert (owner.folder / INDEX).stat().st_size > covered
    assert dict(ResultsLog(owner.folder, 40).summaries()) == parsed(owner.folder)
    owner.close()


def test_a_run_with_damage_or_a_folder_it_cannot_write_gets_no_snapshot(monkeypatch):
    store = make_run()
    add(store, range(10))
    with open(store.folder / INDEX, "ab") as index:
        index.write(b'{"i":99,"at":0,"len":1,"status":"wrong","scores":{},"tags":[],"attempt":0}\n')
    reader = ResultsLog(store.folder, 40)
    reader.summaries()
    assert "names 1 item(s)" in reader.damage and not (store.folder / SNAPSHOT).exists()
    store.close()
    clean = make_run()
    add(clean, range(10))

    def refuse(path, chunks):
        raise PermissionError(13, "read-only")

    monkeypatch.setattr(summary_snapshot, "replace_unsynced", refuse)
    assert len(ResultsLog(clean.folder, 40).summaries()) == 10 and not (clean.folder / SNAPSHOT).exists()
    clean.close()


NOBODY = 65534
READER = """
import json, sys
sys.path[:0] = sys.argv[3:]
from pathlib import Path
from sessions.store.results_log import ResultsLog
log = ResultsLog(Path(sys.argv[1]), int(sys.argv[2]))
table = log.summaries()
print(json.dumps({"n": len(table), "wrong": sum(1 for s in table.column("status") if s == "wrong"), "damage": log.damage}))
"""


def test_a_reader_who_cannot_write_the_run_folder_reads_it_whole_and_leaves_nothing(tmp_path):
    """A run in a folder another account owns (a shared store), read by a normal user who may not write
    there: the summaries are read from the index, no snapshot is left and nothing is said to be wrong."""
    import os
    import shutil
    import subprocess
    import sys
    import sysconfig
    import tempfile
    from pathlib import Path

    if os.geteuid() != 0:
        pytest.skip("dropping to another uid needs root")
    store = make_run()
    add(store, range(0, 30), status="wrong")
    add(store, range(30, 40))
    store.close()
    shared = Path(tempfile.mkdtemp(prefix="n2f-shared-store-"))
    try:
        folder = shared / "run"
        shutil.copytree(store.folder, folder)
        (folder / SNAPSHOT).unlink(missing_ok=True)
        for path in [shared, folder, *folder.iterdir()]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        paths = [str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]]
        as_nobody = {"capture_output": True, "text": True, "user": NOBODY, "group": NOBODY, "extra_groups": [],
                     "cwd": "/"}
        probe = "import sys; sys.path[:0] = sys.argv[1:]; import sessions.store.results_log"
        for python in (sys.executable, "/usr/bin/python3"):  # one that uid can run, with the checkout it can read
            try:
                if subprocess.run([python, "-I", "-c", probe, *paths], **as_nobody).returncode == 0:
                    break
            except OSError:  # that uid cannot even execute it
                continue
        else:
            pytest.skip(f"no interpreter and checkout that uid {NOBODY} can read")
        result = subprocess.run([python, "-I", "-c", READER, str(folder), "40", *paths], **as_nobody)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == {"n": 40, "wrong": 30, "damage": ""}
        assert not (folder / SNAPSHOT).exists() and sorted(p.name for p in folder.iterdir()) == sorted(
            p.name for p in store.folder.iterdir() if p.name != SNAPSHOT)
    finally:
        shutil.rmtree(shared)


def test_a_reader_renews_a_snapshot_that_covers_less_than_it_parsed_and_a_follower_does_not(monkeypatch):
    """A snapshot left early in a run (an inspector opened at its start) is renewed by the next reader that
    parses more after it than it covered; a reader following the run's batches writes none for them."""
    store = make_run(400)
    add(store, range(10))
    ResultsLog(store.folder, 400).summaries()  # a snapshot of 10 results
    add(store, range(10, 200))
    written = []
    original = summary_snapshot.write_snapshot
    monkeypatch.setattr(results_log, "write_snapshot", lambda *a: written.append(a[3]) or original(*a))
    follower = ResultsLog(store.folder, 400)
    assert len(follower.summaries()) == 200 and written == [(store.folder / INDEX).stat().st_size]
    for start in range(200, 260, 10):  # the run goes on in batches the follower takes one at a time
        add(store, range(start, start + 10))
        follower.tail()
    assert len(written) == 1 and len(follower.summaries()) == 260
    assert dict(ResultsLog(store.folder, 400).summaries()) == parsed(store.folder, 400)
    store.close()
