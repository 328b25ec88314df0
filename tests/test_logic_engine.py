"""The logic engine on the contract: steps, prompts, verdicts, views, report, and the CLI end to end."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from engines import engine_names, get_engine
from engines.core import Item, ItemResult, RunResults, SettingsError, SimOptions, Step, parse_settings
from engines.logic import ENGINE, prompts
from engines.logic.settings import LogicSettings
from engines.reporting import SET_ASIDE
from cli_support import n2f as cli_n2f

REPO = Path(__file__).resolve().parents[1]


def items(*pairs: str):
    return ENGINE.items(parse_settings(LogicSettings, list(pairs)), 0)


@pytest.fixture(scope="module")
def cnf_item() -> Item:
    return items("dataset=cnf", "count=3")[0]


@pytest.fixture(scope="module")
def fol_item() -> Item:
    return items("dataset=fol", "vocab=english", "count=12")[-1]


def run_steps(item: Item, answer, settings=None, templates=None) -> list[str]:
    outputs: list[str] = []
    while (step := ENGINE.next_step(item, settings or LogicSettings(), outputs, templates)) is not None:
        outputs.append(answer(step, outputs))
    return outputs


def test_registered():
    assert "logic" in engine_names()
    assert get_engine("logic") is ENGINE


# ------------------------------------------------------------------- steps


def test_two_steps_and_the_second_never_sees_the_formula(fol_item):
    formula = fol_item.inputs["formula"]
    step1 = ENGINE.next_step(fol_item, LogicSettings(), [])
    assert step1.name == prompts.FS_TO_NL and step1.template == prompts.FS_TO_NL
    assert len(step1.messages) == 1 and formula in step1.messages[0].content
    assert "Loves(?a, ?b): 2 arguments" in step1.messages[0].content
    description = "For every object x1, John loves x1."
    step2 = ENGINE.next_step(fol_item, LogicSettings(), [description])
    assert step2.name == prompts.NL_TO_FS
    assert [m.role for m in step2.messages] == ["user"]  # a fresh context: one message, no assistant turn
    text = step2.messages[0].content
    assert description in text and "Loves(?a, ?b): 2 arguments" in text
    assert formula not in text
    assert ENGINE.next_step(fol_item, LogicSettings(), [description, "∀x1 Loves(John, x1)"]) is None


@pytest.mark.parametrize("pairs", [["dataset=cnf"], ["dataset=random"], ["dataset=fol"],
                                   ["dataset=fol", "vocab=english"]])
def test_no_step_two_prompt_contains_its_formula(pairs):
    for item in items(*pairs, "count=60"):
        description = ENGINE.oracle(item, ENGINE.next_step(item, LogicSettings(), []), [])
        step2 = ENGINE.next_step(item, LogicSettings(), [description])
        assert item.inputs["formula"] not in step2.messages[0].content


def test_temperature_and_templates(cnf_item):
    assert ENGINE.next_step(cnf_item, LogicSettings(), []).params["temperature"] == 0.1
    hot = parse_settings(LogicSettings, ["temperature=0.7", "max_tokens=99"])
    assert dict(ENGINE.next_step(cnf_item, hot, []).params) == {"temperature": 0.7, "max_tokens": 99}
    names = ENGINE.templates(LogicSettings())
    assert set(names) == {prompts.FS_TO_NL, prompts.NL_TO_FS}
    edited = {prompts.FS_TO_NL: "Describe {formula} ({logic}), {{literally}}",
              prompts.NL_TO_FS: "Vocabulary:\n{vocabulary}\nText: {description}"}
    step1 = ENGINE.next_step(cnf_item, LogicSettings(), [], edited)
    assert step1.messages[0].content == f"Describe {cnf_item.inputs['formula']} (propositional), {{literally}}"
    step2 = ENGINE.next_step(cnf_item, LogicSettings(), ["words"], edited)
    assert step2.messages[0].content.endswith("Text: words") and "Propositions: x1, x2, x3" in step2.messages[0].content
    with pytest.raises(SettingsError, match=r"\{formula\}"):
        ENGINE.next_step(cnf_item, LogicSettings(), ["words"], {prompts.NL_TO_FS: "{formula}"})


# ----------------------------------------------------------------- scoring


def test_correct_round_trip(cnf_item):
    verdict = ENGINE.score(cnf_item, ["a description", cnf_item.inputs["formula"]])
    assert verdict.status == "correct" and verdict.correct
    assert verdict.scores == {"equivalent": 1.0, "unknown": 0.0, "truth_table_agreement": 1.0}
    assert verdict.tags == []


def truth_table_agreement(a: str, b: str) -> float:
    """The fraction of assignments on which two CNF texts agree, by Python's own ``and``/``or``/``not``."""
    names = sorted(set(re.findall(r"x\d+", a + b)))
    as_python = [compile(t.replace("¬", " not ").replace("∧", " and ").replace("∨", " or "), "cnf", "eval") for t in (a, b)]
    rows = [dict(zip(names, values)) for values in itertools.product([False, True], repeat=len(names))]
    return sum(eval(as_python[0], {}, row) == eval(as_python[1], {}, row) for row in rows) / len(rows)


def test_wrong_round_trip_with_views(cnf_item):
    formula = cnf_item.inputs["formula"]
    wrong = formula.replace("¬x1", "x1", 1) if "¬x1" in formula else formula.replace("x1", "¬x1", 1)
    verdict = ENGINE.score(cnf_item, ["a description", f"Here it is:\n```\n{wrong}\n```"],
                           LogicSettings(extract="lenient"))
    assert verdict.status == "unparseable"  # the strict verdict: the whole reply is not a formula
    assert verdict.scores["lenient_correct"] == 0.0 and verdict.scores["lenient_equivalent"] == 0.0
    assert {t.code for t in verdict.tags} == {"unparseable", "format_violation"}
    verdict = ENGINE.score(cnf_item, ["a description", wrong])
    assert verdict.status == "wrong"
    assert verdict.scores["equivalent"] == 0.0 and verdict.scores["unknown"] == 0.0
    assert verdict.scores["truth_table_agreement"] == truth_table_agreement(formula, wrong)
    codes = {t.code for t in verdict.tags}
    assert "negation_error" in codes
    views = {v.title: v for v in verdict.views}
    assert views["Original formula"].data == formula
    assert views["Description (step 1)"].data == "a description"
    assert views["Round-trip formula"].kind == "code"
    assert views["Original AST"].kind == "tree" and views["Round-trip AST"].kind == "tree"
    assert views["Original AST"].data["label"].startswith("∧ and")
    verdict_rows = dict(views["Verdict"].data)
    assert verdict_rows["verdict"] == "not equivalent"
    table = views["Countermodel (the two formulas differ here)"]
    assert table.kind == "table" and table.data["columns"] == ["symbol", "value"]
    values = dict(table.data["rows"])
    assert {values["original"], values["round trip"]} == {"true", "false"}
    assert views["Truth-table agreement"].kind == "key-value"
    assert views["Original vs round trip"].kind == "diff"
    assert json.dumps(verdict.to_json())  # views are plain data


def test_unparseable_reply(cnf_item):
    verdict = ENGINE.score(cnf_item, ["a description", "I could not work out the formula, sorry."])
    assert verdict.status == "unparseable"
    assert verdict.scores == {"equivalent": 0.0, "unknown": 0.0, "truth_table_agreement": 0.0}
    tag, = verdict.tags
    assert tag.code == "unparseable" and "line 1, column" in tag.evidence
    assert any(v.title == "Parse error" and "^" in v.data for v in verdict.views)
    assert ENGINE.score(cnf_item, ["only the description"]).status == "unparseable"
    assert ENGINE.score(cnf_item, []).status == "unparseable"


def test_fol_scores_have_no_truth_table(fol_item):
    verdict = ENGINE.score(fol_item, ["d", fol_item.inputs["formula"]])
    assert verdict.status == "correct" and "truth_table_agreement" not in verdict.scores


def test_timeout_is_wrong_with_unknown_flag_and_no_error_tags(monkeypatch, cnf_item):
    from engines.logic import score as logic_score
    from engines.logic.solver import Outcome

    monkeypatch.setattr(logic_score, "check_equivalence",
                        lambda *a, **k: Outcome("unknown", "unknown", "unknown", reason="timeout"))
    verdict = ENGINE.score(cnf_item, ["d", "x1 ∨ x2"])
    assert verdict.status == "wrong" and not verdict.correct
    assert verdict.scores["equivalent"] == 0.0 and verdict.scores["unknown"] == 1.0
    assert not any(t.code not in ("extra_operator", "format_violation", "copied_formula") for t in verdict.tags)
    rows = dict(next(v for v in verdict.views if v.title == "Verdict").data)
    assert rows["verdict"] == "unknown" and rows["why unknown"] == "timeout"


def test_a_spent_resource_budget_through_the_scorer():
    item = items("dataset=cnf", "count=1")[0]
    holes, pigeons = 8, 9
    clauses = [" ∨ ".join(f"p{p}h{h}" for h in range(holes)) for p in range(pigeons)]
    clauses += [f"¬p{p}h{h} ∨ ¬p{q}h{h}" for h in range(holes) for p in range(pigeons) for q in range(p + 1, pigeons)]
    hard = " ∧ ".join(f"({c})" for c in clauses)
    item = Item(item.id, item.engine, {**item.inputs, "formula": "q ∧ ¬q"}, {"formula": "q ∧ ¬q"}, item.meta)
    verdict = ENGINE.score(item, ["d", hard], parse_settings(LogicSettings, ["rlimit=20000"]), with_views=False)
    assert verdict.status == "wrong" and verdict.scores["unknown"] == 1.0


def test_huge_replies_are_judged_quickly(cnf_item):
    cpu = time.process_time()  # CPU, not wall time (Z3 runs in this thread): 0.3 s here
    garbage = ENGINE.score(cnf_item, ["x1 ∧ " * 200_000, "(" * 100_000])
    assert garbage.status == "unparseable" and "nested 100,000 deep" in garbage.tags[0].evidence  # the readers' bound
    huge = " ∨ ".join(f"x{i % 3 + 1}" if i % 2 else f"¬x{i % 3 + 1}" for i in range(1_500))
    verdict = ENGINE.score(cnf_item, ["d", huge])
    assert verdict.status == "wrong" and verdict.scores["unknown"] == 1.0  # beyond the solver's size cap
    assert "too large" in dict(verdict.views[0].data)["why unknown"]
    assert time.process_time() - cpu < 5


def test_copied_description_is_tagged_even_when_correct(cnf_item):
    formula = cnf_item.inputs["formula"]
    verdict = ENGINE.score(cnf_item, [f"The formula is {formula}.", formula])
    assert verdict.status == "correct"
    assert [t.code for t in verdict.tags] == ["copied_formula"]


# ------------------------------------------------------------------- report


def _results(item_list, statuses, tt=True):
    out = []
    for item, status in zip(item_list, statuses):
        scores = {"equivalent": float(status == "correct"), "unknown": float(status == "unknown")}
        if status == "unknown":
            scores[SET_ASIDE] = 1.0  # as the scorer marks a Z3 unknown
        if tt:
            scores["truth_table_agreement"] = 1.0 if status == "correct" else 0.5
        out.append(ItemResult(item, "wrong" if status == "unknown" else status, scores, []))
    return out


def test_report_tables_and_charts():
    cnf = items("dataset=cnf", "count=26")
    statuses = ["correct", "wrong", "unknown", "unparseable"] * 6 + ["correct", "error"]
    run = RunResults("r1", "sim", LogicSettings(), _results(cnf, statuses))
    report = ENGINE.report(run)
    tables = {t.name: t for t in report.tables}
    figure = tables["Figure 2"]
    assert figure.columns[:5] == ["operators", "n", "accuracy %", "95% CI", "truth-table agreement %"]
    # the error item is excluded, and the 6 unknown items are set aside (the paper threw out its timeouts)
    assert sum(row[1] for row in figure.rows) == 19
    assert sum(row[-2] for row in figure.rows) == 6  # ... and counted apart, in their own column
    assert {"by ratio", "Verdicts", "Errors"} <= set(tables)
    verdicts = dict(tables["Verdicts"].rows)
    assert verdicts["unknown (set aside)"] == 6 and verdicts["error"] == 1 and verdicts["equivalent"] == 7
    assert report.metrics["unknown"] == 6 and report.metrics["unknown_rate"] == pytest.approx(6 / 25)
    assert report.metrics["accuracy"] == pytest.approx(7 / 19)
    # the error item left out, the 6 unknown ones set aside: 7 correct at 1.0, 6 wrong and 6 unparseable at 0.5
    assert report.metrics["mean_truth_table_agreement"] == pytest.approx((7 * 1.0 + 12 * 0.5) / 19)
    charts = {c.name for c in report.charts}
    assert charts == {"Figure 2 accuracy", "Figure 2 truth table"}

    fol = items("dataset=fol", "vocab=english", "count=10")
    other = RunResults("r2", "sim", LogicSettings(dataset="fol"), _results(fol, ["correct"] * 10, tt=False))
    fol_report = ENGINE.report(other)
    assert fol_report.tables[0].name == "Figure 3 (bottom)"
    assert "truth-table agreement %" not in fol_report.tables[0].columns
    assert "mean_truth_table_agreement" not in fol_report.metrics
    both = ENGINE.report(run, [RunResults("r3", "other-model", LogicSettings(), _results(cnf, ["correct"] * 26))])
    comparison = next(t for t in both.tables if t.name == "Figure 2 (runs)")
    assert comparison.columns == ["operators", "sim (r1)", "other-model (r3)"]


# ------------------------------------------------------------------- sim / oracle


def test_oracle_answers(cnf_item):
    outputs = run_steps(cnf_item, lambda step, outs: ENGINE.oracle(cnf_item, step, outs))
    assert outputs[1] == cnf_item.inputs["formula"]
    assert "x1" in outputs[0] and cnf_item.inputs["formula"] not in outputs[0]
    assert ENGINE.score(cnf_item, outputs).status == "correct"


def test_sim_is_deterministic(fol_item):
    opts = SimOptions(error_rate=0.5, seed=4)
    first = run_steps(fol_item, lambda step, outs: ENGINE.simulate(fol_item, step, outs, opts, 11))
    again = run_steps(fol_item, lambda step, outs: ENGINE.simulate(fol_item, step, outs, opts, 11))
    assert first == again


def test_sim_rejects_unknown_errors(cnf_item):
    step = Step(name=prompts.FS_TO_NL)
    with pytest.raises(SettingsError, match="unknown error"):
        ENGINE.simulate(cnf_item, step, [], SimOptions(error="no_such_error"), 0)


# ------------------------------------------------------------------- CLI


def n2f(*args: str, home: Path) -> subprocess.CompletedProcess:
    return cli_n2f(*args, env={"N2F_HOME": str(home)})


@pytest.mark.slow
@pytest.mark.parametrize("pairs", [["dataset=cnf"], ["dataset=random"], ["dataset=fol", "vocab=symbolic"],
                                   ["dataset=fol", "vocab=english"]])
def test_oracle_run_is_always_correct(pairs, n2f_home):
    setting_args = [a for p in pairs for a in ("-s", p)]
    done = n2f("run", "logic", *setting_args, "-m", "oracle", "--json", "-q", home=n2f_home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n"] == 400 and report["accuracy"] == 1.0
    assert report["counts"]["correct"] == 400 and report["tags"] == {}


def test_sim_run_reports_figures_and_tags(n2f_home):
    done = n2f("run", "logic", "-s", "dataset=fol", "-s", "count=60", "-m", "sim:error_rate=0.6", "--json", "-q",
               home=n2f_home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {k: report["counts"][k] for k in ("correct", "wrong", "unparseable")} == {"correct": 28, "wrong": 27,
                                                                                     "unparseable": 5}  # seeded
    assert report["accuracy"] == pytest.approx(28 / 60)
    assert report["tags"] and "unknown" in report["metrics"]
    assert any(t["name"] == "Figure 3 (top)" for t in report["tables"])


def test_items_and_score_commands(n2f_home, tmp_path):
    done = n2f("items", "logic", "-s", "dataset=fol", "-s", "count=2", home=n2f_home)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout.splitlines()[0])
    assert {"formula", "logic", "vocabulary"} <= set(first["inputs"]) and "formula" in first["gold"]
    item_file, description, reply = tmp_path / "item.json", tmp_path / "d.txt", tmp_path / "f.txt"
    item_file.write_text(json.dumps(first), encoding="utf-8")
    description.write_text("some description", encoding="utf-8")
    reply.write_text(first["gold"]["formula"], encoding="utf-8")
    done = n2f("score", "logic", "--item", str(item_file), "--output", str(description), "--output", str(reply),
               home=n2f_home)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "correct" and verdict["scores"]["equivalent"] == 1.0


def test_bad_setting_exits_2(n2f_home):
    done = n2f("run", "logic", "-s", "k=5", "-m", "oracle", home=n2f_home)
    assert done.returncode == 2 and "k" in done.stderr and "Traceback" not in done.stderr
