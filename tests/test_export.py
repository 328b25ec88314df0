"""Exports other tools read: an Inspect AI log, flat CSV / JSON lines / Parquet rows, several runs in one file.

Each is read back with a reader we did not write (Inspect's ``read_eval_log`` and its own
metrics, the standard ``csv`` module, pyarrow) and compared with n2f's own report.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from functools import partial

import pytest

from engines import engine_names
from sessions import api
from sessions.store.runs import RunStore
from tui_support import make_run
from cli_support import n2f as cli_n2f

SCORED = ("correct", "wrong", "unparseable")


n2f = partial(cli_n2f, check=True)


def accuracy_by(rows: list[dict], key: str) -> dict[str, tuple[int, float]]:
    """(n, accuracy %) per value of ``key`` over the judged rows, as a spreadsheet pivot would count them."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        if row["status"] != "error":
            groups[str(row[key])].append(row["status"] == "correct")
    return {value: (len(ok), round(100 * sum(ok) / len(ok), 2)) for value, ok in groups.items()}


def report_table(summary: dict, name: str) -> dict[str, tuple[int, float]]:
    table = next(t for t in summary["tables"] if t["name"] == name)
    return {str(row[0]): (row[1], row[2]) for row in table["rows"]}


@pytest.mark.parametrize("engine", engine_names())
async def test_an_inspect_log_of_a_run_reads_back_with_inspect_ai(engine, tmp_path):
    """Sample count, each sample's verdict and scores, and Inspect's own accuracy equal n2f's."""
    from inspect_ai.log import read_eval_log

    from sessions.reports.inspect_log import write_inspect_log

    settings = ["timeout=1"] if engine == "rgp" else []  # seed 3 draws a looping program: its run ends at the limit
    run = await make_run(f"i-{engine}", limit=10, engine=engine, model="sim:error_rate=0.5", seed=3, settings=settings)
    store = RunStore.open(run)
    _, summary = api.build_report(store)
    target = tmp_path / "run.eval"
    write_inspect_log(store, str(target))
    log = read_eval_log(str(target))

    assert len(log.samples) == summary["n"] == 10
    records = store.results()
    for index, sample in enumerate(log.samples):
        record = records[index]
        assert sample.id == store.item(index).id
        if record["status"] in SCORED:
            assert sample.scores["verdict"].value == ("C" if record["status"] == "correct" else "I")
            assert sample.scores["verdict"].metadata["status"] == record["status"]
            assert sample.scores["scores"].value == pytest.approx(record["scores"])
        else:
            assert not sample.scores and sample.error is not None
        assert sample.metadata["tags"] == record["tags"]
        assert sample.input and sample.input[0].text  # the prompt's messages
    verdict = next(s for s in log.results.scores if s.name == "verdict")
    assert verdict.metrics["accuracy"].value == pytest.approx(summary["accuracy"])
    assert verdict.scored_samples == sum(summary["counts"][s] for s in SCORED)
    assert log.eval.task == f"n2f/{engine}" and log.eval.task_args == store.meta["settings"]
    assert log.eval.model == "n2f/sim"


def test_n2f_export_inspect_writes_a_log_the_cli_refuses_to_write_badly(tmp_path):
    from inspect_ai.log import read_eval_log

    n2f("run", "dedc", "-n", "12", "-m", "sim:error_rate=0.5", "--name", "ins", "-q")
    target = tmp_path / "ins.eval"
    n2f("export", "ins", "--format", "inspect", "-o", str(target))
    log = read_eval_log(str(target))
    assert len(log.samples) == 12 and log.eval.revision is not None and log.eval.revision.commit
    assert log.eval.packages["n2f-tui"]
    refused = n2f("export", "ins", "--format", "inspect", check=False)
    assert refused.returncode == 2 and "-o FILE" in refused.stderr
    both = n2f("export", "ins", "ins", "--format", "inspect", "-o", str(tmp_path / "x.eval"), check=False)
    assert both.returncode == 2 and "one run" in both.stderr and not (tmp_path / "x.eval").exists()


def dedc_run() -> tuple[str, dict]:
    n2f("run", "dedc", "-m", "sim:error_rate=0.4", "--name", "flat", "-q")
    return "flat", json.loads(n2f("report", "flat", "--json").stdout)


def test_a_csv_of_a_dedc_run_pivots_to_the_report_s_table_by_graph_type(tmp_path):
    run, summary = dedc_run()
    out = tmp_path / "flat.csv"
    n2f("export", run, "--format", "csv", "-o", str(out))
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == summary["n"] == 323
    assert accuracy_by(rows, "meta_graph_type") == report_table(summary, "by graph_type")
    assert len(report_table(summary, "by graph_type")) == 15
    first = rows[0]
    assert first["run"] == summary["run"] and first["engine"] == "dedc" and first["model"] == "sim:error_rate=0.4"
    assert first["prompt"].startswith("For a given question of tabular reasoning") and first["output"]
    assert json.loads(first["gold"])["answer"] and json.loads(first["outputs"]) == [first["output"]]
    wrong = next(r for r in rows if r["status"] == "wrong")
    assert wrong["tags"] and wrong["tag_evidence"].startswith(wrong["tags"].split(";")[0] + ": ")
    assert wrong["final_tags"] == ";".join(sorted(wrong["tags"].split(";")))


def test_a_parquet_export_pivots_the_same(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    run, summary = dedc_run()
    out = tmp_path / "flat.parquet"
    n2f("export", run, "--format", "parquet", "-o", str(out))
    table = pq.read_table(out)
    rows = table.to_pylist()
    assert len(rows) == 323
    assert accuracy_by(rows, "meta_graph_type") == report_table(summary, "by graph_type")
    schema = table.schema
    assert schema.field("meta_gap").type == pa.bool_() and schema.field("score_correct").type == pa.float64()
    assert schema.field("tags").type.equals(pa.list_(pa.string())) and schema.field("meta_graph_type").type == pa.string()


def test_several_runs_go_to_one_file_with_a_run_column(tmp_path):
    n2f("run", "dedc", "-n", "7", "--name", "a", "-q")
    n2f("run", "logic", "-n", "5", "--name", "b", "-q")
    lines = n2f("export", "a", "b", "--format", "jsonl").stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["run_name"] for r in rows] == ["a"] * 7 + ["b"] * 5
    assert {r["engine"] for r in rows} == {"dedc", "logic"}
    logic = rows[-1]
    assert logic["prompt"].count("---") >= 1 and len(logic["outputs"]) == 2  # both steps of the round trip
    assert "meta_graph_type" in rows[0] and rows[-1]["meta_graph_type"] is None  # a column of the other run
    header = n2f("export", "a", "b", "--format", "csv").stdout.splitlines()[0].split(",")
    assert header[:7] == ["run", "run_name", "engine", "model", "index", "id", "status"]


def test_the_export_streams_item_by_item(monkeypatch):
    """A run is read one item and one record at a time, never as a whole (the rows are made as they are written)."""
    import asyncio

    from sessions.reports.export import export_rows, plan_columns

    asyncio.run(make_run("stream", limit=30))
    store = RunStore.open("stream")
    monkeypatch.setattr(RunStore, "results", lambda self: pytest.fail("the whole log was read"))
    monkeypatch.setattr(RunStore, "items", lambda self: pytest.fail("every item was parsed"))
    rows = export_rows([store], plan_columns([store]))
    assert next(rows)["index"] == 1 and sum(1 for _ in rows) == 29


def test_a_jsonl_export_is_still_a_replay_file(tmp_path):
    n2f("run", "dedc", "-n", "9", "-m", "sim:error_rate=0.5", "--name", "src", "-q", "--seed", "4")
    out = tmp_path / "src.jsonl"
    n2f("export", "src", "--format", "jsonl", "-o", str(out))
    replayed = json.loads(n2f("run", "dedc", "-n", "9", "-m", f"replay:{out}", "--json", "-q", "--seed", "4").stdout)
    original = json.loads(n2f("report", "src", "--json").stdout)
    assert replayed["counts"] == original["counts"]
