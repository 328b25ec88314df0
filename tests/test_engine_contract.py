"""Every registered engine honours the contract the runner, store, CLI and inspector rely on."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from engines import engine_names, get_engine
from engines.core import STATUSES, Item, ItemResult, RunResults, SimOptions, parse_settings, settings_fields
from sessions.tools import TOOLS, run_tool


@pytest.mark.parametrize("name", engine_names())
def test_engine_declares_what_the_harness_needs(name):
    engine = get_engine(name)
    assert engine.name == name and engine.title
    assert isinstance(engine.main_score, str) and engine.main_score
    assert set(engine.tools) <= set(TOOLS)
    codes = [t.code for t in engine.taxonomy()]
    assert len(codes) == len(set(codes))
    assert {"unparseable", "format_violation"} <= set(codes)
    settings = parse_settings(engine.settings_type, [])
    assert settings_fields(engine.settings_type)
    assert engine.templates(settings)


@pytest.mark.parametrize("name", engine_names())
def test_oracle_answers_score_correct_and_items_round_trip_json(name):
    engine = get_engine(name)
    settings = parse_settings(engine.settings_type, [])
    items = engine.items(settings, 0)[:5]
    assert items
    for item in items:
        assert Item.from_json(json.loads(json.dumps(item.to_json()))) == item
        outputs: list[str] = []
        while (step := engine.next_step(item, settings, outputs)) is not None:
            assert step.kind in ("model", "tool")
            if step.kind == "tool":  # executed as a run executes it (compost's query, rgp's sandbox)
                assert step.tool in engine.tools
                outputs.append(asyncio.run(run_tool(step.tool, step.payload)))
            else:
                outputs.append(engine.oracle(item, step, outputs))
        verdict = engine.score(item, outputs, settings)
        assert verdict.status in STATUSES
        assert verdict.status == "correct", (item.id, verdict.tags)
        assert engine.main_score in verdict.scores
        json.dumps(verdict.to_json())


def _simulated_results(engine, settings, items) -> list[ItemResult]:
    """Items walked step by step with the simulator (errors injected) and the real tools."""
    results = []
    for number, item in enumerate(items):
        outputs: list[str] = []
        while (step := engine.next_step(item, settings, outputs)) is not None:
            if step.kind == "tool":
                outputs.append(asyncio.run(run_tool(step.tool, step.payload)))
            else:
                outputs.append(engine.simulate(item, step, outputs, SimOptions(error_rate=0.5), number))
        verdict = engine.score(item, outputs, settings, with_views=False)
        results.append(ItemResult(item, verdict.status, verdict.scores, verdict.tags, outputs))
    return results


@pytest.mark.parametrize("name", engine_names())
def test_model_steps_and_report_inputs_are_declared_truly(name):
    """``model_steps`` is the number of model calls an item makes, and an engine that says its
    report does not read outputs reports the same without them (a report's results then carry none)."""
    engine = get_engine(name)
    settings = parse_settings(engine.settings_type, [])
    items = engine.items(settings, 0)[:6]
    outputs: list[str] = []
    calls = 0
    while (step := engine.next_step(items[0], settings, outputs)) is not None:
        calls += step.kind == "model"
        outputs.append(asyncio.run(run_tool(step.tool, step.payload)) if step.kind == "tool"
                       else engine.oracle(items[0], step, outputs))
    assert calls == engine.model_steps
    results = _simulated_results(engine, settings, items)
    bare = [ItemResult(r.item, r.status, r.scores, r.tags, []) for r in results]
    full = engine.report(RunResults("a", "sim", settings, results)).to_json()
    stripped = engine.report(RunResults("a", "sim", settings, bare)).to_json()
    if not engine.report_reads_outputs:
        assert full == stripped


def test_engines_with_tool_steps_reach_them_with_the_oracle():
    """The oracle test above really executes tools: each engine declaring one asks for it."""
    for name in engine_names():
        engine = get_engine(name)
        if not engine.tools:
            continue
        settings = parse_settings(engine.settings_type, [])
        item = engine.items(settings, 0)[0]
        outputs = [engine.oracle(item, engine.next_step(item, settings, []), [])]
        step = engine.next_step(item, settings, outputs)
        assert step is not None and step.kind == "tool" and step.tool in engine.tools, name


@pytest.mark.parametrize("name", [n for n in engine_names() if get_engine(n).tools])
def test_n2f_score_runs_the_tool_steps_of_one_output(name, tmp_path):
    """``n2f score ENGINE --item ITEM --output OUT``: the model output given, the tool step run (compost's
    query on the bundled graph, rgp's program in the sandbox), the verdict as JSON."""
    engine = get_engine(name)
    settings = parse_settings(engine.settings_type, [])
    item = engine.items(settings, 0)[0]
    item_file, output_file = tmp_path / "item.json", tmp_path / "output.txt"
    item_file.write_text(json.dumps(item.to_json()), encoding="utf-8")
    output_file.write_text(engine.oracle(item, engine.next_step(item, settings, []), []), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "n2f_tui", "score", name, "--item", str(item_file),
                           "--output", str(output_file)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "correct" and engine.main_score in verdict["scores"]
