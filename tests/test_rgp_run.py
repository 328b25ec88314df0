"""rgp end to end: tool steps in the runner, the run's sandbox meta, oracle and sim runs, rescore, show."""

from __future__ import annotations

import json

import pytest

from engines import get_engine
from engines.contract import Engine
from engines.core import Item, SimOptions, Step
from engines.rgp.generate import build_items
from engines.rgp.settings import RgpSettings
from n2f_tui.cli import main
from sessions import api
from sessions.backends.base import Backend, BackendError, ModelSpec
from sessions.backends.offline import OracleBackend
from sessions.run.runner import run_steps
from sessions.store.runs import RunStore
from sessions.tools.dispatch import run_tool
from official_data import DATA_ROOT

DATA = DATA_ROOT / "rgp"


class ModelOnlyBackend(Backend):
    """The oracle, refusing (loudly) any tool step: backends must never see one."""

    def __init__(self):
        self.spec = ModelSpec("oracle")
        self.inner = OracleBackend(ModelSpec("oracle"), get_engine("rgp"))
        self.kinds: list[str] = []

    async def complete(self, request):
        self.kinds.append(request.step.kind)
        assert request.step.kind == "model", "a tool step reached the backend"
        return await self.inner.complete(request)


async def test_tool_steps_go_to_the_tool_registry_not_the_backend():
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="v", count=1), 0)[0]
    backend = ModelOnlyBackend()
    trace = await run_steps(engine, item, RgpSettings(), backend, None, 0)
    assert trace.error == "" and backend.kinds == ["model"]
    assert len(trace.outputs) == 2 and [s["name"] for s in trace.steps] == ["program", "run"]
    report = json.loads(trace.outputs[1])
    assert len(report["runs"]) == 16 and report["isolation"]
    assert engine.score(item, trace.outputs, RgpSettings()).scores == {"E": 0.0, "L_table": 40.0, "L": 40.0, "C": 100.0}


class ToolEngine:
    """Asks for one tool step naming ``tool``."""

    def __init__(self, tool: str):
        self.tool = tool

    def next_step(self, item, settings, outputs, templates=None):
        return None if outputs else Step(name="t", kind="tool", tool=self.tool, payload={})

    next_call = Engine.next_call  # the runner asks through the contract's never-raising wrapper


async def test_an_unknown_tool_is_a_non_transient_backend_error():
    with pytest.raises(BackendError) as info:
        await run_tool("nope", {})
    assert info.value.transient is False and "unknown tool 'nope'" in str(info.value)
    item = Item(id="x", engine="fake", inputs={}, gold={})
    trace = await run_steps(ToolEngine("nope"), item, None, ModelOnlyBackend(), None, 0)
    assert "unknown tool" in trace.error and trace.outputs == []


async def test_a_malformed_payload_is_a_backend_error():
    with pytest.raises(BackendError, match="malformed payload"):
        await run_tool("python_sandbox", {"inputs": ["A C E G"]})


async def test_the_run_records_the_isolation_level():
    prepared = await api.prepare_run("rgp", ["setting=h", "count=2"], model="oracle")
    try:
        assert "+allowlist-root+" in prepared.store.meta["sandbox"]
        await prepared.runner.run()
    finally:
        prepared.store.close()
        await prepared.backend.aclose()
    other = await api.prepare_run("dedc", ["repeat=1"], model="oracle", limit=1)
    try:
        assert "sandbox" not in other.store.meta  # only engines that use the sandbox start it
    finally:
        other.store.close()


@pytest.mark.slow
def test_oracle_is_all_correct_for_every_setting(capsys):
    assert main(["run", "rgp", "-m", "oracle", "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 180 and report["counts"]["correct"] == 180 and report["accuracy"] == 1.0
    assert report["metrics"]["mean_E"] == 0 and report["metrics"]["mean_C"] == 100.0
    for setting in ("h", "b", "v", "r", "ri", "hr"):
        assert report["metrics"][f"mean_C_{setting}"] == 100.0


@pytest.mark.needs_data
@pytest.mark.slow
def test_sim_on_all_180_official_instances(capsys):
    assert main(["run", "rgp", "-m", "sim", "-s", f"dataset={DATA}", "--json", "-q", "--name", "official"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 180 and report["counts"]["error"] == 0
    assert {"T1", "T2", "T3"} <= set(report["tags"]) | set(report["tags_on_correct"])  # T1 profiles correct items too
    rows = {t["name"]: t for t in report["tables"]}
    assert [r[0] for r in rows["Table 1"]["rows"]] == ["sim"]
    assert any(note.startswith("sandbox: ") for note in report["notes"])


def test_rescore_and_show_never_execute(capsys, monkeypatch):
    assert main(["run", "rgp", "-m", "sim:error_rate=0.5", "-s", "setting=hr", "-s", "count=6", "-q", "--json",
                 "--name", "r"]) == 0
    before = json.loads(capsys.readouterr().out)

    def refuse(*args, **kwargs):
        raise AssertionError("the sandbox was asked to run something")

    monkeypatch.setattr("sessions.tools.sandbox.Sandbox.submit", refuse)
    assert main(["rescore", "r"]) == 0
    capsys.readouterr()
    assert main(["report", "r", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["metrics"] == before["metrics"] and after["counts"] == before["counts"]
    assert main(["show", "r", "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    views = shown["verdict"]["views"]
    if shown["record"]["status"] in ("correct", "wrong"):
        summary = dict(next(v for v in views if v["kind"] == "key-value")["data"])
        assert summary["sandbox"] == RunStore.open("r").meta["sandbox"]
        assert {v["kind"] for v in views} >= {"key-value", "code", "table"}
    assert main(["show", "r", "1"]) == 0
    assert "Summary" in capsys.readouterr().out


def test_cli_score_from_files(tmp_path, capsys):
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="b", count=1), 0)[0]
    reply = engine.oracle(item, None, [])
    (tmp_path / "item.json").write_text(json.dumps(item.to_json()))
    (tmp_path / "reply.txt").write_text(reply)
    runs = [{"input": s["input"], "stdout": s["output"], "stderr": "", "exit_code": 0, "signal": "",
             "timed_out": False, "killed_by": "", "wall_s": 0.01} for s in item.inputs["samples"]]
    (tmp_path / "run.json").write_text(json.dumps({"isolation": "rlimits only (no user/network isolation available)",
                                                  "timeout_s": 5, "runs": runs}))
    assert main(["score", "rgp", "--item", str(tmp_path / "item.json"), "--output", str(tmp_path / "reply.txt"),
                 "--output", str(tmp_path / "run.json")]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "correct" and verdict["scores"]["C"] == 100.0
    assert main(["score", "rgp", "--item", str(tmp_path / "item.json"), "--output", str(tmp_path / "reply.txt")]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "correct"  # the program's run step is executed


async def test_sim_replies_cover_every_profile():
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="hr", count=1), 0)[0]
    seen = {}
    for code in ("T2", "T3", "runtime_error", "no_program", "unparseable", "format_violation"):
        reply = engine.simulate(item, None, [], SimOptions(error=code), 1)
        outputs = [reply]
        step = engine.next_step(item, RgpSettings(), outputs)
        if step is not None:
            outputs.append(await run_tool(step.tool, step.payload))
        seen[code] = {t.code for t in engine.score(item, outputs, RgpSettings()).tags}
    assert "T2" in seen["T2"] and "T3" in seen["T3"] and "runtime_error" in seen["runtime_error"]
    assert seen["no_program"] == {"no_program"} and seen["unparseable"] == {"unparseable"}
    assert seen["format_violation"] == {"T1", "format_violation"}
    correct = engine.simulate(item, None, [], SimOptions(error_rate=0.0), 5)
    step = engine.next_step(item, RgpSettings(), [correct])
    verdict = engine.score(item, [correct, await run_tool(step.tool, step.payload)], RgpSettings())
    assert verdict.status == "correct" and {t.code for t in verdict.tags} == {"T1"}


async def test_sim_timeout_profile_costs_wall_time_not_cpu():
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="h", count=1), 0)[0]
    reply = engine.simulate(item, None, [], SimOptions(error="timeout"), 2)
    step = engine.next_step(item, RgpSettings(timeout=0.5), [reply])
    output = await run_tool(step.tool, step.payload)
    verdict = engine.score(item, [reply, output], RgpSettings())
    assert {t.code for t in verdict.tags} == {"T3", "timeout"} and verdict.scores["E"] == 1
