"""The inspector's detail opens every item of a run of deep, long and oversized replies (Pilot)."""

from __future__ import annotations

import json

import pytest

from hostile_replies import hostile
from n2f_tui.widgets.detail import DetailView
from sessions import api
from tui_support import detail_shown, inspect_run, make_run

OVER_THE_CAP = 2_000_000  # characters: over the readers' bound, as the 100 MB reply is, and quick to lay out


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["compost", "dedc", "logic", "robogrid", "rgp"])
async def test_the_detail_opens_every_hostile_item(engine, tmp_path):
    _, _, items = api.build_items(engine, [], 0)
    pairs = hostile(lambda i: items[i], engine, OVER_THE_CAP)
    replay = tmp_path / "hostile.jsonl"
    replay.write_text("".join(json.dumps({"id": item.id, "outputs": outs}) + "\n" for item, outs in pairs),
                      encoding="utf-8")
    await make_run("hostile", limit=len(pairs), model=f"replay:{replay}", engine=engine)
    async with inspect_run("hostile") as (app, pilot):
        screen = app.screen
        detail = screen.query_one(DetailView)
        for position in range(len(pairs)):
            if position:
                screen.action_cursor(1)
            await detail_shown(pilot, screen)
            assert detail.shown is not None
            text = detail.text()
            assert pairs[position][0].id in text
        assert "oversized_reply" in text or "Over the readers' bounds" in text
