"""Every registered engine honours the contract the runner, store, CLI and inspector rely on."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

import dataclasses
import inspect
from typing import get_args

from engines import engine_names, get_engine
from engines.contract import Engine, Unit
from engines.core import STATUSES, Item, ItemResult, RunResults, SimOptions, parse_settings, settings_fields
from sessions.tools.dispatch import TOOLS, run_tool

OPERATIONS = [name for name, member in inspect.getmembers(Engine, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("name", engine_names())
def test_engine_fills_in_every_operation_of_the_contract_with_its_signature(name):
    engine = get_engine(name)
    assert isinstance(engine, Engine)
    assert dataclasses.is_dataclass(engine.settings_type) and engine.settings_type.__dataclass_params__.frozen
    for operation in OPERATIONS:
        mine = inspect.signature(getattr(type(engine), operation))
        contract = inspect.signature(getattr(Engine, operation))
        assert list(mine.parameters) == list(contract.parameters), (name, operation)
        assert [p.default for p in mine.parameters.values()] == [p.default for p in contract.parameters.values()]


def run_item(engine, item, settings, reply) -> ItemResult:
    """One item through its steps, model steps answered by ``reply``, tool steps executed."""
    outputs: list[str] = []
    while (step := engine.next_step(item, settings, outputs)) is not None:
        if step.kind == "tool":
            outputs.append(asyncio.run(run_tool(step.tool, step.payload)))
        else:
            outputs.append(reply(item, step, outputs))
    verdict = engine.score(item, outputs, settings, with_views=False)
    return ItemResult(item, verdict.status, verdict.scores, verdict.tags, outputs)


@pytest.mark.parametrize("name", engine_names())
def test_the_list_score_is_in_0_1_and_never_ranks_a_wrong_item_above_a_correct_one(name):
    engine = get_engine(name)
    settings = parse_settings(engine.settings_type, [])
    items = engine.items(settings, 3)[: 8 if engine.tools else 40]
    options = SimOptions(error_rate=0.6, seed=3)
    found: dict[str, list[float]] = {}
    for index, item in enumerate(items):
        result = run_item(engine, item, settings, lambda it, step, outs: engine.simulate(it, step, outs, options, index))
        status, scores = result.status, result.scores
        score = engine.list_score(status, scores)
        assert score is not None and 0.0 <= score <= 1.0, (item.id, status, scores)
        found.setdefault(status, []).append(score)
    assert "correct" in found and len(found) > 1, found
    failed = [s for status, scores in found.items() if status != "correct" for s in scores]
    assert max(failed) < min(found["correct"]) == 1.0, found


def test_robogrid_lists_an_instruct_item_by_its_scr_not_its_ber():
    """Instruct is correct when SCR = 1; a wrong tree that still ends in the right state (BER = 1) lists lower."""
    engine = get_engine("robogrid")
    right = engine.list_score("correct", {"svr": 1.0, "ber": 1.0, "scr": 1.0})
    same_state = engine.list_score("wrong", {"svr": 1.0, "ber": 1.0, "scr": 0.0})
    goal_reached = engine.list_score("correct", {"svr": 1.0, "ber": 1.0})
    assert same_state < right == goal_reached == 1.0


def test_rgp_lists_samples_right_not_its_0_to_100_compositionality():
    """A correct lookup table (C low) still lists above a wrong compact program (C high)."""
    engine = get_engine("rgp")
    table = engine.list_score("correct", {"E": 0.0, "L_table": 200.0, "L": 200.0, "C": 42.8571})
    compact = engine.list_score("wrong", {"E": 1.0, "L_table": 48.0, "L": 68.0, "C": 90.0})
    assert compact < table == 1.0
    assert engine.list_score("error", {"L_table": 48.0}) is None


@pytest.mark.parametrize("name", engine_names())
def test_engine_declares_what_the_harness_needs(name):
    engine = get_engine(name)
    assert engine.name == name and engine.title
    assert isinstance(engine.main_score, str) and engine.main_score
    assert set(engine.tools) <= set(TOOLS)
    assert isinstance(engine.model_steps, int) and engine.model_steps >= 1
    codes = [t.code for t in engine.taxonomy()]
    assert len(codes) == len(set(codes))
    assert {"unparseable", "format_violation"} <= set(codes)
    settings = parse_settings(engine.settings_type, [])
    assert settings_fields(engine.settings_type)
    assert engine.templates(settings)
    metrics = engine.parts.metrics  # how reports label the engine's figures, its headline among them
    assert metrics and any(m.headline for m in metrics)
    assert {m.unit for m in metrics} <= set(get_args(Unit))


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


@pytest.mark.parametrize("name", engine_names())
def test_model_steps_and_report_inputs_are_declared_truly(name):
    """``model_steps`` is the number of model calls an item makes, and an engine that says its
    report does not read outputs reports the same without them (a report's results then carry none)."""
    engine = get_engine(name)
    settings = parse_settings(engine.settings_type, [])
    items = engine.items(settings, 0)[:6]
    calls: list[str] = []

    def oracle(item, step, outputs):
        calls.append(step.name)
        return engine.oracle(item, step, outputs)

    run_item(engine, items[0], settings, oracle)
    assert len(calls) == engine.model_steps
    options = SimOptions(error_rate=0.5)
    results = [run_item(engine, item, settings, lambda it, step, outs, k=k: engine.simulate(it, step, outs, options, k))
               for k, item in enumerate(items)]
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


@pytest.mark.slow
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
