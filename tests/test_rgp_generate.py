"""rgp items: the generator reproduces the official files; official files load in their order."""

from __future__ import annotations

import json
import shutil

import pytest

from engines import get_engine
from engines.core import DataError, SettingsError, parse_settings
from engines.rgp.generate import FILE_TYPES, build_items, data_file_name
from engines.rgp.grids import Rule, infer_rule, parse_input
from engines.rgp.settings import SETTINGS, RgpSettings
from n2f_tui.cli import main
from official_data import DATA_ROOT

DATA = DATA_ROOT / "rgp"


def official(setting: str) -> tuple[list[dict], list[dict]]:
    name = data_file_name(setting)
    rows = [json.loads(line) for line in (DATA / name).read_text().splitlines()]
    metas = [json.loads(line) for line in (DATA / name.replace(".jsonl", ".meta.jsonl")).read_text().splitlines()]
    return rows, metas


@pytest.mark.needs_data
@pytest.mark.parametrize("setting", SETTINGS)
def test_seed_0_reproduces_the_official_file(setting):
    items = build_items(RgpSettings(setting=setting), seed=0)
    rows, metas = official(setting)
    assert len(items) == len(rows) == 30
    for item, row, meta in zip(items, rows, metas):
        assert [s["input"] for s in item.inputs["samples"]] == row["input"]
        assert [s["output"] for s in item.inputs["samples"]] == row["output"]
        assert Rule.from_json(item.gold["rule"]) == Rule.from_json(meta)


def test_settings_follow_the_papers_rules():
    items = build_items(RgpSettings(count=10), seed=7)
    assert [i.meta["setting"] for i in items[::10]] == list(SETTINGS)
    assert len({i.id for i in items}) == 60
    for item in items:
        rule = Rule.from_json(item.gold["rule"])
        setting = item.meta["setting"]
        assert sorted(c for cells in rule.control for c in cells) == [(r, c) for r in range(4) for c in range(4)]
        for i in range(4):
            a, b = rule.value_bits[i]
            assert all(x != y for x, y in zip(a, b))  # the two values are complementary patterns
        if setting == "ri":
            assert rule.input_index != (0, 1, 2, 3)
        else:
            assert rule.input_index == (0, 1, 2, 3)
        if setting == "hr":
            rows = [i for i, cells in enumerate(rule.control) if cells == tuple((i, j) for j in range(4))]
            assert len(rows) == 2
        assert sorted(s["input"] for s in item.inputs["samples"]) == sorted(
            " ".join(chr(65 + 2 * i + ((b >> (3 - i)) & 1)) for i in range(4)) for b in range(16))
        assert all(rule.apply(s["input"]) == s["output"] for s in item.inputs["samples"])


def test_generation_is_deterministic_and_seeded():
    a = [i.to_json() for i in build_items(RgpSettings(setting="r", count=5), 3)]
    b = [i.to_json() for i in build_items(RgpSettings(setting="r", count=5), 3)]
    c = [i.to_json() for i in build_items(RgpSettings(setting="r", count=5), 4)]
    assert a == b and a != c


@pytest.mark.needs_data
def test_dataset_file_and_folder():
    one = build_items(parse_settings(RgpSettings, [f"dataset={DATA / data_file_name('v')}"]), 0)
    assert [i.id for i in one[:2]] == ["rgp-v-000", "rgp-v-001"] and len(one) == 30
    assert one[0].meta["source"] == "official:" + data_file_name("v")
    everything = build_items(RgpSettings(dataset=str(DATA)), 0)
    assert len(everything) == 180
    assert [i.meta["setting"] for i in everything[::30]] == list(SETTINGS)
    only_hr = build_items(RgpSettings(dataset=str(DATA), setting="hr", count=4), 0)
    assert [i.id for i in only_hr] == [f"rgp-hr-00{n}" for n in range(4)]


@pytest.mark.needs_data
def test_without_a_meta_file_the_rule_is_inferred(tmp_path):
    shutil.copy(DATA / data_file_name("r"), tmp_path / data_file_name("r"))
    items = build_items(RgpSettings(dataset=str(tmp_path / data_file_name("r"))), 0)
    for item in items:
        rule = Rule.from_json(item.gold["rule"])
        assert all(rule.apply(s["input"]) == s["output"] for s in item.inputs["samples"])


def test_infer_rule_refuses_samples_no_rule_fits():
    samples = [(s, "....\n....\n....\n....") for s in ("A C E G", "B D F H")]
    assert infer_rule(samples) is None
    assert infer_rule([("nonsense", "x")]) is None


@pytest.mark.parametrize("content,message", [
    ("not json\n", "not JSON"),
    ('{"input": ["A C E G"], "output": []}\n', "equal length"),
    ('{"input": ["A C E G"], "output": ["...."]}\n', "16 string samples"),
])
def test_malformed_dataset_files(tmp_path, content, message):
    path = tmp_path / data_file_name("h")
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        build_items(RgpSettings(dataset=str(path)), 0)


def test_bad_dataset_paths(tmp_path):
    with pytest.raises(DataError, match="not found"):
        build_items(RgpSettings(dataset=str(tmp_path / data_file_name("h"))), 0)
    (tmp_path / "other.jsonl").write_text("{}\n")
    with pytest.raises(DataError, match="not an rgp dataset file name"):
        build_items(RgpSettings(dataset=str(tmp_path / "other.jsonl")), 0)
    with pytest.raises(DataError, match="no rgp dataset files"):
        build_items(RgpSettings(dataset=str(tmp_path)), 0)


def test_settings_are_validated():
    with pytest.raises(SettingsError, match="setting"):
        parse_settings(RgpSettings, ["setting=diagonal"])
    with pytest.raises(SettingsError):
        parse_settings(RgpSettings, ["count=0"])
    assert parse_settings(RgpSettings, ["setting=ri", "count=2"]).setting == "ri"
    assert set(FILE_TYPES) == set(SETTINGS)


def test_rule_and_input_parsing_reject_garbage():
    assert parse_input("B C F G") == (1, 0, 1, 0)
    for bad in ("A C E", "A B E G", "AC E G H", "a c e g"):
        with pytest.raises(ValueError):
            parse_input(bad)
    with pytest.raises(ValueError):
        Rule.from_json({"control": [[[0, 0]]], "value_bits": []})


def test_cli_items_prints_the_samples(capsys):
    assert main(["items", "rgp", "-s", "setting=b", "-s", "count=2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["id"] for x in lines] == ["rgp-b-000", "rgp-b-001"]
    assert len(lines[0]["inputs"]["samples"]) == 16 and lines[0]["engine"] == "rgp"


def test_cli_bad_dataset_is_one_line_and_status_2(capsys, tmp_path):
    assert main(["items", "rgp", "-s", f"dataset={tmp_path / 'missing.jsonl'}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("n2f: error:") and len(err.strip().splitlines()) == 1


def test_prompt_is_the_papers():
    engine = get_engine("rgp")
    item = build_items(RgpSettings(setting="h", count=1), 0)[0]
    step = engine.next_step(item, RgpSettings(), [])
    text = step.messages[0].content
    assert text.startswith("Write a Python program that conforms to the following samples. You should try to find "
                           "patterns in the samples, but it is permissible to use the samples directly in your "
                           "program.\nInput:\n")
    first = item.inputs["samples"][0]
    assert f"Input:\n{first['input']}\nOutput:\n{first['output']}\nInput:\n" in text
    assert text.count("Input:\n") == 16 and text.endswith("\n")
    assert step.kind == "model" and step.params["temperature"] == 0.0
    with pytest.raises(SettingsError, match="unknown placeholder"):
        engine.next_step(item, RgpSettings(), [], {"program": "{oops}"})
