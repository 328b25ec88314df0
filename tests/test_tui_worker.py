"""Keys never wait on work (issue 16, point 9): an item is drawn from what is stored and
re-scored in an exclusive worker off the UI thread, a verdict that comes after the cursor
moved on is dropped, and moving opens no annotation store. The slow item is a logic item
whose scoring (Z3) is held until released."""

from __future__ import annotations

import threading

from engines import get_engine
from n2f_tui.widgets.detail import DetailView
from sessions.store.runs import RunStore
from tui_support import detail_shown, inspect_run, make_run, until


async def test_a_slow_solver_check_never_holds_a_key(monkeypatch):
    await make_run("solver", limit=6, engine="logic")
    engine = get_engine("logic")
    released = threading.Event()
    score = engine.score
    slow_id: list[str] = []

    def held_score(item, *args, **kwargs):
        if item.id in slow_id:
            released.wait(timeout=20)  # a solver check taking as long as the test wants
        return score(item, *args, **kwargs)

    monkeypatch.setattr(engine, "score", held_score)
    opened = []
    annotations = RunStore.annotations
    monkeypatch.setattr(RunStore, "annotations", lambda self, *args: opened.append(1) or annotations(self, *args))
    async with inspect_run("solver") as (app, pilot):
        screen = app.screen
        detail = screen.query_one(DetailView)
        await detail_shown(pilot, screen)
        await until(pilot, lambda: screen.metrics)  # the header's report (which reads the log once) is in
        opened.clear()
        slow_id.append(screen.state.ids[1])
        await pilot.press("j")  # onto the slow item: drawn from what is stored, its re-scoring waits
        assert screen.current == 1 and detail.shown[0] == 1 and not screen.detail_ready and not released.is_set()
        await until(pilot, lambda: "scoring…" in screen.query_one("#col-views").plain)
        assert screen.state.ids[1] in screen.query_one("#detail-head").plain
        await pilot.press("j")  # and on: the next item is drawn and scored while the slow one still waits
        await detail_shown(pilot, screen)
        assert screen.current == 2 and detail.shown[0] == 2 and not released.is_set()
        assert "scoring…" not in screen.query_one("#col-views").plain
        released.set()  # the slow scoring ends now; its verdict is dropped
        await pilot.pause(0.2)
        assert detail.shown[0] == 2 and screen.detail_ready
        for _ in range(3):
            screen.action_cursor(-1)
            await detail_shown(pilot, screen)
        assert detail.shown[0] == 0
        assert opened == []  # the run's annotation log stays open: no store per move
