"""Final tags (automatic - removed + added, or the settled labels) wherever tags are counted: report,
``n2f report``, compare, export; one definition of "reviewed" (issue 16, point 1)."""

from __future__ import annotations

import json

from n2f_tui.cli import main
from sessions import api
from sessions.study.agreement import agreement_report
from sessions.reports.compare import compare_runs
from sessions.reports.export import export_rows, plan_columns
from sessions.store.runs import RunStore
from tui_support import inspect_run, make_run, report_text


def reviewed_item(store: RunStore) -> tuple[int, str]:
    """A wrong item whose automatic tags include omission but not redundancy."""
    summaries = store.summaries()
    ids = store.item_ids()
    index = next(i for i, s in sorted(summaries.items())
                 if s["status"] == "wrong" and "omission" in s["tags"] and "redundancy" not in s["tags"])
    return index, ids[index]


def review(store: RunStore) -> str:
    """Remove omission and add redundancy on one item; accept one other item's tags; note a third."""
    index, item_id = reviewed_item(store)
    log = store.annotations()
    log.add(item_id, "tag_remove", code="omission")
    log.add(item_id, "tag_add", code="redundancy", label="Redundancy")
    others = [i for i in store.item_ids() if i != item_id]
    log.add(others[0], "reviewed")
    log.add(others[1], "note", text="a note is not a review")
    return item_id


def row_of(table: dict, code: str) -> list:
    return next(r for r in table["rows"] if r[1] == code)


async def test_report_compare_and_export_count_the_final_tags(capsys):
    await make_run("reviewed", limit=60, model="sim:error_rate=0.7")
    await make_run("other", limit=60, model="sim:error_rate=0.7")
    store = RunStore.open("reviewed")
    before = api.build_report(store)[1]
    item_id = review(store)

    _, summary = api.build_report(RunStore.open("reviewed"))
    assert summary["tags_automatic"] == before["tags"]  # the automatic counts, side by side
    assert summary["tags"]["omission"] == before["tags"]["omission"] - 1
    assert summary["tags"].get("redundancy", 0) == before["tags"].get("redundancy", 0) + 1
    assert summary["review"]["reviewed"] == 2 and summary["review"]["annotators"] == ["tester"]
    review_table = next(t for t in summary["tables"] if t["name"] == "Review")
    assert row_of(review_table, "omission")[2:4] == [before["tags"]["omission"], summary["tags"]["omission"]]
    table3 = next(t for t in summary["tables"] if t["name"] == "Table 3")  # the engine's error-type table
    assert row_of(table3, "omission")[2] == summary["tags"]["omission"]
    assert "2 of 60 scored item(s) reviewed" in review_table["note"]

    assert main(["report", "reviewed", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["tags"] == summary["tags"] and printed["tags_automatic"] == summary["tags_automatic"]

    row = next(r for r in compare_runs(RunStore.open("reviewed"), RunStore.open("other")) if r.id == item_id)
    assert "omission" not in row.tags_a and "redundancy" in row.tags_a

    reviewed_store = RunStore.open("reviewed")
    records = {r["id"]: r for r in export_rows([reviewed_store], plan_columns([reviewed_store], annotations=True))}
    assert "omission" not in records[item_id]["final_tags"] and "redundancy" in records[item_id]["final_tags"]
    assert "omission" in records[item_id]["tags"]  # the automatic tags stay as they were
    exported_reviewed = sorted(i for i, r in records.items() if r["reviewed"])
    report = agreement_report(RunStore.open("reviewed"))
    assert report.quality_n == len(exported_reviewed) == 2  # one definition: A and the export agree
    assert report.progress == {"tester": 2}


async def test_tags_on_correct_items_are_listed_apart():
    await make_run("remarks", limit=40, model="sim:error_rate=0.5")
    store = RunStore.open("remarks")
    summaries = store.summaries()
    correct = next(i for i, s in sorted(summaries.items()) if s["status"] == "correct")
    store.annotations().add(store.item_ids()[correct], "tag_add", code="format_violation", label="Format violation")
    _, summary = api.build_report(RunStore.open("remarks"))
    assert summary["tags_on_correct"].get("format_violation", 0) >= 1
    wrong_with_it = sum("format_violation" in s["tags"] for s in summaries.values() if s["status"] != "correct")
    assert summary["tags"].get("format_violation", 0) == wrong_with_it


async def test_the_report_screen_shows_automatic_and_final_counts():
    await make_run("screen", limit=60, model="sim:error_rate=0.7")
    store = RunStore.open("screen")
    before = api.build_report(store)[1]["tags"]
    review(store)
    async with inspect_run("screen") as (app, pilot):
        text = await report_text(pilot, app, "automatic vs final")
        line = next(l for l in text.splitlines() if "omission" in l and "│" in l and str(before["omission"]) in l
                    and "Omission" in l and l.count("│") >= 4)
        assert str(before["omission"] - 1) in line
        assert "2 of 60 scored item(s) reviewed" in " ".join(text.split())


async def test_final_tags_look_only_at_the_results_of_annotated_items():
    """``apply_final_tags`` reads the tags of the items someone annotated and of no other (a report of 50,000
    results held a dict of every result and a list of every result's codes for it: 8 MB)."""
    from dataclasses import dataclass

    from sessions.study.final_tags import apply_final_tags

    await make_run("looked", limit=20, model="sim:error_rate=0.7")
    store = RunStore.open("looked")
    item_id = review(store)
    results = api.load_results(store).results

    @dataclass
    class Unread:
        item: object

        @property
        def tags(self):
            raise AssertionError(f"the tags of {self.item.id}, which nobody annotated, were read")

    annotated = {item_id, *[i for i in store.item_ids() if i != item_id][:2]}
    mixed = [r if r.item.id in annotated else Unread(r.item) for r in results]
    log = store.annotations()
    labels = apply_final_tags(mixed, log, {})
    log.close()
    changed = next(r for r in mixed if r.item.id == item_id)
    assert "redundancy" in {t.code for t in changed.tags} and "omission" not in {t.code for t in changed.tags}
    assert set(labels.items) <= annotated and item_id in labels.items


async def test_the_tagger_quality_table_looks_only_at_the_statuses_of_labelled_items():
    """``quality_table`` reads the status of the items someone labelled, not a dict of every result's (a
    report of 50,000 results built one: 6 MB)."""
    from dataclasses import dataclass

    from sessions.study.final_tags import load_final_results, quality_table

    await make_run("quality", limit=20, model="sim:error_rate=0.7")
    store = RunStore.open("quality")
    review(store)
    run, labels = load_final_results(store)

    @dataclass
    class Unlabelled:
        item: object

        @property
        def status(self):
            raise AssertionError(f"the status of {self.item.id}, which nobody labelled, was read")

    mixed = [r if r.item.id in labels.items else Unlabelled(r.item) for r in run.results]
    assert quality_table(mixed, labels, {}) == quality_table(run.results, labels, {})
