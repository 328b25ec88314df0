"""DEDC run aggregation: accuracy, Table 1 (P_dc/P_c/D_c/D_d), Table 3, Tables 4/5, groupings."""

from __future__ import annotations

import json

import pytest

from engines.core import Item, ItemResult, RunResults, SimOptions, Tag
from engines.dedc import ENGINE
from engines.dedc.generate import build_items
from engines.dedc.settings import DedcSettings


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("N2F_HOME", str(tmp_path))


def _results(correct: int, n: int = 323, errors: int = 0, tags: dict[int, list[str]] | None = None) -> list[ItemResult]:
    out = []
    for i in range(n + errors):
        graph_type = ["0:view,view,view", "2:view,value,view", "10:view,view,value"][i % 3]
        item = Item(f"dedc-{i:03d}", "dedc", {}, {"answer": ""}, {"graph_type": graph_type, "gap": i % 10 < 7})
        if i >= n:
            status = "error"
        elif i < correct:
            status = "correct"
        else:
            status = "wrong"
        codes = (tags or {}).get(i, [])
        out.append(ItemResult(item, status, {"correct": float(status == "correct")},
                              [Tag(c, c, "evidence") for c in codes]))
    return out


def _run(correct: int, model: str = "gpt-4o", **settings) -> RunResults:
    return RunResults(f"{model}-{correct}", model, DedcSettings(**settings), _results(correct))


def _table(report, name):
    return next(t for t in report.tables if t.name == name)


def test_accuracy_interval_and_error_exclusion():
    run = RunResults("r", "m", DedcSettings(), _results(263, errors=5))
    report = ENGINE.report(run)
    assert report.metrics["accuracy"] == pytest.approx(263 / 323)
    lo, hi = report.metrics["accuracy_ci_low"], report.metrics["accuracy_ci_high"]
    # Wilson's 95% interval for 263 of 323, by its formula: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    assert (lo, hi) == pytest.approx((0.76822376, 0.85287248), abs=1e-8)
    acc = _table(report, "Accuracy")
    assert acc.rows == [[323, 263, 81.42, round(100 * lo, 2), round(100 * hi, 2)]]
    assert any("error" in note for note in report.notes)
    assert report.metrics["P_dc"] == 81.42 and "P_c" not in report.metrics
    json.dumps(report.to_json())


def test_table3_error_counts_and_groupings():
    tags = {300: ["primitive_confusion"], 301: ["primitive_confusion", "format_violation"],
            302: ["omission"], 5: ["format_violation"]}
    run = RunResults("r", "m", DedcSettings(), _results(290, tags=tags))
    report = ENGINE.report(run)
    table3 = _table(report, "Table 3")
    rows = {row[1]: row[2] for row in table3.rows}
    # item 5 is correct: its format_violation is a remark, not an error type of the table
    assert rows["primitive_confusion"] == 2 and rows["omission"] == 1 and rows["format_violation"] == 1
    assert rows["redundancy"] == "-"
    assert [row[1] for row in table3.rows][:6] == ["primitive_confusion", "primitive_fiction", "variable_misuse",
                                                   "redundancy", "omission", "incorrect_meaning"]
    by_type = _table(report, "by graph_type")
    assert [row[0] for row in by_type.rows] == ["0:view,view,view", "2:view,value,view", "10:view,view,value"]
    assert sum(row[1] for row in by_type.rows) == 323
    by_gap = _table(report, "by gap")
    assert {row[0] for row in by_gap.rows} == {"True", "False"}


def test_table1_pairs_runs_differing_only_in_primitives():
    # the paper's GPT-4o row: 81.42 / 94.74 / 5.26 / 13.31
    p_dc, p_c = _run(263), _run(306, primitives=True)
    for run, against in ((p_dc, [p_c]), (p_c, [p_dc])):
        report = ENGINE.report(run, against)
        assert report.metrics["P_dc"] == 81.42 and report.metrics["P_c"] == 94.74
        assert report.metrics["D_c"] == 5.26 and report.metrics["D_d"] == 13.31
        assert _table(report, "Table 1").rows == [["gpt-4o", 81.42, 94.74, 5.26, 13.31]]


def test_table1_needs_same_model_and_otherwise_equal_settings():
    run = _run(263)
    for other in (_run(306, model="claude", primitives=True), _run(306, primitives=True, names="cross"),
                  _run(306, primitives=True, shots=2)):
        report = ENGINE.report(run, [other])
        assert "D_d" not in report.metrics
        assert not any(t.name == "Table 1" for t in report.tables)


def test_table1_from_official_dataset_files():
    base = RunResults("a", "m", DedcSettings(dataset="/data/dedc/4_to_4_shot3.jsonl"), _results(263))
    prim = RunResults("b", "m", DedcSettings(dataset="/data/dedc/4_to_4_shot3_show_primitive.full.jsonl"),
                      _results(306))
    report = ENGINE.report(base, [prim])
    assert report.metrics["D_c"] == 5.26 and report.metrics["D_d"] == 13.31


def test_tables_4_and_5_against_the_base_pair():
    base = [_run(263), _run(306, primitives=True)]
    gap0 = [_run(280, gap="0"), _run(312, gap="0", primitives=True)]          # paper: 86.69 96.59 +1.86 +3.41
    anom = [_run(171, names="anomalous"), _run(281, names="anomalous", primitives=True)]  # 52.94 87.00 -7.74 -20.74
    report = ENGINE.report(gap0[0], base + gap0[1:] + anom)
    assert report.metrics["Delta_c"] == 1.86 and report.metrics["Delta_d"] == 3.41
    t4, t5 = _table(report, "Table 4"), _table(report, "Table 5")
    assert t4.rows == [["0% gap", "gpt-4o", 86.69, 96.59, 1.86, 3.41]]
    assert t5.rows == [["Anomalous", "gpt-4o", 52.94, 87.0, -7.74, -20.74]]
    assert t4.columns == ["setting", "model", "P^s_dc", "P^s_c", "Delta^s_c", "Delta^s_d"]
    # the base run sees the same tables, and its own Table 1
    report = ENGINE.report(base[0], base[1:] + gap0 + anom)
    assert _table(report, "Table 4").rows == t4.rows and "Delta_c" not in report.metrics
    assert _table(report, "Table 1").rows == [["gpt-4o", 81.42, 94.74, 5.26, 13.31]]


def test_no_setting_tables_without_a_complete_base_pair():
    report = ENGINE.report(_run(280, gap="0"), [_run(312, gap="0", primitives=True), _run(263)])
    assert not any(t.name in ("Table 4", "Table 5") for t in report.tables)
    assert report.metrics["D_c"] == pytest.approx(3.41, abs=0.01)


def test_report_on_real_scored_items():
    items = build_items(DedcSettings(), 0)[:60]
    results = []
    for k, item in enumerate(items):
        text = ENGINE.simulate(item, ENGINE.next_step(item, DedcSettings(), []), [], SimOptions(error_rate=0.5), k)
        verdict = ENGINE.score(item, [text], DedcSettings())
        results.append(ItemResult(item, verdict.status, verdict.scores, verdict.tags, [text]))
    report = ENGINE.report(RunResults("r", "sim", DedcSettings(), results))
    judged = [r for r in results if r.status != "error"]
    assert report.metrics["accuracy"] == pytest.approx(sum(r.status == "correct" for r in judged) / len(judged))
    counted = sum(row[2] for row in _table(report, "Table 3").rows if row[2] != "-" and row[1] != "format_violation")
    assert counted >= sum(r.status == "wrong" for r in results)
