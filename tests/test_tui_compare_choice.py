"""Choosing the run to compare with: the same dialog from the home screen (c) and the run screen (C)."""

from __future__ import annotations

from textual.widgets import DataTable, Label, OptionList

from n2f_tui.app import N2FApp
from n2f_tui.screens.compare import CompareScreen
from n2f_tui.widgets.style import STABLE
from tui_support import make_run, screen_named, until


def offered(app: N2FApp) -> tuple[str, list[str]]:
    """The dialog's title and the run ids it offers, in order."""
    dialog = app.screen
    options = dialog.query_one(OptionList)
    ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
    return str(dialog.query_one(Label).render()), ids


async def test_home_and_run_screen_offer_the_other_runs_of_the_same_engine():
    alpha = await make_run("alpha", limit=6)
    beta = await make_run("beta", limit=6)
    gamma = await make_run("gamma", limit=6)
    await make_run("other-engine", limit=4, engine="logic")
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        home = app.screen
        table = home.query_one(DataTable)
        table.move_cursor(row=[m["id"] for m in home.metas].index(beta))
        await pilot.press("c")
        await until(pilot, lambda: screen_named(app, "ChoiceDialog"))
        assert offered(app) == ("Compare beta with", [gamma, alpha])  # newest first, beta itself left out
        app.screen.dismiss(alpha)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen))
        app.pop_screen()
        await until(pilot, lambda: screen_named(app, "HomeScreen"))

        app.open_run(alpha)
        await until(pilot, lambda: screen_named(app, "RunScreen"))
        await pilot.press("C")
        await until(pilot, lambda: screen_named(app, "ChoiceDialog"))
        assert offered(app) == ("Compare with", [gamma, beta])
        app.screen.dismiss(gamma)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen))
