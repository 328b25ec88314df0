"""The item first and nothing cut, on every engine at 80x24, 120x40 and 200x50 (issue 26, points 2 and 3).

Each engine's first wrong item is snapshotted at the three sizes; beside the picture, the
test reads the panes: the item's own question and the whole evidence of its tags are in
the detail (at 80x24 on screen without a key press), and no pane is wider than its room
(a clipped panel border), no cell ends in Rich's "…" (a value cut without a mark), and every
word of the question and of the outputs is there whole once the marked breaks are joined.

The runs are simulator runs with a fixed seed, made once for the module; the app gets the
``STABLE`` formats, so nothing time-dependent is drawn. Update the pictures after an
intended change with ``pytest tests/test_tui_fit.py --snapshot-update``.
"""

from __future__ import annotations

import re

import pytest

from n2f_tui.app import N2FApp
from n2f_tui.fit import MARK, Fitted
from n2f_tui.itemview import question_of
from n2f_tui.screens.run import RunScreen
from n2f_tui.widgets.pane import Pane, parts
from n2f_tui.widgets.progress import RunHeader
from n2f_tui.widgets.style import STABLE
from tui_support import make_run_sync, terminal_sizes, until

ENGINES = ("dedc", "logic", "compost", "robogrid", "rgp")
SIZES = [(80, 24), (120, 40), (200, 50)]
RICH_CUT = re.compile(r"\S…\s*[│┃]")  # a table cell Rich squeezed: its value ends in an ellipsis at the border


@pytest.fixture(scope="module")
def store_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("fit-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("N2F_HOME", str(home))
        for engine in ENGINES:
            make_run_sync(engine, limit=12, seed=0, engine=engine)
    return home


class StillClock:
    """The logic engine's verdict view shows the solver's time: a snapshot must not depend on it."""

    @staticmethod
    def perf_counter() -> float:
        return 0.0


@pytest.fixture
def runs(store_home, monkeypatch):
    monkeypatch.setenv("N2F_HOME", str(store_home))
    monkeypatch.setattr("engines.logic.solver.time", StillClock)


def joined(text: str) -> str:
    """Pane text with the marked breaks joined and the layout's spacing made single spaces."""
    return " ".join(re.sub(re.escape(MARK) + r"\s*\n\s*", "", text).split())


def words(text: str) -> list[str]:
    return [w for w in text.split() if MARK not in w]


def visible(pane: Pane) -> str:
    """The pane's lines on screen (scrolled to the top), as a person sees them."""
    return "\n".join(pane.plain.splitlines()[: pane.scrollable_content_region.height])


def wider_than_pane_allowed(pane: Pane) -> bool:
    """A grid (``Fitted.fixed``) wider than the pane: the one part that scrolls sideways."""
    return any(isinstance(p, Fitted) and p.fixed for p in parts(pane.renderable))


def pane_problems(pane: Pane) -> list[str]:
    problems = []
    width = pane.scrollable_content_region.width
    if pane.virtual_size.width > width and not wider_than_pane_allowed(pane):
        problems.append(f"#{pane.id}: content {pane.virtual_size.width} wide in a pane of {width} (a border cut off)")
    for number, line in enumerate(pane.plain.splitlines()):
        if RICH_CUT.search(line):
            problems.append(f"#{pane.id} line {number}: a value cut by Rich: {line.strip()!r}")
    return problems


def screen_problems(screen: RunScreen, size: tuple[int, int]) -> list[str]:
    """Every pane of the run screen: fitted panes, and header lines within the screen's width."""
    problems = []
    for pane in screen.query(Pane):
        if pane.display:
            problems += pane_problems(pane)
    header = screen.query_one(RunHeader)
    for line in str(header.render()).splitlines():
        if len(line) > size[0] - 2:
            problems.append(f"header line cut at {size[0]} columns: {line!r}")
    return problems


async def settle(pilot) -> None:
    await pilot.pause()
    await until(pilot, lambda: isinstance(pilot.app.screen, RunScreen))
    screen = pilot.app.screen
    await until(pilot, lambda: screen.detail_ready and screen.metrics, timeout=30)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def on_first_wrong(pilot) -> None:
    await settle(pilot)
    pilot.app.screen.action_wrong(1)
    await settle(pilot)


def read_detail(app: N2FApp, size: tuple[int, int]) -> None:
    """The question and every tag's evidence are in the detail; at 80x24, on screen with the first evidence line."""
    screen = app.screen
    detail_view = screen.query_one("#detail")
    index = screen.current
    record = screen.state.record(index)
    tags = screen.state.tags(index, record)
    detail = screen.query_one("#detail")._last[0]
    question = question_of(detail)
    evidence = [t.evidence for t in tags.auto if t.evidence]
    assert question and evidence, "the first wrong item has a question and tag evidence"
    everything = joined(detail_view.text())
    assert joined(question) in everything
    for text in evidence:
        assert joined(text) in everything
    models = [o for o, step in zip(record.get("outputs", []), detail.prompts) if step.get("kind") != "tool"]
    for output in models:  # a tool's result is summarised with counts, not shown as text
        missing = [w for w in words(output)[:400] if w not in everything]
        assert missing == []
    if detail_view.stacked:
        seen = joined(visible(detail_view.query_one("#col-prompt")))
        first_evidence = evidence[0].splitlines()[0]
        assert joined(first_evidence) in seen, "the whole first evidence line is on screen without a key"
        assert joined(question.splitlines()[0])[:40] in seen, "the question starts on screen without a key"
    else:
        assert joined(evidence[0]) in joined(visible(detail_view.query_one("#detail-head")))
        assert joined(question.splitlines()[0])[:40] in joined(visible(detail_view.query_one("#col-output")))


@pytest.mark.parametrize("size", terminal_sizes(*SIZES))
@pytest.mark.parametrize("engine", ENGINES)
def test_detail_of_the_first_wrong_item(snap_compare, runs, engine, size):
    checked = []

    async def run_before(pilot):
        await on_first_wrong(pilot)
        read_detail(pilot.app, size)
        assert screen_problems(pilot.app.screen, size) == []
        checked.append(True)

    assert snap_compare(N2FApp(run=engine, formats=STABLE, demo=False), terminal_size=size, run_before=run_before)
    assert checked


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
async def test_every_item_fits_every_size(runs, engine):
    """Each item of the run at each size (folded at the smallest and the largest, whole at 120x40): no pane cut."""
    app = N2FApp(run=engine, formats=STABLE, demo=False)
    problems: list[str] = []
    async with app.run_test(size=SIZES[0]) as pilot:
        await settle(pilot)
        screen = app.screen
        for size, expanded in ((SIZES[0], False), (SIZES[1], True), (SIZES[2], False)):
            await pilot.resize_terminal(*size)
            if screen.query_one("#detail").expanded != expanded:
                screen.action_expand()
            for position in range(screen.vlist.count):
                screen.move_to(position)
                await until(pilot, lambda: screen.detail_ready, timeout=30)
                await pilot.pause()
                problems += [f"{size} item {position + 1} {'whole' if expanded else 'folded'}: {p}"
                             for p in screen_problems(screen, size)]
    assert problems == []
