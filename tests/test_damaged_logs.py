"""Annotation logs that heal and a shortened results log, through the real ``n2f`` command.

Nothing already recorded is lost and every command keeps working: a torn last line is
ignored by readers and cut (kept in ``annotations.jsonl.torn``) before the next append; an
import on a full disk adds nothing and says so in one line; a damaged line in the middle
costs only itself, with one warning naming it; a results.jsonl shorter than its index reads
as pending items until ``resume`` runs them again.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from cli_support import n2f as cli_n2f

READERS = (("show", "r", "1"), ("report", "r"), ("export", "r", "--format", "jsonl", "--annotations"),
           ("agreement", "r"), ("runs",))
TIME = "2026-12-01T10:00:00.000+00:00"


def n2f(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    return cli_n2f(*args, env={"N2F_HOME": str(home)} if home else None)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result


def event(number: int, item: str = "dedc-000", **fields: str) -> dict:
    return {"id": f"ev{number:04d}", "item": item, "kind": "note", "code": "", "text": f"note {number}",
            "annotator": "ada", "time": TIME, **fields}


def events_file(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def run_folder(home: Path) -> Path:
    [folder] = (home / "runs").iterdir()
    return folder


def exported_notes(home: Path | None = None) -> list[str]:
    text = ok(n2f("annotations", "export", "r", home=home)).stdout
    return [json.loads(line)["id"] for line in text.splitlines()]


def all_readers_work(home: Path | None = None) -> None:
    for args in READERS:
        ok(n2f(*args, home=home))


@pytest.fixture
def run(n2f_home) -> Path:
    ok(n2f("run", "dedc", "-m", "oracle", "-n", "4", "--name", "r", "-q"))
    return run_folder(n2f_home)


@pytest.mark.slow
def test_a_torn_last_line_is_ignored_then_cut_aside_before_the_next_append(run, tmp_path):
    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "a.jsonl", [event(i) for i in range(3)]))))
    log = run / "annotations.jsonl"
    torn = json.dumps(event(99))[:37].encode()
    with log.open("ab") as handle:
        handle.write(torn)  # a crash mid-append: no newline
    all_readers_work()
    assert exported_notes() == ["ev0000", "ev0001", "ev0002"]
    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "b.jsonl", [event(3)]))))
    assert exported_notes() == ["ev0000", "ev0001", "ev0002", "ev0003"]
    assert log.read_bytes().count(b"\n") == 4 and log.read_bytes().endswith(b"}\n"), "the new event is whole"
    assert (run / "annotations.jsonl.torn").read_bytes() == torn + b"\n", "the torn bytes are kept aside"
    all_readers_work()


@pytest.mark.slow
def test_a_damaged_line_in_the_middle_costs_only_itself_with_one_warning(run, tmp_path):
    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "a.jsonl", [event(0)]))))
    log = run / "annotations.jsonl"
    with log.open("ab") as handle:  # what an earlier version let through: a glued line, a line without time
        handle.write(b'{"id": "ev0001", "item": "dedc-000", "kind": "no{"id": "x"}\n')
        handle.write(json.dumps({k: v for k, v in event(2).items() if k != "time"}).encode() + b"\n")
    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "b.jsonl", [event(3)]))))
    shown = ok(n2f("show", "r", "1"))
    warnings = [line for line in shown.stderr.splitlines() if line.startswith("n2f: warning: ")]
    assert len(warnings) == 2 and "line 2" in warnings[0] and "line 3" in warnings[1] and "time" in warnings[1]
    assert exported_notes() == ["ev0000", "ev0003"]
    all_readers_work()
    assert ok(n2f("tui", "--help")).returncode == 0


def test_an_event_without_time_or_kind_is_refused_on_import_with_its_line(run, tmp_path):
    good = [event(0), event(1)]
    for bad in ({k: v for k, v in event(2).items() if k != "time"}, {k: v for k, v in event(2).items() if k != "kind"}):
        result = n2f("annotations", "import", "r", str(events_file(tmp_path / "bad.jsonl", [*good, bad])))
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "line 3" in result.stderr and "nothing was imported" in result.stderr
    assert not (run / "annotations.jsonl").exists() or exported_notes() == []
    all_readers_work()


@pytest.mark.slow
def test_a_results_log_shorter_than_its_index_reads_as_pending_and_resume_runs_those_items(run):
    records = run / "results.jsonl"
    kept = records.read_bytes().split(b"\n")[:2]
    records.write_bytes(b"\n".join(kept) + b"\n" + b'{"id": "dedc-0')  # two records whole, the third torn
    listed = json.loads(ok(n2f("runs", "--json")).stdout)
    assert "shorter than its index" in listed[0]["damage"]
    report = json.loads(ok(n2f("report", "r", "--json")).stdout)
    assert report["counts"]["correct"] == 2 and report["counts"]["pending"] == 2
    all_readers_work()
    before = [json.loads(line) for line in kept]
    resumed = json.loads(ok(n2f("resume", "r", "-q", "--json")).stdout)
    assert resumed["counts"]["correct"] == 4 and resumed["counts"]["pending"] == 0
    after = [json.loads(line) for line in records.read_bytes().splitlines()[:2]]
    assert after == before, "what was stored is kept, byte for byte"
    assert (run / "results.index.jsonl.torn").exists() and (run / "results.jsonl.torn").exists()
    exported = [json.loads(line) for line in ok(n2f("export", "r", "--format", "jsonl")).stdout.splitlines()]
    assert [e["status"] for e in exported] == ["correct"] * 4
    assert json.loads(ok(n2f("runs", "--json")).stdout)[0]["damage"] == ""


def test_index_lines_naming_no_item_of_the_run_are_ignored_and_said(run):
    """A line whose item number is not one of the run's (10**12, a negative, a string), damaged or written by
    hand, costs only itself: every reader works, none allocates up to the number (10**12 was a MemoryError),
    and ``n2f runs`` says how many lines were ignored."""
    index = run / "results.index.jsonl"
    last = json.loads(index.read_bytes().splitlines()[-1])
    foreign = [{**last, "i": number} for number in (10**12, -3, "x", 4)]  # the run has items 0 to 3
    index.write_bytes(index.read_bytes() + b"".join(json.dumps(line).encode() + b"\n" for line in foreign))
    (run / "summary.json").unlink(missing_ok=True)  # its figures cover the index before: read the index
    listed = json.loads(ok(n2f("runs", "--json")).stdout)
    assert "names 4 item(s) the run does not have: ignored" in listed[0]["damage"]
    report = json.loads(ok(n2f("report", "r", "--json")).stdout)
    assert report["n"] == 4 and report["counts"]["pending"] == 0 and sum(report["counts"].values()) == 4
    all_readers_work()
    exported = [json.loads(line) for line in ok(n2f("export", "r", "--format", "jsonl")).stdout.splitlines()]
    assert len(exported) == 4


@pytest.fixture
def small_disk(tmp_path):
    """A 512 KiB tmpfs as the data home: a disk that really fills up (needs mount rights, as CI's root has)."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root): test_a_write_torn_by_enospc_is_cut_back simulates it")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(folder: Path, leave: int) -> Path:
    """A file taking all the space of ``folder``'s disk but ``leave`` bytes."""
    filler = folder / "filler"
    stats = os.statvfs(folder)
    filler.write_bytes(b"\0" * max(0, stats.f_bavail * stats.f_frsize - leave))
    return filler


@pytest.mark.slow
def test_an_import_on_a_full_disk_adds_nothing_and_the_next_import_after_freeing_space_adds_all(small_disk, tmp_path):
    home = small_disk / "home"
    home.mkdir()
    ok(n2f("run", "dedc", "-m", "oracle", "-n", "4", "--name", "r", "-q", home=home))
    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "first.jsonl", [event(0)])), home=home))
    many = events_file(tmp_path / "many.jsonl", [event(i) for i in range(1, 200)])
    filler = fill(small_disk, 8192)
    result = n2f("annotations", "import", "r", str(many), home=home)
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "No space left on device" in result.stderr and "none of them was added" in result.stderr
    assert exported_notes(home) == ["ev0000"], "all or nothing: no event of the failed import, no torn line"
    all_readers_work(home)
    filler.unlink()
    ok(n2f("annotations", "import", "r", str(many), home=home))
    assert exported_notes(home) == [f"ev{i:04d}" for i in range(200)]
    all_readers_work(home)


def test_a_write_torn_by_enospc_is_cut_back(run, tmp_path, monkeypatch, capsys):
    """The same full disk without mount rights: ``os.write`` writes part of the batch, then ENOSPC
    (what a filling disk does), in the process running the command's own ``main``."""
    import errno

    from n2f_tui.cli import main

    ok(n2f("annotations", "import", "r", str(events_file(tmp_path / "first.jsonl", [event(0)]))))
    real = os.write
    log_size = (run / "annotations.jsonl").stat().st_size

    def filling(fd: int, data) -> int:
        if os.fstat(fd).st_size >= log_size and len(data) > 100:
            real(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", filling)
    assert main(["annotations", "import", "r", str(events_file(tmp_path / "many.jsonl", [event(i) for i in range(1, 50)]))]) == 1
    assert "none of them was added" in capsys.readouterr().err
    monkeypatch.setattr(os, "write", real)
    assert (run / "annotations.jsonl").stat().st_size == log_size, "the half-written batch is cut back"
    assert exported_notes() == ["ev0000"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\r", b"\n")), st.integers(1, 40))
def test_the_whole_lines_read_backwards_are_the_file_up_to_its_last_newline(content, block):
    """A lookup from the end (``n2f show``) reads the index a block at a time: the blocks, last first, are
    every whole line once, whatever the block size (lines longer than a block included), a torn tail left out."""
    import tempfile

    from sessions.store.files import whole_lines_backwards

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "index")
        path.write_bytes(content)
        blocks = list(whole_lines_backwards(path, block))
    assert b"".join(reversed(blocks)) == content[: content.rfind(b"\n") + 1]
    assert all(b.endswith(b"\n") for b in blocks)
