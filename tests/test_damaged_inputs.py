"""Damaged files and bad values through the real ``n2f`` command: one line on stderr, exit 2, and
what is stored stays readable (issue 24's list, each case as the user would meet it)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_support import n2f

def one_line(result: subprocess.CompletedProcess, status: int = 2, *needles: str) -> str:
    assert result.returncode == status, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("n2f: error: ") and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def run_folder(name: str) -> Path:
    runs = json.loads(n2f("runs", "--json").stdout)
    return Path(os.environ["N2F_HOME"]) / "runs" / next(r for r in runs if r["name"] == name)["id"]


@pytest.fixture
def run(tmp_path) -> Path:
    assert n2f("run", "dedc", "-m", "oracle", "-n", "6", "--name", "r", "-q").returncode == 0
    return run_folder("r")


def test_a_config_file_that_is_not_utf8_is_one_line(n2f_home):
    (n2f_home / "config.toml").write_bytes(b'annotator = "\xff\xfe"\n')
    one_line(n2f("run", "dedc", "-m", "oracle", "-n", "1"), 2, "config")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_replay_file_that_is_not_utf8_is_one_line(tmp_path, suffix):
    path = tmp_path / ("easy__replies" + suffix)
    path.write_bytes(b'{"id": "dedc-000", "output": "x1 := \xff"}\n')
    one_line(n2f("run", "dedc" if suffix == ".jsonl" else "compost", "-m", f"replay:{path}", "-n", "1"), 2, str(path))


def test_an_output_file_that_is_not_utf8_is_one_line(tmp_path):
    item = tmp_path / "item.json"
    item.write_text(n2f("items", "dedc").stdout.splitlines()[0])
    output = tmp_path / "out.txt"
    output.write_bytes(b"x1 := \xff\xfe")
    one_line(n2f("score", "dedc", "--item", str(item), "--output", str(output)), 2, str(output))


def test_a_truncated_items_file_is_one_line(run):
    data = (run / "items.jsonl").read_bytes()
    (run / "items.jsonl").write_bytes(data[: len(data) // 2])
    one_line(n2f("show", "r", "6"), 2, "items.jsonl", "item 6")
    assert n2f("report", "r").returncode == 0, "a report reads the brief file, not the items"
    one_line(n2f("export", "r", "--format", "jsonl"), 2, "items.jsonl", "the run cannot be read")  # exports carry each prompt


def test_a_deleted_results_log_is_reported_and_resume_runs_the_items_again(run):
    (run / "results.jsonl").unlink()
    assert n2f("show", "r", "1").returncode == 0, "the item reads as pending, the command works"
    listed = json.loads(n2f("runs", "--json").stdout)[0]
    assert "shorter than its index" in listed["damage"]
    resumed = n2f("resume", "r", "-q")
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(n2f("report", "r", "--json").stdout)
    assert report["counts"]["correct"] == 6 and report["counts"]["pending"] == 0
    assert (run / "results.index.jsonl.torn").exists(), "the index lines cut are kept aside"


def test_a_byte_0xff_inside_the_results_log_is_one_line(run):
    data = bytearray((run / "results.jsonl").read_bytes())
    data[data.index(b'"outputs"') + 2] = 0xFF
    (run / "results.jsonl").write_bytes(bytes(data))
    one_line(n2f("export", "r", "--format", "jsonl"), 2, "results.jsonl")
    one_line(n2f("show", "r", "1"), 2, "results.jsonl")


@pytest.mark.parametrize("line", ["[1, 2]", '{"id": "e1", "item": "dedc-000", "code": "omission", "annotator": "a", '
                                            '"time": "2026-01-01T00:00:00+00:00"}'])
def test_an_imported_line_that_is_not_an_event_is_refused_with_its_number(run, tmp_path, line):
    good = {"id": "e0", "item": "dedc-000", "kind": "note", "code": "", "text": "fine", "annotator": "a",
            "time": "2026-01-01T00:00:00+00:00"}
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(good) + "\n" + line + "\n")
    one_line(n2f("annotations", "import", "r", str(path)), 2, "line 2", "nothing was imported")
    assert not (run / "annotations.jsonl").exists() or not (run / "annotations.jsonl").read_text().strip()


@pytest.mark.parametrize("setting", ["temperature=nan", "temperature=inf", "temperature=-1", "max_tokens=-5"])
def test_settings_refuse_values_that_are_not_finite_or_in_range(setting):
    one_line(n2f("run", "dedc", "-m", "oracle", "-n", "1", "-s", setting), 2, setting.split("=")[0])


@pytest.mark.parametrize("price", ["-1.0", "nan", "inf"])
def test_prices_must_be_finite_and_not_negative(n2f_home, price):
    (n2f_home / "config.toml").write_text(f'[prices."sim"]\ninput = {price}\noutput = 1.0\n')
    one_line(n2f("run", "dedc", "-m", "sim", "-n", "1"), 2, "price")


def test_a_damaged_meta_file_lists_the_run_as_damaged(run):
    (run / "meta.json").write_text('{"id": "r", "engine": ')
    listed = n2f("runs", "--json")
    assert listed.returncode == 0, listed.stderr
    [entry] = json.loads(listed.stdout)
    assert entry["status"] == "damaged" and "meta.json" in entry["damage"]
    assert "damaged" in n2f("runs").stdout
