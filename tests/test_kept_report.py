"""A run's kept report (``sessions.reports.kept_report``): read back, it prints what the results print, for every
engine and format; a change of anything the figures come from makes them anew; damage, a reader who may not
write and a report against other runs are handled."""

from __future__ import annotations

import json
import os
import sys

import pytest

from cli_support import n2f
from sessions.reports import kept_report
from sessions.reports.kept_report import KEPT_REPORT, code_key, report_key
from sessions.store.runs import RunStore
from sessions.store.results import run_settings
from sessions.study import final_tags

FORMATS = ((), ("--json",), ("--format", "md"), ("--format", "csv"), ("--format", "latex"))


def reports(name: str) -> list[str]:
    """``n2f report NAME`` in every format."""
    return [n2f("report", name, *args, check=True).stdout for args in FORMATS]


@pytest.fixture
def counted(monkeypatch):
    """How many times a report read the run's results back."""
    calls = []
    real = final_tags.load_final_results

    def load(store, *args, **kwargs):
        calls.append(store.label)
        return real(store, *args, **kwargs)

    monkeypatch.setattr(final_tags, "load_final_results", load)
    return calls


@pytest.mark.parametrize("engine", ["dedc", "logic", "compost", "robogrid", "rgp"])
def test_a_kept_report_prints_what_the_results_print_in_every_format(engine, counted):
    """``n2f run``'s closing report leaves the figures; the reports after it read no result and print, in every
    format, byte for byte what a report computed from the results prints."""
    n2f("run", engine, "-n", "12", "-q", "--name", "kept", "-m", "sim:error_rate=0.5", check=True)
    folder = RunStore.open("kept").folder
    assert (folder / KEPT_REPORT).exists() and counted == ["kept"]
    kept = reports("kept")
    assert counted == ["kept"]  # none of the five read the results
    (folder / KEPT_REPORT).unlink()
    fresh = reports("kept")
    assert kept == fresh and counted == ["kept", "kept"]  # the first computed them again and kept them
    assert json.loads(fresh[1])["counts"]["pending"] == 0


def test_new_results_annotations_and_code_each_make_the_figures_anew(counted, monkeypatch):
    n2f("run", "dedc", "-n", "30", "-q", "--name", "live", "-m", "sim:error_rate=0.7", check=True)
    before = json.loads(n2f("report", "live", "--json", check=True).stdout)
    assert len(counted) == 1
    store = RunStore.open("live")
    wrong = next(i for i, s in sorted(store.summaries().items()) if s["status"] == "wrong")
    item_id = store.item_ids()[wrong]
    log = store.annotations()
    log.add(item_id, "tag_add", code="redundancy", label="Redundancy")
    log.close()
    tagged = json.loads(n2f("report", "live", "--json", check=True).stdout)
    assert len(counted) == 2 and tagged["review"]["reviewed"] == 1 and tagged["tags"] != before["tags"]

    store.acquire()  # a re-run of one item: a new record for it
    store.add_result(wrong, {"id": item_id, "index": wrong, "status": "correct", "scores": {}, "tags": [],
                             "outputs": [], "steps": []})
    store.close()
    rerun = json.loads(n2f("report", "live", "--json", check=True).stdout)
    assert len(counted) == 3 and rerun["counts"]["correct"] == before["counts"]["correct"] + 1

    monkeypatch.setattr(kept_report, "code_key", lambda module: "an edited checkout")
    assert json.loads(n2f("report", "live", "--json", check=True).stdout) == rerun and len(counted) == 4
    assert json.loads(n2f("report", "live", "--json", check=True).stdout) == rerun and len(counted) == 4


def test_the_key_follows_the_meta_the_records_and_the_items(tmp_path):
    n2f("run", "dedc", "-n", "6", "-q", "--name", "keyed", check=True)
    store = RunStore.open("keyed")
    engine, _ = run_settings(store)
    key = report_key(store, engine)
    assert report_key(RunStore.open("keyed"), engine) == key  # the same state, the same key
    for name in ("meta.json", "results.jsonl", "items.brief.jsonl", "annotations.jsonl"):
        path = store.folder / name
        saved = path.read_bytes() if path.exists() else None
        with open(path, "ab") as handle:
            handle.write(b" ")
        assert report_key(store, engine) != key, name
        if saved is None:
            path.unlink()
        else:
            path.write_bytes(saved)
        assert report_key(store, engine) == key, name


def test_the_code_key_follows_every_file_of_an_engine_plugin_s_package(tmp_path, monkeypatch):
    package = tmp_path / "plugin_engine_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("NAME = 'plugin'\n")
    (package / "taxonomy.tsv").write_text("code\tlabel\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("plugin_engine_pkg")
    try:
        first = code_key("plugin_engine_pkg")
        assert code_key("plugin_engine_pkg") == first != code_key("engines.dedc")
        stat = os.stat(package / "taxonomy.tsv")
        os.utime(package / "taxonomy.tsv", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        code_key.cache_clear()
        assert code_key("plugin_engine_pkg") != first
    finally:
        sys.modules.pop("plugin_engine_pkg", None)
        code_key.cache_clear()


@pytest.mark.parametrize("damage", [b"", b"{\"format\": 1, \"key\"", b"[1, 2]", b"\xff\xfe not json",
                                    b"{\"format\": 1, \"key\": \"KEY\", \"report\": {}, \"figures\": {}}"])
def test_a_damaged_kept_report_is_passed_over_and_written_anew(damage, counted):
    n2f("run", "robogrid", "-n", "8", "-q", "--name", "dmg", check=True)
    folder = RunStore.open("dmg").folder
    whole = reports("dmg")
    key = json.loads((folder / KEPT_REPORT).read_text())["key"]
    (folder / KEPT_REPORT).write_bytes(damage.replace(b"KEY", key.encode()))
    assert reports("dmg") == whole and len(counted) == 2
    assert json.loads((folder / KEPT_REPORT).read_text())["key"] == key


def test_a_report_against_other_runs_neither_reads_nor_writes_the_kept_one(counted, monkeypatch):
    n2f("run", "dedc", "-n", "12", "-q", "--name", "base", check=True)
    n2f("run", "dedc", "-n", "12", "-q", "--name", "other", "-m", "sim:error_rate=0.9", check=True)
    folder = RunStore.open("base").folder
    saved = (folder / KEPT_REPORT).read_bytes()
    monkeypatch.setattr(kept_report, "read_kept", lambda store, key: pytest.fail("read a kept report"))
    paired = json.loads(n2f("report", "base", "--against", "other", "--json", check=True).stdout)
    assert paired["paired"] and paired["against"] == ["other"] and (folder / KEPT_REPORT).read_bytes() == saved


def test_a_reader_who_cannot_write_reports_all_the_same_and_leaves_nothing(counted, monkeypatch):
    n2f("run", "dedc", "-n", "12", "-q", "--name", "shared", check=True)
    folder = RunStore.open("shared").folder
    whole = reports("shared")
    (folder / KEPT_REPORT).unlink()

    def refuse(path, chunks):
        raise PermissionError(13, "read-only")

    monkeypatch.setattr(kept_report, "replace_unsynced", refuse)
    assert reports("shared") == whole and not (folder / KEPT_REPORT).exists()
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]


NOBODY = 65534
REPORT = "import sys; sys.path[:0] = sys.argv[1:]; from n2f_tui.cli import main; sys.exit(main(['report', 'shared', '--json']))"


def test_nobody_reports_a_run_in_a_store_it_may_not_write(n2f_home, tmp_path):
    """A store another account owns, read-only to a normal user (``nobody``, dropped to from root): the report is
    the owner's, and no kept report or temp file is left."""
    import shutil
    import subprocess
    import sysconfig
    import tempfile
    from pathlib import Path

    if os.geteuid() != 0:
        pytest.skip("dropping to another uid needs root")
    n2f("run", "dedc", "-n", "20", "-q", "--name", "shared", "-m", "sim:error_rate=0.5", check=True)
    owner = json.loads(n2f("report", "shared", "--json", check=True).stdout)
    home = Path(tempfile.mkdtemp(prefix="n2f-shared-home-"))
    try:
        shutil.copytree(n2f_home / "runs", home / "runs")
        folder = next((home / "runs").iterdir())
        (folder / KEPT_REPORT).unlink()
        for path in [home, *home.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        paths = [str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]]
        as_nobody = {"capture_output": True, "text": True, "user": NOBODY, "group": NOBODY, "extra_groups": [],
                     "cwd": "/", "env": {"N2F_HOME": str(home), "HOME": "/nonexistent", "PATH": os.environ["PATH"]}}
        for python in (sys.executable, "/usr/bin/python3"):  # one that uid can run, with the checkout it can read
            try:
                if subprocess.run([python, "-I", "-c", "import sys; sys.path[:0] = sys.argv[1:]; import n2f_tui.cli",
                                   *paths], **as_nobody).returncode == 0:
                    break
            except OSError:  # that uid cannot even execute it
                continue
        else:
            pytest.skip(f"no interpreter and checkout that uid {NOBODY} can read")
        result = subprocess.run([python, "-I", "-c", REPORT, *paths], **as_nobody)
        assert result.returncode == 0 and not result.stderr, result.stderr
        assert json.loads(result.stdout) == owner
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            p.name for p in next((n2f_home / "runs").iterdir()).iterdir() if p.name != KEPT_REPORT)
    finally:
        for path in [home, *home.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(home)


def test_figures_made_while_the_run_changed_are_not_kept(monkeypatch):
    """A report made while an annotator or the run's owner writes reads a state no key names: it is printed but
    not kept, so no later report can take figures of more (or fewer) results than its own state holds."""
    n2f("run", "dedc", "-n", "12", "-q", "--name", "moving", "-m", "sim:error_rate=0.7", check=True)
    store = RunStore.open("moving")
    (store.folder / KEPT_REPORT).unlink()
    real = final_tags.load_final_results

    def load_then_annotate(reading, *args, **kwargs):
        loaded = real(reading, *args, **kwargs)
        log = reading.annotations()
        log.add(reading.item_ids()[0], "note", text="written while the report was made")
        log.close()
        return loaded

    monkeypatch.setattr(final_tags, "load_final_results", load_then_annotate)
    assert n2f("report", "moving", "--json", check=True).stdout
    assert not (store.folder / KEPT_REPORT).exists()
    monkeypatch.setattr(final_tags, "load_final_results", real)
    n2f("report", "moving", "--json", check=True)
    assert (store.folder / KEPT_REPORT).exists()


def test_reports_beside_a_run_another_process_writes_never_keep_stale_figures(n2f_home):
    """Reports read while ``n2f run`` writes the same run in a process of its own: each is whole (its counts add up
    to its results), and once the run ends the report read equals one computed from the results."""
    import subprocess
    import time

    from cli_support import ROOT

    writer = subprocess.Popen([sys.executable, "-m", "n2f_tui", "run", "dedc", "-n", "160", "-j", "2", "-q",
                               "--name", "growing", "-m", "sim:latency=0.05"], cwd=ROOT, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    def stored() -> int:
        """The results the run holds now (complete lines of its index)."""
        try:
            return (next(p for p in (n2f_home / "runs").iterdir()) / "results.index.jsonl").read_bytes().count(b"\n")
        except (StopIteration, FileNotFoundError):
            return 0

    seen = set()
    try:
        while writer.poll() is None:
            before = stored()
            result = n2f("report", "growing", "--json")
            if result.returncode == 0:
                summary = json.loads(result.stdout)
                done = summary["n"] - summary["counts"]["pending"]
                assert before <= done <= stored() and sum(summary["counts"].values()) == summary["n"] == 160
                seen.add(done)
            time.sleep(0.05)
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0, writer.stderr.read()  # type: ignore[union-attr]
    assert len(seen - {0, 160}) >= 2  # reports read the run midway, at more than one state
    kept = reports("growing")
    (RunStore.open("growing").folder / KEPT_REPORT).unlink()
    assert reports("growing") == kept


def test_a_packed_run_carries_no_kept_report_and_reports_the_same_where_it_is_unpacked(tmp_path):
    import tarfile

    n2f("run", "logic", "-n", "10", "-q", "--name", "moved", "-m", "sim:error_rate=0.5", check=True)
    here = reports("moved")
    n2f("pack", "moved", "-o", str(tmp_path / "moved.tar.gz"), check=True)
    with tarfile.open(tmp_path / "moved.tar.gz") as tar:
        assert KEPT_REPORT not in tar.getnames() and "meta.json" in tar.getnames()
    elsewhere = {"N2F_HOME": str(tmp_path / "elsewhere")}
    n2f("unpack", str(tmp_path / "moved.tar.gz"), check=True, env=elsewhere)
    assert [n2f("report", "moved", *args, check=True, env=elsewhere).stdout for args in FORMATS] == here
