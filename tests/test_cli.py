"""The ``n2f`` command through its real entry point: every command, and bad input."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import signal
import socket
import subprocess
import warnings
from functools import partial
from pathlib import Path

import pytest

from cli_support import n2f as cli_n2f
from n2f_tui.commands.running import rate_text
from stub_openai import running_stub
from official_data import DATA_ROOT

DATA = DATA_ROOT / "dedc"


n2f = partial(cli_n2f, check=True)


def assert_clear_error(result: subprocess.CompletedProcess, status: int, *needles: str) -> None:
    assert result.returncode == status, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("n2f: error: ")
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


def test_items_prints_323_items_over_15_graph_types():
    lines = n2f("items", "dedc").stdout.splitlines()
    items = [json.loads(line) for line in lines]
    assert len(items) == 323
    assert {"id", "engine", "inputs", "gold", "meta"} <= set(items[0])
    assert "question" in items[0]["inputs"]
    assert len({i["meta"]["graph_type"] for i in items}) == 15
    gaps = sum(i["meta"]["gap"] for i in items)
    assert gaps == 218  # seed 0's items, as test_dedc_generate builds them
    assert not any(json.loads(l)["meta"]["gap"] for l in n2f("items", "dedc", "-s", "gap=0").stdout.splitlines())
    assert all(json.loads(l)["meta"]["gap"] for l in n2f("items", "dedc", "-s", "gap=100").stdout.splitlines())


@pytest.mark.slow
def test_run_report_show_export_rescore_round_trip(tmp_path):
    run = json.loads(n2f("run", "dedc", "-m", "sim:error_rate=0.5", "-n", "40", "--name", "half", "--json", "-q").stdout)
    assert run["engine"] == "dedc" and run["n"] == 40
    assert run["counts"]["correct"] + run["counts"]["wrong"] + run["counts"]["unparseable"] == 40
    assert (run["counts"]["correct"], run["counts"]["wrong"], run["counts"]["unparseable"]) == (19, 16, 5)  # seeded
    assert run["accuracy"] == pytest.approx(19 / 40)
    assert run["tags"] and all(isinstance(v, int) for v in run["tags"].values())

    report = json.loads(n2f("report", "half", "--json").stdout)
    for key in ("engine", "model", "n", "counts", "accuracy", "tags", "metrics"):
        assert key in report
    assert report["accuracy"] == run["accuracy"]
    human = n2f("report", "half").stdout
    assert "Table 3" in human

    runs = json.loads(n2f("runs", "--json").stdout)
    assert [r["name"] for r in runs] == ["half"]

    shown = json.loads(n2f("show", "half", "1", "--json").stdout)
    assert shown["prompts"][0]["messages"][0]["content"].startswith("For a given question of tabular reasoning")
    assert shown["verdict"]["status"] == shown["record"]["status"]
    assert shown["verdict"]["views"]
    assert "Prompt: answer" in n2f("show", "half", shown["item"]["id"]).stdout

    lines = n2f("export", "half", "--format", "jsonl").stdout.splitlines()
    assert len(lines) == 40
    first = json.loads(lines[0])
    assert {"run", "id", "status", "score_correct", "meta_graph_type", "prompt", "tags", "outputs"} <= set(first)
    assert all(isinstance(code, str) for code in first["tags"])
    csv_text = n2f("export", "half", "--format", "csv", "--annotations").stdout
    assert csv_text.splitlines()[0].startswith("run,run_name,engine,model,index,id,status,score_correct,meta_")
    assert len(list(csv.reader(io.StringIO(csv_text)))) == 41  # prompts hold newlines inside quoted cells

    rescored = n2f("rescore", "half")
    assert "rescored 40" in rescored.stderr
    assert json.loads(n2f("report", "half", "--json").stdout)["accuracy"] == run["accuracy"]


def test_oracle_scores_everything_correct():
    report = json.loads(n2f("run", "dedc", "-m", "oracle", "--json", "-q").stdout)
    assert report["n"] == 323 and report["accuracy"] == 1.0 and report["counts"]["correct"] == 323


def test_score_command_judges_one_item(tmp_path):
    item = json.loads(n2f("items", "dedc").stdout.splitlines()[5])
    item_file = tmp_path / "item.json"
    item_file.write_text(json.dumps(item))
    good = tmp_path / "good.txt"
    good.write_text("```\n" + item["gold"]["answer"] + "\n```")
    verdict = json.loads(n2f("score", "dedc", "--item", str(item_file), "--output", str(good)).stdout)
    assert verdict["status"] == "correct" and verdict["correct"] is True
    assert [t["code"] for t in verdict["tags"]] == ["format_violation"]
    bad = tmp_path / "bad.txt"
    bad.write_text("no expressions here")
    verdict = json.loads(n2f("score", "dedc", "--item", str(item_file), "--output", str(bad)).stdout)
    assert verdict["status"] == "unparseable" and verdict["correct"] is False


def test_replay_backend_reads_recorded_outputs(tmp_path):
    items = [json.loads(l) for l in n2f("items", "dedc").stdout.splitlines()[:4]]
    replay = tmp_path / "outputs.jsonl"
    replay.write_text("".join(json.dumps({"id": i["id"], "output": i["gold"]["answer"]}) + "\n" for i in items[:3]))
    result = n2f("run", "dedc", "-n", "4", "-m", f"replay:{replay}", "--json", "-q", check=False)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["counts"]["correct"] == 3 and report["counts"]["error"] == 1
    assert "n2f resume" in result.stderr


def write_config(text: str) -> None:
    Path(os.environ["N2F_HOME"], "config.toml").write_text(text)


@pytest.mark.slow
def test_openai_backend_against_stub_with_transient_failures():
    def reply(messages):
        return "view_1 := f0 (all, attr_1, 2); result := view_1;"

    with running_stub(["ok", "429:0.05", "500", "ok"], reply=reply) as stub:
        result = n2f("run", "dedc", "-n", "6", "-j", "2", "-m", f"openai:stub-model@{stub.base_url}", "--json", "-q")
        report = json.loads(result.stdout)
        assert report["counts"]["error"] == 0
        assert report["counts"]["correct"] + report["counts"]["wrong"] == 6
        assert len(stub.chat_requests()) == 8  # 6 items + one 429 + one 500 retried
        assert stub.chat_requests()[0]["params"].get("temperature") == 0
    meta = json.loads(next(Path(os.environ["N2F_HOME"], "runs").glob("*/meta.json")).read_text())
    assert meta["backend"]["base_url"] == stub.base_url


def test_a_refused_server_is_one_line_and_leaves_no_client_open():
    """The client the preflight made is closed when it fails: left open, a long-lived process (the
    inspector, a test) reports "Unclosed client session" under the error when it is collected."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        gc.collect()  # what earlier tests of this worker left behind is not counted as this call's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert_clear_error(n2f("run", "dedc", "-m", f"openai:m@{url}", "-n", "1", check=False), 2,
                               "connection refused")
            gc.collect()
    assert [str(w.message) for w in caught if "Unclosed" in str(w.message)] == []


def test_a_run_leaves_the_process_signal_handlers_as_it_found_them():
    """A run takes SIGINT and SIGTERM for its clean stop; asyncio's removal of its handlers sets
    Python's defaults, so a caller's own (a test worker's, a program embedding n2f) must come back."""
    def mine(*_: object) -> None:
        return None

    before = signal.signal(signal.SIGINT, mine), signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        n2f("run", "dedc", "-n", "2", "-q")
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


@pytest.mark.slow
def test_hanging_and_malformed_servers_end_as_error_then_resume_finishes():
    write_config("[openai]\ndeadline = 1.5\nattempt_timeout = 0.5\n")
    with running_stub(["hang:3"] * 40) as stub:
        result = n2f("run", "dedc", "-n", "2", "-j", "2", "-m", f"openai:stub-model@{stub.base_url}", "--name", "h", "--json", "-q",
                     check=False)
        assert result.returncode == 1, result.stderr
        report = json.loads(result.stdout)
        assert report["counts"]["error"] == 2 and report["accuracy"] == 0.0
        assert "n2f resume h" in result.stderr
        stub.clear()
        resumed = json.loads(n2f("resume", "h", "--json", "-q").stdout)
        assert resumed["counts"]["error"] == 0 and resumed["counts"]["pending"] == 0
        assert resumed["counts"]["wrong"] + resumed["counts"]["unparseable"] == 2
    with running_stub(["malformed"] * 40) as stub:
        result = n2f("run", "dedc", "-n", "1", "-m", f"openai:stub-model@{stub.base_url}", "--json", "-q", check=False)
        report = json.loads(result.stdout)
        assert report["counts"]["error"] == 1
        exported = json.loads(n2f("export", report["run"], "--format", "jsonl").stdout.splitlines()[0])
        assert "malformed" in exported["error"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needles",
    [
        (("run", "nosuch"), ("unknown engine", "dedc")),
        (("run", "dedc", "-s", "colour=red"), ("unknown setting", "colour")),
        (("run", "dedc", "-s", "gap=50"), ("gap", "base")),
        (("run", "dedc", "-s", "repeat=many"), ("repeat", "integer")),
        (("items", "dedc", "-s", "dataset=/no/such/file.jsonl"), ("/no/such/file.jsonl",)),
        (("run", "dedc", "-m", "gpt"), ("unknown model",)),
        (("run", "dedc", "-m", "sim:error=not_a_tag"), ("not_a_tag",)),
        (("run", "dedc", "-m", "openai:m@http://127.0.0.1:9/v1"), ("cannot reach",)),
        (("report", "nosuch"), ("no run",)),
        (("run",), ("engine",)),
        (("frobnicate",), ("invalid choice",)),
    ],
)
def test_bad_input_is_one_clear_line_and_status_2(args, needles):
    assert_clear_error(n2f(*args, check=False), 2, *needles)
    assert not list(Path(os.environ["N2F_HOME"]).glob("runs/*")), "bad input must not create a run"


def test_unwritable_data_dir_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")
    monkeypatch.setenv("N2F_HOME", str(blocker / "home"))
    assert_clear_error(n2f("run", "dedc", "-n", "1", check=False), 2, "not writable")


@pytest.mark.slow
@pytest.mark.needs_data
def test_official_dataset_runs_through_the_cli():
    report = json.loads(n2f("run", "dedc", "-s", f"dataset={DATA / '4_to_4_shot3_cross.jsonl'}", "-m", "oracle",
                            "--json", "-q").stdout)
    assert report["n"] == 323 and report["accuracy"] == 1.0


@pytest.mark.slow
def test_report_against_a_primitive_demo_run_gives_table_1():
    n2f("run", "dedc", "-m", "sim", "--name", "dc", "-q")
    n2f("run", "dedc", "-m", "sim", "-s", "primitives=true", "--name", "c", "-q")
    report = json.loads(n2f("report", "dc", "--against", "c", "--json").stdout)
    metrics = report["metrics"]
    assert metrics["D_c"] == pytest.approx(100 - metrics["P_c"])
    assert metrics["D_d"] == pytest.approx(metrics["P_c"] - metrics["P_dc"])
    assert "Table 1" in n2f("report", "dc", "--against", "c").stdout


@pytest.mark.parametrize("rate, text", [(2650.4, "2650"), (14.23, "14.2"), (0.138, "0.14"), (0.0, "0.00")])
def test_rates_stay_readable_for_slow_local_models(rate, text):
    assert rate_text(rate) == text
