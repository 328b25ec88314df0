"""A study across machines: two annotators on two homes label the same 30-item sample blind, their
events are merged into a third home, and agreement, the adjudication queue and the settled labels
come out as worked by hand."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from n2f_tui.cli import main
from sessions.store.runs import RunStore

RUN = ["run", "dedc", "-m", "sim:error_rate=0.7", "-n", "90", "--name", "shared", "-q", "--json"]
STUDY = ["study", "create", "shared", "--size", "30", "--seed", "0", "--stratify", "tag", "--only", "wrong"]


def in_home(monkeypatch, home: Path, argv: list[str], capsys) -> tuple[int, str, str]:
    monkeypatch.setenv("N2F_HOME", str(home))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def study_items(monkeypatch, home: Path, capsys) -> list[str]:
    assert in_home(monkeypatch, home, RUN, capsys)[0] == 0  # the same run on every machine: same items, same tags
    assert in_home(monkeypatch, home, STUDY, capsys)[0] == 0
    code, out, _ = in_home(monkeypatch, home, ["study", "show", "shared", "--json"], capsys)
    return json.loads(out)["items"]


# The labels of the 30 study items (positions in the study), on the code omission:
#                 bob yes   bob no
#     ada yes       10         5        (items 0-9 both, 10-14 ada only)
#     ada no         3        12        (items 15-17 bob only, 18-29 neither)
# p_o = 22/30; ada says yes on 15/30, bob on 13/30, so p_e = (15*13 + 15*17) / 30^2 = 450/900 = 1/2;
# Cohen's kappa = (22/30 - 1/2) / (1 - 1/2) = 7/15 = 0.4667.
# Both also give redundancy on items 0 and 1 (agreement 30/30, kappa 1). Pooled over the two codes
# (60 decisions): both 12, ada only 5, bob only 3, neither 40; p_o = 52/60, p_e = (17*15 + 43*45) / 3600
# = 2190/3600, kappa = (52*60 - 2190) / (3600 - 2190) = 930/1410 = 31/47 = 0.6596.
def labels_of(name: str, position: int) -> list[str]:
    omission = position < 10 or (name == "ada" and position < 15) or (name == "bob" and 15 <= position < 18)
    return (["omission"] if omission else []) + (["redundancy"] if position < 2 else [])


def label_blind(monkeypatch, home: Path, name: str, items: list[str]) -> None:
    monkeypatch.setenv("N2F_HOME", str(home))
    log = RunStore.open("shared").annotations(name)
    for position, item_id in enumerate(items):
        for code in labels_of(name, position):
            log.add(item_id, "tag_add", code=code, label=code, blind=True)
        log.add(item_id, "reviewed", blind=True)


def test_two_annotators_two_homes_merged_into_a_third(tmp_path, monkeypatch, capsys):
    homes = {name: tmp_path / name for name in ("ada", "bob", "lead")}
    items = study_items(monkeypatch, homes["ada"], capsys)
    assert len(items) == 30
    assert study_items(monkeypatch, homes["bob"], capsys) == items  # reproducible on the other machine
    assert study_items(monkeypatch, homes["lead"], capsys) == items
    files = {}
    for name in ("ada", "bob"):
        label_blind(monkeypatch, homes[name], name, items)
        files[name] = tmp_path / f"{name}.jsonl"
        argv = ["annotations", "export", "shared", "--annotator", name, "-o", str(files[name])]
        assert in_home(monkeypatch, homes[name], argv, capsys)[0] == 0
    events = {name: [json.loads(line) for line in files[name].read_text().splitlines()] for name in files}
    assert all(e["annotator"] == name and e["blind"] for name in events for e in events[name])

    lead = homes["lead"]
    for name in ("ada", "bob"):
        code, out, _ = in_home(monkeypatch, lead, ["annotations", "import", "shared", str(files[name])], capsys)
        assert code == 0 and f"imported {len(events[name])} new event(s)" in out
    again = in_home(monkeypatch, lead, ["annotations", "import", "shared", str(files["ada"])], capsys)[1]
    assert "imported 0 new event(s)" in again
    overlap = tmp_path / "overlap.jsonl"  # half of ada's events and half of bob's, already all here
    overlap.write_text("".join(json.dumps(e) + "\n" for e in events["ada"][::2] + events["bob"][1::2]))
    assert "imported 0 new event(s)" in in_home(monkeypatch, lead, ["annotations", "import", "shared", str(overlap)],
                                                capsys)[1]
    merged = RunStore.open("shared").annotations().events()
    assert sorted(e["id"] for e in merged) == sorted(e["id"] for name in events for e in events[name])

    code, out, _ = in_home(monkeypatch, lead, ["agreement", "shared", "--json"], capsys)
    report = json.loads(out)
    assert report["annotators"] == ["ada", "bob"] and report["n"] == 30
    by_code = {row["code"]: row for row in report["tags"]}
    assert set(by_code) == {"omission", "redundancy"}
    assert by_code["omission"]["percent"]["value"] == pytest.approx(22 / 30)
    assert by_code["omission"]["kappa"]["value"] == pytest.approx(7 / 15)
    low, high = by_code["omission"]["kappa"]["ci"]
    assert low < 7 / 15 < high and by_code["omission"]["n"] == 30 and by_code["omission"]["method"] == "cohen"
    assert by_code["redundancy"]["kappa"]["value"] == 1.0 and by_code["redundancy"]["percent"]["value"] == 1.0
    assert report["overall"]["kappa"]["value"] == pytest.approx(31 / 47)
    assert report["identical"]["value"] == pytest.approx(22 / 30)
    disagreeing = items[10:18]
    assert report["pairs"][0]["disagreeing"] == disagreeing and report["pairs"][0]["by_code"] == {"omission": disagreeing}
    assert report["queue"] == disagreeing  # the adjudication queue: exactly the disagreeing items
    assert report["study"] == {"ada": 30, "bob": 30} and report["study_size"] == 30

    monkeypatch.setenv("N2F_HOME", str(lead))
    store = RunStore.open("shared")
    summaries, ids = store.summaries(), store.item_ids()
    wrong = {ids[i]: s["tags"] for i, s in summaries.items() if s["status"] != "correct" and s["status"] != "error"}
    outside = sum("omission" in tags for item_id, tags in wrong.items() if item_id not in items)
    disputed_auto = sum("omission" in wrong[i] for i in disagreeing)
    before = json.loads(in_home(monkeypatch, lead, ["report", "shared", "--json"], capsys)[1])
    assert before["tags"]["omission"] == 10 + disputed_auto + outside  # disputed items keep their automatic tags
    assert before["review"] == {"reviewed": 30, "settled": 0, "disputed": 8, "annotators": ["ada", "bob"],
                                "items": len(summaries)}
    for item_id in disagreeing:
        argv = ["annotations", "settle", "shared", item_id, "omission", "--annotator", "lead"]
        assert in_home(monkeypatch, lead, argv, capsys)[0] == 0
    after = json.loads(in_home(monkeypatch, lead, ["report", "shared", "--json"], capsys)[1])
    assert after["tags"]["omission"] == 18 + outside and after["review"]["settled"] == 8
    table3 = next(t for t in after["tables"] if t["name"] == "Table 3")
    assert next(r for r in table3["rows"] if r[1] == "omission")[2] == 18 + outside
    assert after["tags_automatic"] == before["tags_automatic"]
    quality = next(t for t in after["tables"] if t["name"] == "Tagger quality")  # the tagger vs the settled labels
    assert "(30 item(s))" in quality["title"]
    tp, fp, fn = next(r for r in quality["rows"] if r[1] == "omission")[2:5]
    assert tp + fp == sum("omission" in wrong[i] for i in items) and tp + fn == 18
    report = json.loads(in_home(monkeypatch, lead, ["agreement", "shared", "--json"], capsys)[1])
    assert report["queue"] == [] and report["quality_n"] == 30

    code, out, _ = in_home(monkeypatch, lead, ["export", "shared", "--format", "csv", "--annotations"], capsys)
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(out))}
    first, settled = rows[items[0]], rows[items[10]]
    assert first["labels_ada"] == first["labels_bob"] == "omission;redundancy" and first["final_source"] == "reviewed"
    assert settled["labels_ada"] == "omission" and settled["labels_bob"] == "-" and settled["settled_tags"] == "omission"
    assert rows[items[20]]["labels_bob"] == "-" and rows[items[20]]["reviewed"] == "True"


def test_study_and_import_refuse_bad_input(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    study_items(monkeypatch, home, capsys)
    code, _, err = in_home(monkeypatch, home, ["study", "create", "shared", "--size", "10"], capsys)
    assert code == 2 and "already has a study" in err and "--replace" in err
    code, _, err = in_home(monkeypatch, home, ["study", "create", "shared", "--size", "5", "--stratify", "colour"], capsys)
    assert code == 2 and "cannot stratify by 'colour'" in err
    bad = tmp_path / "bad.jsonl"
    who = '"annotator": "bo", "time": "2026-12-01T10:00:00.000+00:00"'
    bad.write_text('{"id": "x1", "item": "dedc-000", "kind": "note", "text": "ok", %s}\n{"id": "x2", "item": "nope", '
                   '"kind": "note", %s}\n' % (who, who))
    code, _, err = in_home(monkeypatch, home, ["annotations", "import", "shared", str(bad)], capsys)
    assert code == 2 and "line 2: item 'nope' is not in this run" in err
    assert RunStore.open("shared").annotations().events() == []  # nothing of a bad file is written
    code, _, err = in_home(monkeypatch, home, ["annotations", "settle", "shared", "1", "omision"], capsys)
    assert code == 2 and "unknown tag code 'omision'" in err
    code, _, err = in_home(monkeypatch, home, ["agreement", "shared", "--against", "zed"], capsys)
    assert code == 2 and "nobody named 'zed'" in err


def test_the_annotator_comes_from_the_flag_then_the_config_then_the_login(n2f_home, monkeypatch):
    from sessions.study.annotations import resolve_annotator
    from sessions.errors import InputError
    from sessions.paths import config_path

    assert resolve_annotator() == "tester"  # the login name (conftest)
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('annotator = "cy"\n')
    assert resolve_annotator() == "cy" and resolve_annotator("ada") == "ada"
    with pytest.raises(InputError, match="without spaces"):
        resolve_annotator("ada lovelace")
    assert main(["tui", "--annotator", "ada lovelace"]) == 2
