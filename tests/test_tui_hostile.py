"""Model output with escape sequences, Rich markup, bidi controls, huge lines or 10,000 lines: shown, harmless, bounded."""

from __future__ import annotations

import json

import pytest

from n2f_tui.widgets.detail import DetailView
from sessions import api
from tui_support import detail_shown, inspect_run, make_run, until

HOSTILE = [
    "\x1b[31mRED\x1b[0m\x1b[2J\x1b]0;title\x07 view_1 := f0 (all, attr_1, 2); result := view_1;",
    "[bold]boldface[/] [red]redtext[/red] [/] [link=http://example.com]link[/link] [@click=app.quit]q[/]",
    "view_1 := " + "x" * 200_000,
    "\n".join(f"line {i} [b]not bold[/b]" for i in range(10_000)),
    "\x00\x08\x0b\x0c\x7f\x9b31m control characters \r carriage",
    "result := \u202eevil\u202c; \u2066isolated\u2069 \u200fmarks\u200e",
]


def squash(text: str) -> str:
    """Without whitespace and break marks: the pane wraps long lines wherever it must (``↩`` inside a token)."""
    return "".join(text.replace("↩\n", "").split())


def segments_with(pane, needle: str):
    return [seg for line in pane.lines for seg in line if needle in seg.text]


def frame(screen) -> dict:
    """Each pane's columns and bottom edge: what a hostile reply must not move."""
    panes = screen.query("#items, #detail-head, #col-prompt, #col-output, #col-views")
    return {w.id: (w.region.x, w.region.width, w.region.bottom if w.id != "detail-head" else None) for w in panes}


@pytest.mark.slow
async def test_hostile_outputs_are_shown_literally_and_do_not_break_the_layout(tmp_path):
    _, _, items = api.build_items("dedc", [], 0)
    replay = tmp_path / "hostile.jsonl"
    replay.write_text("".join(json.dumps({"id": item.id, "output": text}) + "\n"
                              for item, text in zip(items, HOSTILE)), encoding="utf-8")
    await make_run("hostile", limit=len(HOSTILE), model=f"replay:{replay}")
    async with inspect_run("hostile") as (app, pilot):
        screen = app.screen
        detail = screen.query_one(DetailView)
        regions = frame(screen)
        output = screen.query_one("#col-output")
        await until(pilot, lambda: detail.shown is not None)
        # 1: escape sequences are shown as \x1b... and act on nothing
        assert "\\x1b[31mRED\\x1b[0m\\x1b[2J\\x1b]0;title\\x07" in squash(output.plain)
        assert "\x1b" not in detail.text()
        # 2: Rich/Textual markup stays text: no bold, no colour, no link, no action
        screen.action_cursor(1)
        await detail_shown(pilot, screen)
        assert squash("[bold]boldface[/] [red]redtext[/red] [/] [link=http://example.com]link[/link]") in squash(output.plain)
        for needle in ("boldface", "redtext", "link]"):
            for seg in segments_with(output, needle):
                style = seg.style
                assert not (style and (style.bold or style.link or style.meta))
                assert not (style and style.color and style.color.name == "red")
        # 3: a 200,000-character line is cut (and says so)
        screen.action_cursor(1)
        await detail_shown(pilot, screen)
        assert "more characters" in output.plain.replace("\n", " ")
        assert len(output.lines) < 2_000
        # 4: 10,000 lines are cut to a few hundred (and say so)
        screen.action_cursor(1)
        await detail_shown(pilot, screen)
        assert "more lines" in output.plain.replace("\n", " ") and len(output.lines) < 1_000
        assert "[b]notbold[/b]" in squash(output.plain)
        # 5: other control characters are visible, never raw
        screen.action_cursor(1)
        await detail_shown(pilot, screen)
        assert "\\x00\\x08\\x0b\\x0c\\x7f\\x9b31m" in squash(output.plain) and "\\x0dcarriage" in squash(output.plain)
        assert not any(c in detail.text() for c in "\x00\x08\x0b\x0c\x7f\x9b\r")
        # 6: bidi controls (which would show text reordered, "Trojan Source") are shown as \uNNNN
        screen.action_cursor(1)
        await detail_shown(pilot, screen)
        assert "\\u202eevil\\u202c" in squash(output.plain) and "\\u2066isolated\\u2069" in squash(output.plain)
        assert not any(c in detail.text() for c in "\u202e\u202c\u2066\u2069\u200e\u200f")
        # the layout did not move (the head grows with the verdict's evidence, up to a third of the screen)
        assert frame(screen) == regions
        assert screen.query_one("#detail-head").region.height <= app.size.height // 3
        # the list shows every item on its own row
        assert screen.vlist.count == len(HOSTILE) and screen.vlist.virtual_size.height == len(HOSTILE)
