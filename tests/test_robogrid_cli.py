"""RoboGrid through the real ``n2f`` entry point (the CLI's ``main``, in the test process)."""

from __future__ import annotations

import json
from functools import partial

import pytest

from engines import engine_names, get_engine
from cli_support import n2f as cli_n2f


n2f = partial(cli_n2f, check=True)


def test_the_engine_is_registered():
    assert "robogrid" in engine_names() and get_engine("robogrid").name == "robogrid"


@pytest.mark.slow
@pytest.mark.parametrize("task, keys", [("judge", {"svr"}), ("goal", {"svr", "ber"}),
                                        ("instruct", {"svr", "ber", "scr"})])
def test_the_oracle_scores_100_percent_on_every_task(task, keys):
    report = json.loads(n2f("run", "robogrid", "-s", f"task={task}", "-m", "oracle", "--json", "-q").stdout)
    assert report["engine"] == "robogrid" and report["n"] == 200
    assert report["counts"]["correct"] == 200 and report["accuracy"] == 1.0 and report["tags"] == {}
    for key in keys:
        assert report["metrics"][key] == 1.0, key
    assert {"svr", "ber", "scr"} - keys == {"svr", "ber", "scr"} - set(report["metrics"])  # undefined keys absent


def test_a_simulated_run_tags_failures_and_keeps_the_containment():
    report = json.loads(n2f("run", "robogrid", "-s", "count=60", "-s", "depth=4", "-m", "sim:error_rate=0.5",
                            "--json", "-q").stdout)
    m = report["metrics"]
    assert m["scr"] <= m["ber"] <= m["svr"] < 1.0
    assert report["tags"] and set(report["tags"]) <= {t.code for t in get_engine("robogrid").taxonomy()}
    assert {t["name"] for t in report["tables"]} >= {"Table 2", "Table 3", "by depth", "Appendix A.4"}


def test_items_print_the_documented_fields(tmp_path):
    lines = n2f("items", "robogrid", "-s", "task=goal,instruct", "-s", "count=2", "-s", "style=sexpr").stdout
    items = [json.loads(line) for line in lines.splitlines()]
    assert len(items) == 4
    for item in items:
        assert {"id", "engine", "inputs", "gold", "meta"} <= set(item)
        assert item["gold"]["program"].startswith("(") and item["inputs"]["grammar"].startswith("start:")
        assert item["meta"]["style"] == "sexpr"
    path = tmp_path / "item.json"
    path.write_text(json.dumps(items[1]))
    out = tmp_path / "out.txt"
    out.write_text(items[1]["gold"]["program"].replace(")", "", 1))
    verdict = json.loads(n2f("score", "robogrid", "--item", str(path), "--output", str(out)).stdout)
    assert verdict["status"] == "unparseable" and verdict["scores"]["svr"] == 0.0
    assert any(v["kind"] == "code" and "^" in v["data"] for v in verdict["views"])


def test_bad_settings_are_one_clear_line():
    result = n2f("run", "robogrid", "-s", "depth=25", "-m", "oracle", check=False)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "depth" in lines[0] and "2..20" in lines[0] and "Traceback" not in result.stderr
