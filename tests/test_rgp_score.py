"""rgp verdicts and reports from stored outputs (pure: no sandbox involved)."""

from __future__ import annotations

import json

import pytest

from engines import get_engine
from engines.core import ItemResult, RunResults
from engines.rgp.generate import build_items
from engines.rgp.settings import RgpSettings
from engines.rgp.simulate import enumeration_program, if_else_program
from engines.rgp.grids import Rule

ENGINE = get_engine("rgp")


@pytest.fixture(scope="module")
def item():
    return build_items(RgpSettings(setting="h", count=1), 0)[0]


def reply(program: str) -> str:
    return f"Here you go.\n```python\n{program}```\n"


def sandbox_report(item, stdouts=None, changes=None) -> str:
    """A tool output as sessions.tools.dispatch.python_sandbox writes it; by default every sample is right."""
    runs = []
    for i, sample in enumerate(item.inputs["samples"]):
        run = {"input": sample["input"], "stdout": sample["output"] + "\n", "stdout_truncated": False, "stderr": "",
               "exit_code": 0, "signal": "", "timed_out": False, "killed_by": "", "wall_s": 0.01}
        if stdouts is not None:
            run["stdout"] = stdouts[i]
        run.update((changes or {}).get(i, {}))
        runs.append(run)
    return json.dumps({"isolation": "rlimits+netns+private-tmpfs+unprivileged-uid", "timeout_s": 5.0, "runs": runs})


def rule_of(item) -> Rule:
    return Rule.from_json(item.gold["rule"])


def codes(verdict) -> list[str]:
    return [t.code for t in verdict.tags]


def test_correct_per_component_program(item):
    verdict = ENGINE.score(item, [reply(if_else_program(rule_of(item))), sandbox_report(item)], RgpSettings())
    assert verdict.status == "correct"
    assert verdict.scores == {"E": 0.0, "L_table": 40.0, "L": 40.0, "C": 100.0}
    assert codes(verdict) == ["T1"]
    kinds = {v.title: v.kind for v in verdict.views}
    assert kinds == {"Summary": "key-value", "Program": "code",
                     "Mapping table P+ (input component values -> output cells)": "table",
                     "Samples: expected and produced grids (failed first, wrong cells as X)": "table",
                     "Sandbox runs (stdout, and the tail of stderr)": "table"}
    summary = dict(verdict.views[0].data)
    assert summary["sandbox"] == "rlimits+netns+private-tmpfs+unprivileged-uid"
    assert summary["C(P)"] == "100.00" and summary["profile"] == "T1"


def test_enumeration_is_t2_with_c_0(item):
    samples = [(s["input"], s["output"]) for s in item.inputs["samples"]]
    verdict = ENGINE.score(item, [reply(enumeration_program(samples)), sandbox_report(item)], RgpSettings())
    assert verdict.status == "correct" and verdict.scores["L_table"] == 320 and verdict.scores["C"] == 0
    assert codes(verdict) == ["T2"]


def test_wrong_cells_are_counted_and_marked(item):
    stdouts = [s["output"] for s in item.inputs["samples"]]
    first = stdouts[0]
    stdouts[0] = ("." if first[0] == "*" else "*") + first[1:]
    stdouts[3] = "garbage"
    verdict = ENGINE.score(item, [reply(if_else_program(rule_of(item))), sandbox_report(item, stdouts)],
                           RgpSettings())
    assert verdict.status == "wrong" and verdict.scores["E"] == 2
    assert verdict.scores["L"] == 80 and verdict.scores["C"] == pytest.approx(100 * 240 / 280, abs=1e-4)
    assert codes(verdict) == ["T3"]
    samples = next(v for v in verdict.views if v.title.startswith("Samples")).data["rows"]
    assert [row[0] for row in samples[:2]] == [1, 4]  # the failed samples first, then the rest in order
    assert samples[0][3].startswith("X") and samples[0][4] == "wrong (1 cells)"
    assert samples[1][3] == "garbage" and samples[2][0] == 2 and samples[2][4] == "ok"


def test_timeouts_and_crashes_count_as_wrong_and_are_tagged(item):
    per = {
        0: {"stdout": "", "exit_code": None, "signal": "SIGKILL", "timed_out": True, "killed_by": "timeout",
            "wall_s": 5.0},
        1: {"stdout": "", "exit_code": 1, "stderr": "Traceback...\nKeyError: 'A C E G'"},
        2: {"exit_code": None, "signal": "SIGKILL", "killed_by": "output_limit"},
        3: {"exit_code": None, "signal": "SIGXCPU", "killed_by": "cpu_limit"},
        4: {"exit_code": 3},  # right output, odd exit status: passes, as in the paper's check
        5: {"stdout_truncated": True},
    }
    verdict = ENGINE.score(item, [reply(if_else_program(rule_of(item))), sandbox_report(item, None, per)],
                           RgpSettings())
    assert verdict.scores["E"] == 5
    by_code = {t.code: t.evidence for t in verdict.tags}
    assert set(by_code) == {"T3", "timeout", "runtime_error"}
    assert by_code["timeout"].startswith("2 of 16 samples (#1, 4)")
    assert by_code["runtime_error"].startswith("3 of 16 samples (#2, 3, 6)") and "KeyError" in by_code["runtime_error"]


def test_no_program(item):
    verdict = ENGINE.score(item, ["I cannot find a pattern."], RgpSettings())
    assert verdict.status == "unparseable" and codes(verdict) == ["no_program"]
    assert verdict.scores == {"E": 16.0, "L_table": 40.0, "L": 360.0, "C": 0.0}
    assert ENGINE.next_step(item, RgpSettings(), ["I cannot find a pattern."]) is None


def test_syntax_error_is_unparseable_with_position(item):
    program = "s = input().split()\nif s[0] == 'A'\n    print('**..')\n"
    verdict = ENGINE.score(item, [reply(program)], RgpSettings())
    assert verdict.status == "unparseable" and codes(verdict) == ["unparseable"]
    assert verdict.tags[0].evidence.startswith("line 3, column") or verdict.tags[0].evidence.startswith("line 2")
    assert verdict.scores["E"] == 16 and verdict.scores["C"] == 0
    summary = dict(verdict.views[0].data)
    assert summary["line"] in ("2", "3")
    assert ENGINE.next_step(item, RgpSettings(), [reply(program)]) is None


def test_fallback_format_is_tagged(item):
    text = f"Begin Code\n{'-' * 10}\n{if_else_program(rule_of(item))}{'-' * 10}\n"
    verdict = ENGINE.score(item, [text, sandbox_report(item)], RgpSettings())
    assert verdict.status == "correct" and codes(verdict) == ["T1", "format_violation"]


def test_missing_or_broken_sandbox_report_is_an_error_not_a_mistake(item):
    program = reply(if_else_program(rule_of(item)))
    alone = ENGINE.score(item, [program], RgpSettings())
    assert alone.status == "error" and alone.scores == {"L_table": 40.0}
    broken = ENGINE.score(item, [program, "{not json"], RgpSettings())
    assert broken.status == "error"
    short = json.loads(sandbox_report(item))
    short["runs"] = short["runs"][:3]
    assert ENGINE.score(item, [program, json.dumps(short)], RgpSettings()).status == "error"


def test_next_step_builds_the_tool_step(item):
    program_reply = reply(if_else_program(rule_of(item)))
    step = ENGINE.next_step(item, RgpSettings(timeout=2.5), [program_reply])
    assert step.kind == "tool" and step.tool == "python_sandbox" and not step.messages
    assert step.payload["inputs"] == [s["input"] for s in item.inputs["samples"]]
    assert step.payload["timeout"] == 2.5 and "grid.update" in step.payload["program"]
    assert ENGINE.next_step(item, RgpSettings(), [program_reply, sandbox_report(item)]) is None


def test_profile_thresholds_are_settings(item):
    outputs = [reply(if_else_program(rule_of(item))), sandbox_report(item, None, {0: {"stdout": "x"}})]
    assert codes(ENGINE.score(item, outputs, RgpSettings())) == ["T3"]
    assert codes(ENGINE.score(item, outputs, RgpSettings(errors_max=1))) == ["T1"]
    assert "E(P) = 1 <= 1" in ENGINE.score(item, outputs, RgpSettings(errors_max=1)).tags[0].evidence
    samples = [(s["input"], s["output"]) for s in item.inputs["samples"]]
    enum = [reply(enumeration_program(samples)), sandbox_report(item)]
    assert codes(ENGINE.score(item, enum, RgpSettings(compressed_max=320))) == ["T1"]


# ------------------------------------------------------------------- reports


def result(item, verdict, outputs) -> ItemResult:
    return ItemResult(item=item, status=verdict.status, scores=verdict.scores, tags=verdict.tags, outputs=outputs)


def test_report_tables_metrics_and_sandbox_note():
    items = build_items(RgpSettings(count=2), 0)
    results = []
    for n, item in enumerate(items):
        rule = rule_of(item)
        samples = [(s["input"], s["output"]) for s in item.inputs["samples"]]
        program = enumeration_program(samples) if n % 3 == 1 else if_else_program(rule)
        outputs = [reply(program), sandbox_report(item)] if n % 4 != 3 else ["no code"]
        results.append(result(item, ENGINE.score(item, outputs, RgpSettings(), with_views=False), outputs))
    other = RunResults("other", "model-b", RgpSettings(), results[:6])
    report = ENGINE.report(RunResults("run", "model-a", RgpSettings(), results), [other])
    tables = {t.name: t for t in report.tables}
    assert tables["Table 1"].columns == ["model", "Horizontal", "Block", "Vertical", "Random"]
    assert [row[0] for row in tables["Table 1"].rows] == ["model-a", "model-b"]
    assert tables["Table 1"].rows[1][4] == "-"  # model-b ran Horizontal, Block and Vertical only
    assert tables["Table 2"].columns[:4] == ["model", "RI(H)", "vs Horizontal", "SC(H+R)"]
    assert {"By setting", "Profiles", "Figure 3", "Tags", "Sandbox"} <= set(tables)
    assert "compressed: L(P+) <= 180" in tables["Profiles"].note
    points = {(row[0], row[1]): row[3] for row in tables["Figure 3"].rows}
    assert points[(40, 0)] == "T1" and points[(320, 0)] == "T2"
    m = report.metrics
    assert m["T1"] + m["T2"] == sum(r.status == "correct" for r in results)
    wrong_samples = [r.scores["E"] for r in results if r.status != "error"]  # of 16 samples per item
    assert m["in_sample_accuracy"] == pytest.approx(1 - sum(wrong_samples) / (16 * len(wrong_samples)), abs=1e-4)
    assert "mean_C_h" in m and "mean_C_hr" in m
    assert any(n.startswith("sandbox: rlimits+netns") for n in report.notes)
    assert {c.name for c in report.charts} == {"Figure 3", "Table 1"}


def test_report_says_plainly_when_only_rlimits_protected():
    item = build_items(RgpSettings(setting="h", count=1), 0)[0]
    report_json = json.loads(sandbox_report(item))
    report_json["isolation"] = "rlimits only (no user/network isolation available)"
    outputs = [reply(if_else_program(rule_of(item))), json.dumps(report_json)]
    verdict = ENGINE.score(item, outputs, RgpSettings())
    assert dict(verdict.views[0].data)["sandbox"].startswith("rlimits only")
    report = ENGINE.report(RunResults("run", "m", RgpSettings(), [result(item, verdict, outputs)]))
    assert any("only resource limits protected this machine" in n for n in report.notes)


def test_taxonomy_has_the_stable_codes():
    assert {"T1", "T2", "T3", "no_program", "runtime_error", "timeout", "unparseable"} <= {
        t.code for t in ENGINE.taxonomy()}
    assert ENGINE.main_score == "C"
