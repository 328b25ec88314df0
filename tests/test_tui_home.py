"""The home screen: the runs, a new run from a generated settings form, open, resume, re-score, delete (point 1)."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select, Static, Switch

import pytest

from engines import engine_names
from engines.core import settings_fields
from engines.dedc.settings import DedcSettings
from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from sessions import api
from sessions.store.runs import RunStore, list_run_meta
from tui_support import make_run, screen_named, until


def cells(app, row: int) -> list[str]:
    table = app.screen.query_one(DataTable)
    return [str(c) for c in table.get_row_at(row)]


@pytest.mark.slow
async def test_home_lists_runs_and_opens_resumes_rescores_deletes():
    await make_run("alpha", limit=20)
    await make_run("beta", limit=12, model="oracle")
    cut = await api.prepare_run("dedc", [], model="sim", limit=30, name="cut")  # created, never run
    cut.store.close()
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        table = app.screen.query_one(DataTable)
        assert table.row_count == 3
        # the results are summarised in a worker after the first paint
        await until(pilot, lambda: not any("…/" in cells(app, r)[4] for r in range(3)))
        rows = {cells(app, r)[0]: cells(app, r) for r in range(3)}
        assert rows["beta"][1:3] == ["dedc", "oracle"]
        assert rows["beta"][4].startswith("12/12") and rows["beta"][5] == "100.0%"
        assert rows["alpha"][4].startswith("20/20") and rows["alpha"][5].endswith("%")
        assert rows["cut"][4].startswith("0/30")
        # open the highlighted run (newest first: cut), back with Escape
        table.move_cursor(row=[cells(app, r)[0] for r in range(3)].index("alpha"))
        await pilot.press("enter")
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        assert app.screen.state.store.meta["name"] == "alpha"
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        # resume the run that was never started: it runs and opens
        home = app.screen
        table.move_cursor(row=[cells(app, r)[0] for r in range(3)].index("cut"))
        await home.action_resume()
        await until(pilot, lambda: screen_named(app, "RunScreen") and not app.jobs)
        assert len(RunStore.open("cut").results()) == 30
        app.pop_screen()
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        # re-score (in a worker), then delete with confirmation
        table.move_cursor(row=[cells(app, r)[0] for r in range(3)].index("beta"))
        await pilot.press("s")
        await until(pilot, lambda: any("re-scored 12" in n.message for n in app._notifications))
        await pilot.press("d")
        await until(pilot, lambda: screen_named(app, "ConfirmDialog"))
        await pilot.press("n")  # no: nothing deleted
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        assert len(list_run_meta()) == 3
        await pilot.press("d")
        await until(pilot, lambda: screen_named(app, "ConfirmDialog"))
        await pilot.press("y")
        await until(pilot, lambda: screen_named(app, "HomeScreen") and table.row_count == 2)
        assert {m["name"] for m in list_run_meta()} == {"alpha", "cut"}


async def test_a_run_opened_at_start_leaves_the_list_unread_until_it_is_shown(monkeypatch):
    """``n2f tui RUN`` shows the run: the other runs' results are read when the list is first shown, not
    beneath the run (a 50,000-result run without a summary file cost its whole index there)."""
    await make_run("alpha", limit=12)
    await make_run("beta", limit=8, model="oracle")
    read: list[str] = []
    summary = RunStore.summary
    monkeypatch.setattr(RunStore, "summary", lambda self: read.append(self.meta["name"]) or summary(self))
    app = N2FApp(run="alpha", formats=STABLE, demo=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        await pilot.pause(0.3)
        assert read == []
        await pilot.press("escape")
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        await until(pilot, lambda: not any("…/" in cells(app, r)[4] for r in range(2)))
        rows = {cells(app, r)[0]: cells(app, r) for r in range(2)}
        assert rows["beta"][4].startswith("8/8") and rows["beta"][5] == "100.0%"
        assert sorted(read) == ["alpha", "beta"]


@pytest.mark.slow
async def test_new_run_dialog_builds_the_settings_form_and_validates():
    await make_run("first", limit=5)
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 48)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        await pilot.press("n")
        await until(pilot, lambda: screen_named(app, "NewRunDialog") and app.screen.query("#set-repeat"))
        dialog = app.screen
        engines = dialog.query_one("#engine", Select)
        assert [value for _, value in engines._options if value is not Select.BLANK] == list(engine_names())
        # one control per settings field, with the dataclass defaults and choices
        for f in settings_fields(DedcSettings):
            control = dialog.query_one(f"#set-{f.name}")
            if f.type in (bool, "bool"):
                assert isinstance(control, Switch) and control.value == f.default
            elif f.metadata.get("choices"):
                assert isinstance(control, Select) and control.value == f.default
            else:
                assert isinstance(control, Input) and control.value == str(f.default)
        help_texts = " ".join(str(s.render()) for s in dialog.query(".help"))
        assert "compositional gap" in help_texts
        error = dialog.query_one("#error", Static)
        # out of range: the message of parse_settings, the dialog stays open
        dialog.query_one("#set-repeat", Input).value = "0"
        await dialog.action_start()
        assert "repeat" in str(error.render()) and "outside 1..1000" in str(error.render())
        dialog.query_one("#set-repeat", Input).value = "1"
        dialog.query_one("#model", Input).value = "nonsense"
        await dialog.action_start()
        assert "unknown model" in str(error.render())
        dialog.query_one("#model", Input).value = "replay:/no/such/file.jsonl"
        await dialog.action_start()
        assert "replay file" in str(error.render())
        dialog.query_one("#model", Input).value = "oracle"
        dialog.query_one("#limit", Input).value = "7"
        dialog.query_one("#name", Input).value = "second"
        dialog.query_one("#set-names", Select).value = "cross"
        await dialog.action_start()
        await until(pilot, lambda: screen_named(app, "RunScreen") and not app.jobs)
        meta = RunStore.open("second").meta
        assert meta["model"] == "oracle" and meta["total"] == 7 and meta["settings"]["names"] == "cross"
        await until(pilot, lambda: app.screen.state.counts()["correct"] == 7)
