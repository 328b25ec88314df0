"""Streaming in the inspector: a reply grows in the Output pane as the model generates it.

The stub streams one word every 0.15 s (server-sent events), so the pane is seen with
part of the reply, then more of it, then the finished attempt.
"""

from __future__ import annotations

import pytest

from n2f_tui.app import N2FApp
from n2f_tui.widgets.style import STABLE
from n2f_tui.screens.editor import EditorScreen
from stub_openai import running_stub
from tui_support import inspect_run, make_run, screen_named, until

REPLY = "view_1 := f0 (all, attr_1, 2); view_2 := f1 (view_1, attr_2); result := view_2;"
WORDS = REPLY.split()


def shown_words(text: str) -> int:
    """How many of the reply's words the pane shows, in order, from the first."""
    count = 0
    for word in WORDS:
        if word not in text:
            break
        text = text[text.index(word) + len(word):]
        count += 1
    return count


@pytest.mark.slow
async def test_a_streamed_reply_grows_in_the_editor_rerun_pane():
    with running_stub(reply=lambda messages: REPLY) as stub:
        await make_run("streamed", limit=2, model=f"openai:stub-model@{stub.base_url}")
        async with inspect_run("streamed") as (app, pilot):
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, EditorScreen))
            editor = app.screen
            stub.push("drip:0.15")
            await pilot.press("ctrl+s")
            pane = editor.query_one("#ed-attempt")
            seen: list[int] = []
            rates: list[bool] = []

            def growing() -> bool:
                text = pane.plain
                if "generating" in text:
                    seen.append(shown_words(text))
                    rates.append("tokens/s" in text)
                return len(editor.attempts) == 1

            await until(pilot, growing, timeout=20)
            partial = [n for n in seen if 0 < n < len(WORDS)]
            assert len(set(partial)) >= 3, seen  # several partial replies, each longer than the one before
            assert partial == sorted(partial)
            assert any(rates)  # the rate is drawn while it streams
            assert "Attempt #1" in pane.plain and REPLY.split()[-1] in pane.plain
            [request] = [r for r in stub.chat_requests() if r["behaviour"] == "drip:0.15"]
            assert request["params"]["stream"] is True


@pytest.mark.slow
async def test_the_focused_item_of_a_live_run_streams_into_the_output_pane():
    from sessions import api
    from n2f_tui.widgets.detail import DetailView

    with running_stub(["drip:0.15"] * 2, reply=lambda messages: REPLY) as stub:
        app = N2FApp(formats=STABLE, demo=False)
        async with app.run_test(size=(160, 48)) as pilot:
            prepared = await api.prepare_run("dedc", [], model=f"openai:stub-model@{stub.base_url}", limit=2,
                                             concurrency=1, name="live-stream")
            job = app.start_job(prepared)
            app.open_run(prepared.store.id)
            await until(pilot, lambda: screen_named(app, "RunScreen") and app.screen.query(DetailView))
            screen = app.screen
            output = screen.query_one(DetailView).query_one("#col-output")
            seen: list[int] = []

            def first_done() -> bool:
                if "generating" in output.plain:
                    seen.append(shown_words(output.plain))
                return 0 in screen.state.records

            await until(pilot, first_done, timeout=20)
            partial = [n for n in seen if 0 < n < len(WORDS)]
            assert len(set(partial)) >= 3 and partial == sorted(partial), seen
            await until(pilot, lambda: "generating" not in output.plain and shown_words(output.plain) == len(WORDS))
            assert job.runner.stream
            await until(pilot, lambda: not app.jobs, timeout=20)
