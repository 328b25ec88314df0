"""A study in the inspector: the tag dialog's keys (counted), the adjudication queue with the item in view,
Krippendorff's alpha in ``A`` and the paired statistics of the compare screen."""

from __future__ import annotations

import html

import pytest
from textual.widgets import OptionList

from n2f_tui.screens.compare import CompareScreen
from sessions.study import sample as study
from sessions.store.runs import RunStore
from tui_support import inspect_run, make_run, screen_named, until


class Keys:
    """Presses keys through Pilot and counts them: labelling keys apart from moves."""

    def __init__(self, pilot):
        self.pilot = pilot
        self.labelling = 0
        self.moves = 0

    async def label(self, *keys: str) -> None:
        self.labelling += len(keys)
        await self.pilot.press(*keys)

    async def move(self, key: str) -> None:
        self.moves += 1
        await self.pilot.press(key)


@pytest.mark.slow
async def test_labelling_fifty_items_blind_at_80x24_costs_at_most_three_keys_a_code_and_one_a_move():
    await make_run("fifty", limit=150, model="sim:error_rate=0.7")
    study.create(RunStore.open("fifty"), 50, seed=0)
    async with inspect_run("fifty", size=(80, 24), blind=True, annotator="ada") as (app, pilot):
        screen, state = app.screen, app.screen.state
        assert len(state.order) == 50
        taxonomy = [t.code for t in state.taxonomy()]
        keys, chosen, codes_given = Keys(pilot), {}, 0
        for step in range(50):
            index = screen.current
            assert not state.reviewed(index)
            codes = {taxonomy[step % len(taxonomy)], taxonomy[(step + 3) % len(taxonomy)]}
            if step % 3 == 0:
                codes.add(taxonomy[(step + 5) % len(taxonomy)])
            await keys.label("t")
            await until(pilot, lambda: screen_named(app, "TagDialog"))
            dialog = app.screen
            if step == 0:  # every code is on screen with its key at 80x24
                shot = html.unescape(app.export_screenshot()).replace("\xa0", " ")
                assert all(f"{dialog.key_of[c]} [ ] " in shot and c in shot for c in taxonomy)
                assert dialog.query_one(OptionList).region.bottom <= 24
            for code in sorted(codes):
                await keys.label(dialog.key_of[code])
            await keys.label("enter")
            await until(pilot, lambda: screen_named(app, "RunScreen"))
            chosen[state.ids[index]] = codes
            codes_given += len(codes)
            await keys.move("d")  # done, and on to the next unlabelled item
            await pilot.pause()
        assert state.study_progress() == (50, 50)
        assert keys.moves == 50 and keys.labelling <= 3 * codes_given
    log = RunStore.open("fifty").annotations()
    marks = log.marks("ada")
    assert {item: marks[item].labels([]) for item in chosen} == chosen


async def test_the_tag_dialog_toggles_several_codes_filters_by_typing_and_unticks():
    await make_run("dialog", limit=20, model="sim:error_rate=0.7")
    async with inspect_run("dialog", size=(80, 24), blind=True, annotator="ada") as (app, pilot):
        screen, state = app.screen, app.screen.state
        index = screen.current
        await pilot.press("t")
        await until(pilot, lambda: screen_named(app, "TagDialog"))
        dialog = app.screen
        assert list(dialog.keys)[:3] == ["1", "2", "3"]
        await pilot.press(*"omi")  # typing filters: only omission is left, its key unchanged
        assert [c.code for c in dialog.shown] == ["omission"]
        await pilot.press("space")  # toggles the highlighted (and only) code
        await pilot.press("backspace", "backspace", "backspace")
        assert len(dialog.shown) == len(dialog.codes)
        redundancy = dialog.key_of["redundancy"]
        await pilot.press(redundancy, redundancy, dialog.key_of["variable_misuse"])  # on, off, on
        assert dialog.chosen == {"omission", "variable_misuse"}
        await pilot.press("enter")
        await until(pilot, lambda: screen_named(app, "RunScreen") and state.tags(index).codes)
        assert state.tags(index).codes == {"omission", "variable_misuse"}
        await pilot.press("t")
        await until(pilot, lambda: screen_named(app, "TagDialog"))
        assert app.screen.chosen == {"omission", "variable_misuse"}
        await pilot.press(app.screen.key_of["omission"], "enter")  # unticking removes the label
        await until(pilot, lambda: screen_named(app, "RunScreen") and state.tags(index).codes == {"variable_misuse"})
        await pilot.press("t")
        await until(pilot, lambda: screen_named(app, "TagDialog"))
        await pilot.press("1", "escape")  # Escape changes nothing
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert state.tags(index).codes == {"variable_misuse"}


def disagree_with_notes(store: RunStore) -> list[str]:
    """ada and bob label the first four wrong items; they disagree on the 2nd and 4th; bob notes why."""
    ids = store.item_ids()
    wrong = [ids[i] for i, s in sorted(store.summaries().items()) if s["status"] == "wrong"][:4]
    for name in ("ada", "bob"):
        log = store.annotations(name)
        for position, item_id in enumerate(wrong):
            code = "omission" if name == "bob" and position in (1, 3) else "redundancy"
            log.add(item_id, "tag_add", code=code, label=code, blind=True)
            log.add(item_id, "reviewed", blind=True)
            if code == "omission":
                log.add(item_id, "note", text="the second assignment is missing")
    return [wrong[1], wrong[3]]


def screen_text(app) -> str:
    return html.unescape(app.export_screenshot()).replace("\xa0", " ")


async def test_the_adjudication_queue_shows_the_item_and_opens_it_whole():
    await make_run("judge", limit=40, model="sim:error_rate=0.7")
    store = RunStore.open("judge")
    disputed = disagree_with_notes(store)
    item = store.item(store.find_item(disputed[0]))
    record = store.record(store.find_item(disputed[0]))
    async with inspect_run("judge", size=(120, 60), annotator="lead") as (app, pilot):
        await pilot.press("A")
        await until(pilot, lambda: screen_named(app, "AgreementScreen") and app.screen.report is not None)
        alpha = app.screen.query_one("#alpha")
        assert alpha.display and alpha.row_count == 3  # omission, redundancy, pooled
        await pilot.press("d")
        await until(pilot, lambda: screen_named(app, "AdjudicationScreen"))
        adjudication = app.screen
        await until(pilot, lambda: disputed[0] in adjudication.details)
        await pilot.pause()
        text = adjudication.query_one("#adjudicate-labels").content
        case = adjudication.query_one("#adjudicate-case").content
        from rich.console import Console

        console = Console(width=200, record=True)
        console.print(text)
        console.print(case)
        shown = console.export_text()
        assert "bob: the second assignment is missing" in shown
        assert "Question" in shown and item.inputs["question"][:40] in shown.replace("\n", " ")
        assert "Output" in shown and record["outputs"][0].splitlines()[0] in shown
        assert "Gold" in shown and "Automatic tags" in shown
        for tag in record["tags"]:
            assert f"[{tag['code']}]" in shown
        adjudication.query_one(OptionList).highlighted = 1
        await pilot.press("enter")  # the whole item: at once, or as soon as it is read
        await until(pilot, lambda: screen_named(app, "ItemScreen"), timeout=30)
        assert "Prompt" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "AdjudicationScreen"))
        assert adjudication.query_one(OptionList).highlighted == 1  # back where it was
        await pilot.press("s")
        await until(pilot, lambda: adjudication.queue == [disputed[0]])


async def test_the_compare_screen_shows_mcnemar_and_paired_intervals():
    await make_run("left", limit=30, model="sim:error_rate=0.5")
    await make_run("right", limit=30, model="oracle")
    async with inspect_run("left", size=(120, 40)) as (app, pilot):
        app.open_compare(app.screen.state.store.id, RunStore.open("right").id)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.paired is not None, timeout=60)
        head = app.screen.query_one("#cmp-head").content.plain
        paired = app.screen.paired
        assert f"McNemar p {paired.p_value:.3g}" in head and paired.only_b > 0 and paired.only_a == 0
        assert "accuracy A-B" in head
