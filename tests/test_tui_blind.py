"""Blind labelling in the inspector, the extended agreement view and the adjudication queue (issue 18)."""

from __future__ import annotations

import html

from n2f_tui.widgets.detail import DetailView
from n2f_tui.widgets.progress import RunHeader
from sessions.study import sample as study
from sessions.store.runs import RunStore
from tui_support import inspect_run, make_run, screen_named, until


def visible_codes(text: str, codes: set[str]) -> set[str]:
    return {code for code in codes if code in text}


async def test_blind_mode_hides_every_automatic_tag_and_b_reveals_them():
    await make_run("blind", limit=40, model="sim:error_rate=0.7")
    await make_run("other", limit=40, model="sim:error_rate=0.7", seed=1)
    async with inspect_run("blind", blind=True, annotator="ada") as (app, pilot):
        screen = app.screen
        state = screen.state
        codes = set(state.labels()) | {c for r in state.records.values() for c in r["tags"]}
        tagged = [p for p, i in enumerate(state.order) if state.records[i]["tags"]]
        assert tagged  # the run has automatic tags to hide
        assert not any(visible_codes(screen.render_row(p).plain, codes) for p in range(len(state.order)))
        assert not [key for key, _ in state.filter_choices() if key.startswith("tag:")]
        assert "blind" in str(screen.query_one("#run-state").render()) and "labels of ada" in str(screen.query_one("#run-state").render())
        for position in tagged:
            screen.move_to(position)
            await pilot.pause()
            index = state.order[position]
            shown = screen.query_one(DetailView).text()
            # the status word stays (the verdict pane stays): an unparseable item says so
            hidden = codes - ({"unparseable"} if state.status(index) == "unparseable" else set())
            assert not visible_codes(shown, hidden), (state.ids[index], visible_codes(shown, hidden))
        header = str(screen.query_one(RunHeader).render())
        assert not visible_codes(header, codes - {"unparseable"}) and "unparseable 5" in header  # status counts stay
        for key in ("R", "A", "C"):  # report, agreement and compare are built on the automatic tags
            await pilot.press(key)
            await pilot.pause()
            assert screen_named(app, "RunScreen")
        await pilot.press("escape")  # the home screen's report stays closed too
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        await pilot.press("R")
        await pilot.pause()
        assert screen_named(app, "HomeScreen")
        app.open_run("blind")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        screen, state = app.screen, app.screen.state
        assert state.blind

        await pilot.press("b")  # blind off: the tags are back everywhere
        await pilot.pause()
        assert any(visible_codes(screen.render_row(p).plain, codes) for p in tagged)
        assert [key for key, _ in state.filter_choices() if key.startswith("tag:")]
        screen.move_to(tagged[0])
        await pilot.pause()
        auto = set(state.records[state.order[tagged[0]]]["tags"])
        assert visible_codes(screen.query_one(DetailView).text(), auto) == auto
        await pilot.press("R")
        await until(pilot, lambda: screen_named(app, "ReportScreen"))
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        await pilot.press("A")
        await until(pilot, lambda: screen_named(app, "AgreementScreen"))


async def test_labelling_six_study_items_blind_at_80x24_one_key_per_move_and_tag():
    """Six items, each step alike (the slow fifty-item walk in test_tui_study counts the keys)."""
    await make_run("labelling", limit=60, model="sim:error_rate=0.7")
    study.create(RunStore.open("labelling"), 6, seed=0)
    async with inspect_run("labelling", size=(80, 24), blind=True, annotator="ada") as (app, pilot):
        screen = app.screen
        state = screen.state
        assert state.filter == "study" and len(state.order) == 6  # blind with a study: its items only
        chosen: dict[str, str] = {}
        taxonomy = [t.code for t in state.taxonomy()]
        for step in range(6):
            index = screen.current
            assert not state.reviewed(index)
            await pilot.press("t")
            await until(pilot, lambda: screen_named(app, "TagDialog"))
            await pilot.press(str(step % 2 + 1), "enter")  # the first or second code of the taxonomy, by its key
            await until(pilot, lambda: screen_named(app, "RunScreen"))
            chosen[state.ids[index]] = taxonomy[step % 2]
            await pilot.press("d")  # done: on to the next unlabelled item
            await pilot.pause()
        assert state.study_progress() == (6, 6)
        assert "study 6/6" in str(screen.query_one("#run-state").render())
    log = RunStore.open("labelling").annotations()
    events = log.events()
    assert {e["item"] for e in events} == set(chosen) and all(e["blind"] and e["annotator"] == "ada" for e in events)
    marks = log.marks("ada")
    summaries, ids = RunStore.open("labelling").summaries(), RunStore.open("labelling").item_ids()
    auto = {ids[i]: s["tags"] for i, s in summaries.items()}
    assert {item: marks[item].labels(auto[item]) for item in chosen} == {item: {code} for item, code in chosen.items()}


def disagree(store: RunStore) -> list[str]:
    """ada and bob review the first six wrong items; they disagree on the 2nd and 5th."""
    ids = store.item_ids()
    wrong = [ids[i] for i, s in sorted(store.summaries().items()) if s["status"] == "wrong"][:6]
    for name in ("ada", "bob"):
        log = store.annotations(name)
        for position, item_id in enumerate(wrong):
            code = "omission" if name == "bob" and position in (1, 4) else "redundancy"
            log.add(item_id, "tag_add", code=code, label=code, blind=True)
            log.add(item_id, "reviewed", blind=True)
    return [wrong[1], wrong[4]]


async def test_agreement_view_and_adjudication_queue():
    await make_run("judged", limit=40, model="sim:error_rate=0.7")
    disputed = disagree(RunStore.open("judged"))
    async with inspect_run("judged", annotator="lead") as (app, pilot):
        await pilot.press("A")
        await until(pilot, lambda: screen_named(app, "AgreementScreen") and app.screen.report is not None)
        agreement = app.screen
        assert agreement.report.annotators == ["ada", "bob"] and agreement.report.queue == disputed
        table = agreement.query_one("#agree")
        assert table.display and table.row_count == 3  # omission, redundancy, all pooled
        table.focus()
        table.move_cursor(row=0)
        await pilot.pause()
        assert [o.id for o in agreement.query_one("#disagree").options] == disputed
        await pilot.press("r")  # the tagger against ada's labels
        await until(pilot, lambda: agreement.report.reference == "annotator ada" and agreement.reviewed == 6)
        await pilot.press("d")
        await until(pilot, lambda: screen_named(app, "AdjudicationScreen"))
        adjudication = app.screen
        assert adjudication.queue == disputed
        shot = html.unescape(app.export_screenshot()).replace("\xa0", " ")
        assert "1 ada" in shot and "2 bob" in shot and "final" in shot  # the labels side by side
        await pilot.press("2")  # take bob's labels
        await pilot.press("s")
        await until(pilot, lambda: adjudication.queue == disputed[1:])
        settled = RunStore.open("judged").annotations().settled()
        assert settled == {disputed[0]: {"omission": "Omission"}}  # bob's label, named by the taxonomy
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "AgreementScreen") and agreement.report.queue == disputed[1:])
