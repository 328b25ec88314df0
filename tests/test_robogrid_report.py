"""Run aggregation (Table 2, Table 3, Figure 2, by-dimension tables) and the inspector's views."""

from __future__ import annotations

import json

from engines.core import Item, ItemResult, RunResults, SimOptions, Tag, parse_settings
from engines.robogrid import ENGINE
from engines.robogrid.generate import make_item
from engines.robogrid.grammars import grammar_for
from engines.robogrid.lexicon import natural_lexicon
from engines.robogrid.nodes import Arith, Loop, Move, Num, Program, Turn
from engines.robogrid.settings import RobogridSettings

STANDARD = {"style": "block", "lexicon": "alien", "expr_depth": 2, "else_prob": 0.5, "depth": 10}


def result(task: str, svr: float, ber: float = 0.0, scr: float = 0.0, status: str = "", tags=(), **meta) -> ItemResult:
    keys = {"judge": ("svr",), "goal": ("svr", "ber"), "instruct": ("svr", "ber", "scr")}[task]
    scores = {k: v for k, v in (("svr", svr), ("ber", ber), ("scr", scr)) if k in keys}
    top = scores[keys[-1]]
    status = status or ("correct" if top else "unparseable" if not svr else "wrong")
    item = Item(f"i{id(scores)}", "robogrid", {}, {}, {"task": task, **STANDARD, "shots": 0, "cot": True, **meta})
    return ItemResult(item, status, scores, [Tag(c, c, "e") for c in tags])


def table(report, name):
    return next(t for t in report.tables if t.name == name)


def test_table2_has_the_papers_columns_and_conditional_rates():
    results = ([result("judge", 1.0)] * 3 + [result("judge", 0.0, status="wrong")]
               + [result("goal", 1, 1)] * 2 + [result("goal", 1, 0)] * 2
               + [result("instruct", 1, 1, 1)] + [result("instruct", 1, 1, 0)] + [result("instruct", 0)] * 2)
    report = ENGINE.report(RunResults("r", "m", RobogridSettings(), results))
    t2 = table(report, "Table 2")
    assert t2.columns == ["model", "judge SVR", "goal SVR", "goal BER", "goal CBER", "instruct SVR", "instruct BER",
                          "instruct SCR", "instruct CBER", "instruct CSCR"]
    assert t2.rows == [["m", 75.0, 100.0, 50.0, 50.0, 50.0, 50.0, 25.0, 100.0, 50.0]]
    m = report.metrics
    assert (m["svr"], m["ber"], m["scr"], m["cber"], m["cscr"]) == (0.5, 0.5, 0.25, 1.0, 0.5)
    assert m["judge_svr"] == 0.75 and m["goal_cber"] == 0.5 and "judge_ber" not in m
    assert any("instruct task's" in note for note in report.notes)
    json.dumps(report.to_json())


def test_a_single_task_run_reports_only_what_the_task_defines():
    report = ENGINE.report(RunResults("r", "m", RobogridSettings(task="judge"), [result("judge", 1.0)]))
    assert report.metrics["svr"] == 1.0 and "ber" not in report.metrics and "scr" not in report.metrics
    assert table(report, "Table 2").rows[0][2:] == ["-"] * 8
    empty = ENGINE.report(RunResults("r", "m", RobogridSettings(), []))
    assert empty.metrics == {"accuracy": 0.0}


def test_other_models_get_their_own_table2_row():
    mine = RunResults("a", "model-a", RobogridSettings(), [result("instruct", 1, 1, 1)])
    theirs = RunResults("b", "model-b", RobogridSettings(), [result("instruct", 1, 0, 0)])
    rows = table(ENGINE.report(mine, [theirs]), "Table 2").rows
    assert [r[0] for r in rows] == ["model-a", "model-b"] and rows[1][6] == 0.0


def test_table3_compares_one_dimension_at_a_time_with_the_standard():
    results = ([result("instruct", 1, 1, 1)] * 2
               + [result("instruct", 1, 1, 0, else_prob=0.0)] * 2
               + [result("instruct", 0, style="sexpr")]
               + [result("instruct", 1, 1, 1, style="c", lexicon="natural")])
    report = ENGINE.report(RunResults("r", "m", RobogridSettings(), results))
    rows = table(report, "Table 3").rows
    assert rows[0] == ["instruct", "Baseline", "Standard", 2, 100.0, 100.0, 100.0]
    assert ["instruct", "Control flow density (p)", "else_prob=0.0", 2, 100.0, 100.0, 0.0] in rows
    assert ["instruct", "Syntactic style", "style=sexpr", 1, 0.0, 0.0, 0.0] in rows
    assert len(rows) == 3 and any("more than one dimension" in n for n in report.notes)


def test_figure2_and_the_by_dimension_tables_group_by_meta():
    results = [result("instruct", 1, 1, 1, depth=d) for d in (2, 2, 5)] + [result("instruct", 1, 0, 0, depth=20)]
    report = ENGINE.report(RunResults("r", "m", RobogridSettings(), results))
    charts = {c.title: c.series for c in report.charts}
    assert charts["SCR by recursion depth (instruct)"] == {"D=2": 100.0, "D=5": 100.0, "D=20": 0.0}
    assert all(c.name == "Figure 2" and c.unit == "%" for c in report.charts)
    by_depth = table(report, "by depth")
    assert [r[1] for r in by_depth.rows] == ["2", "5", "20"]
    names = {t.name for t in report.tables}
    assert names >= {"by depth", "by else_prob", "by expr_depth", "by style", "by lexicon", "Appendix A.4"}
    assert "by shots" not in names and "by cot" not in names  # not varied here


def test_runs_of_the_same_model_pool_into_the_ablations():
    base = RunResults("a", "m", RobogridSettings(), [result("instruct", 1, 1, 1)])
    natural = RunResults("b", "m", RobogridSettings(lexicon="natural"), [result("instruct", 1, 1, 0,
                                                                                lexicon="natural")])
    rows = table(ENGINE.report(base, [natural]), "Table 3").rows
    assert ["instruct", "Lexical familiarity", "lexicon=natural", 1, 100.0, 100.0, 0.0] in rows


def test_the_tag_table_counts_items_per_failure_mode():
    results = [result("instruct", 1, 1, 0, tags=["arithmetic_flattening"]),
               result("instruct", 0, tags=["unparseable", "premature_scope_termination"])]
    rows = {r[1]: r[2] for r in table(ENGINE.report(RunResults("r", "m", None, results)), "Appendix A.4").rows}
    assert rows["arithmetic_flattening"] == 1 and rows["premature_scope_termination"] == 1
    assert rows["boolean_flattening"] == "-"


def test_a_simulated_run_reports_end_to_end():
    s = parse_settings(RobogridSettings, ["task=judge,goal,instruct", "count=10", "depth=2,6"])
    results = []
    for k, it in enumerate(ENGINE.items(s, 0)):
        reply = ENGINE.simulate(it, None, [], SimOptions(error_rate=0.4), k)
        v = ENGINE.score(it, [reply], s, with_views=False)
        results.append(ItemResult(it, v.status, v.scores, v.tags, [reply]))
    report = ENGINE.report(RunResults("r", "sim", s, results))
    assert 0 < report.metrics["scr"] <= report.metrics["ber"] <= report.metrics["svr"] <= 1
    assert len(report.charts) == 3 and report.tables[0].name == "Table 2"
    json.dumps(report.to_json())


# ------------------------------------------------------------------ views


def _item() -> Item:
    program = Program((Loop(Arith("+", Arith("*", Num(4), Num(4)), Num(3)), (Turn("left"),)),
                       Move("forward", Num(3))))
    return make_item("v", "instruct", program, grammar_for("block", natural_lexicon("exec")), meta={"cot": False})


def test_views_show_both_trees_with_the_first_difference_marked():
    it = _item()
    verdict = ENGINE.score(it, [it.gold["program"].replace("((4 * 4) + 3)", "19")], None)
    kinds = {v.kind for v in verdict.views}
    assert {"key-value", "diff", "tree", "table", "grid", "code", "text"} <= kinds
    views = {v.title: v.data for v in verdict.views}
    diff = views["AST (style-independent; >> marks the first difference)"]
    assert diff["left"].splitlines()[0] == ">> loop 19:" and diff["right"].splitlines()[0] == ">> loop ((4 * 4) + 3):"
    assert views["Output AST"]["children"][0]["label"].endswith("<-- first difference")
    assert views["First structural difference"][0][1] == "body[0]: count 19 where the gold has ((4 * 4) + 3)"
    states = views["Final states"]
    assert states["columns"] == ["", "start", "output", "gold"] and states["rows"][0] == ["x", "0", "3", "3"]
    assert views["Execution trace (output)"]["rows"][0][:3] == ["1", "body[0]", "loop 19: iteration 1/19"]
    grid = next(v for v in verdict.views if v.kind == "grid").data
    assert len({len(row) for row in grid}) == 1 and any("S" in row for row in grid)
    assert "LOOP" in views["Grammar (EBNF)"]
    json.dumps([v.to_json() for v in verdict.views])


def test_an_unparseable_reply_shows_the_error_in_context():
    it = _item()
    verdict = ENGINE.score(it, ["loop 3 times [\n  exec turn lft end\n]"], None)
    views = {v.title: v.data for v in verdict.views}
    assert views["Parse error"] == "  exec turn lft end\n            ^"
    summary = dict(views["Summary"])
    assert (summary["line"], summary["column"]) == ("2", "13") and "LEFT" in summary["expected"]
    assert verdict.to_json(with_views=False).keys() == {"status", "correct", "scores", "tags"}


def test_judge_views_show_where_the_candidate_breaks():
    s = parse_settings(RobogridSettings, ["task=judge", "count=2"])
    invalid = ENGINE.items(s, 0)[1]
    verdict = ENGINE.score(invalid, ["ANSWER: VALID"], s)
    views = {v.title: v for v in verdict.views}
    broken = next(v for t, v in views.items() if t.startswith("The candidate does not parse"))
    assert broken.kind == "code" and "^" in broken.data
    assert dict(views["Summary"].data)["perturbation"] == invalid.gold["perturbation"]
