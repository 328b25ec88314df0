"""One item in full: prompt, raw output, gold, diff, parsed structure and every engine view.

Rendered generically from ``sessions.api.ItemDetail`` by ``n2f_tui.itemview``: views of
kind ``diff`` are drawn as a character diff of output against gold beside the output.
Folded (until ``expanded`` is set), long tables, trees and tool results show their head
and say how much more there is; model text is always cut at a few hundred lines so a
runaway reply cannot stall the screen.
"""

from __future__ import annotations

import difflib
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container

from engines.core import View
from n2f_tui.itemview import Extent, gold_parts, heading, output_parts, prompt_parts, question_parts, view_parts
from n2f_tui.render import MAX_LINES, STATUS_STYLE, Fold, clipped, safe_text
from n2f_tui.state import ItemTags
from n2f_tui.widgets.pane import Pane
from n2f_tui.widgets.style import GLYPH, chips, number

MAX_DIFF = 4_000
FOLDED = Extent(Fold(rows=20, lines=MAX_LINES, hint="o shows all"))
EXPANDED = Extent(None)


def char_diff(left: str, right: str) -> tuple[Text, Text]:
    """Output and gold with the differing characters highlighted."""
    left_cut, right_cut = left[:MAX_DIFF], right[:MAX_DIFF]
    a, b = Text(), Text()
    matcher = difflib.SequenceMatcher(None, left_cut, right_cut, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            a.append_text(safe_text(left_cut[i1:i2]))
            b.append_text(safe_text(right_cut[j1:j2]))
        else:
            if i2 > i1:
                a.append_text(safe_text(left_cut[i1:i2], style="bold white on #870000"))
            if j2 > j1:
                b.append_text(safe_text(right_cut[j1:j2], style="bold white on #005f00"))
    if len(left) > MAX_DIFF:
        a.append(" …", style="italic")
    if len(right) > MAX_DIFF:
        b.append(" …", style="italic")
    return a, b


def live_output(live: Any) -> Group:
    """A reply being generated (``sessions.backends.streaming.LiveReply``): earlier steps' outputs, then
    the current step's text so far with its token count and rate."""
    parts: list[RenderableType] = []
    for number_, output in enumerate(live.outputs, 1):
        parts.append(heading(f"Output {number_}"))
        parts.append(clipped(output))
    parts.append(heading(f"Output {live.step + 1} (generating…)" if live.outputs or live.step > 0
                         else "Output (generating…)"))
    rate = f" · {live.rate:.1f} tokens/s" if live.rate else ""
    parts.append(Text(f"{live.tokens} token{'s' if live.tokens != 1 else ''}{rate}", style="italic cyan"))
    parts.append(clipped(live.text) if live.tokens else Text("waiting for the first token…", style="dim"))
    return Group(*parts)


def diff_view(view: View) -> RenderableType:
    data = view.data if isinstance(view.data, dict) else {}
    left, right = char_diff(str(data.get("left", "")), str(data.get("right", "")))
    lt = safe_text(data.get("left_title", "output"), style="bold")
    rt = safe_text(data.get("right_title", "gold"), style="bold")
    return Group(heading(f"Diff: {view.title}"), lt, left, rt, right)


def head_text(detail: Any, tags: ItemTags, position: str, score_key: str) -> Text:
    record = detail.record or {}
    status = detail.status
    text = Text()
    text.append(f"{GLYPH.get(status, '?')} {status}", style=f"bold {STATUS_STYLE.get(status, '')}")
    text.append("  ")
    text.append_text(safe_text(detail.item.id, style="bold"))
    text.append(f"  {position}", style="dim")
    scores = record.get("scores") or {}
    if scores:
        text.append("  ")
        text.append_text(safe_text("  ".join(f"{k}={number(v)}" for k, v in scores.items())))
    line = chips(tags.auto, tags.manual, tags.removed, tags.reviewed)
    if line.plain:
        text.append("\n")
        text.append_text(line)
    for tag in tags.auto + tags.removed:
        if tag.evidence:  # whole: the evidence is why the tag is there
            text.append("\n")
            text.append_text(safe_text(f"  {tag.code}: ", style="bold"))
            text.append_text(clipped(tag.evidence))
    for note in tags.notes:
        text.append("\n")
        text.append_text(safe_text(f"  note: {note}", style="italic cyan"))
    if record.get("error"):
        text.append("\n")
        text.append_text(safe_text(f"  error: {record['error']}", style="yellow"))
    if detail.item.meta:
        meta = "  ".join(f"{k}={v}" for k, v in detail.item.meta.items() if not isinstance(v, (list, dict)))
        text.append("\n")
        text.append_text(safe_text(meta, style="dim"))
    return text


def without_codes(view: View, codes: set[str]) -> View:
    """A table or key-value view without the rows named after one of ``codes`` (blind mode hides tags)."""
    if not codes:
        return view
    if view.kind == "table" and isinstance(view.data, dict):
        rows = [r for r in view.data.get("rows", []) if not (r and str(r[0]) in codes)]
        return View(view.kind, view.title, {**view.data, "rows": rows})
    if view.kind == "key-value" and isinstance(view.data, list):
        return View(view.kind, view.title, [pair for pair in view.data if str(pair[0]) not in codes])
    return view


class DetailView(Container):
    """The highlighted item, in the order a person reads it: the verdict with its tags and their evidence
    (the head), the item's own question, the output, the engine views, then the full prompt.

    Wide, the head sits above three columns (question and output | views | prompt), as tall as it
    needs up to a third of the detail; narrow, all of it is one stacked pane in that order (kept
    in ``#col-prompt``), so at 80x24 the verdict, its evidence and the question come first.
    """

    DEFAULT_CSS = """
    DetailView { height: 1fr; }
    DetailView #detail-head { height: 3; padding: 0 1; background: $boost; overflow-y: auto; }
    DetailView #detail-cols { layout: horizontal; height: 1fr; }
    DetailView #detail-cols > Pane { width: 1fr; height: 1fr; padding: 0 0 0 1; }
    DetailView #col-output, DetailView #col-views { border-right: vkey $panel-lighten-2; }
    DetailView.-stacked #col-output, DetailView.-stacked #col-views { display: none; }
    DetailView.-stacked #detail-head { display: none; }
    """
    STACK_BELOW = 100  # columns: narrower than this, the detail is one stacked pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: tuple[int, int] | None = None  # (item index, version) on screen
        self._last: tuple[Any, ...] | None = None
        self.expanded = False  # every part whole (``o``), or long parts folded
        self._views_of: Any = None  # the detail whose views the views pane shows
        self._columns_of: Any = None  # the detail the prompt and output columns show
        self._painted: tuple[int, int] | None = None  # the item shown once it has been painted
        self._head: Text = Text()  # the verdict, tags and evidence of the item shown

    def compose(self) -> ComposeResult:
        yield Pane(id="detail-head")
        with Container(id="detail-cols"):
            yield Pane(id="col-output")
            yield Pane(id="col-views")
            yield Pane(id="col-prompt")

    def drawn(self, key: tuple[int, int]) -> bool:
        """Item ``key`` is on screen in full: scored (when it has a stored answer) and its views drawn."""
        if self.shown != key or self._last is None:
            return False
        detail = self._last[0]
        return not detail.needs_scoring and self._columns_of is detail and (self.stacked or self._views_of is detail)

    @property
    def stacked(self) -> bool:
        return self.has_class("-stacked")

    def on_resize(self, event: Any) -> None:
        stacked = event.size.width < self.STACK_BELOW
        if stacked != self.stacked:
            self.set_class(stacked, "-stacked")
            if self._last is not None:
                self.shown = self._views_of = None
                self.show(*self._last)

    def clear(self, message: str) -> None:
        self.shown = None
        self._last = None
        self._views_of = self._columns_of = None
        self._head = Text(message, style="italic")
        self.query_one("#detail-head", Pane).update(self._head)
        for pane in ("#col-prompt", "#col-output", "#col-views"):
            self.query_one(pane, Pane).update(self._head if self.stacked and pane == "#col-prompt" else "")

    def show(self, detail: Any, tags: ItemTags, position: str, score_key: str, key: tuple[int, int]) -> None:
        """Draw one item (``key`` = (index, version): redrawing the same key is skipped).

        A detail not scored yet (``detail.needs_scoring``) is drawn from what is stored. The
        engine views (tables, trees: the costliest to lay out) are drawn once the rest has been
        painted (skipped if the cursor moved on by then): the verdict's if ``show_scored`` has
        brought it, else "scoring…" until it does.
        """
        if key == self.shown:
            return
        home = self.shown is None or self.shown[0] != key[0]
        self.shown = key
        self._painted = None
        self._last = (detail, tags, position, score_key, key)
        self._head = head_text(detail, tags, position, score_key)
        head = self.query_one("#detail-head", Pane)
        head.update(self._head, home=home)
        if not self.stacked and head.lines:  # as tall as the verdict and its evidence, up to a third
            head.styles.height = min(len(head.lines), max(3, self.size.height // 3))
        self._draw_columns(detail, home)
        self.call_after_refresh(self._first_paint_done, key, home)

    def move_position(self, position: str) -> None:
        """The item shown is now at ``position`` of the list (``3/323`` after ``1/17 of 323``): its head redrawn."""
        if self._last is None or self._last[2] == position:
            return
        detail, tags, _, score_key, key = self._last
        self._last = (detail, tags, position, score_key, key)
        self._head = head_text(detail, tags, position, score_key)
        self.query_one("#detail-head", Pane).update(self._head, home=False)
        if self.stacked:
            self._draw_columns(self._columns_of or detail, home=False)

    def show_scored(self, detail: Any, key: tuple[int, int]) -> None:
        """The verdict of the item shown came in: drawn now if the item was painted, else just after."""
        if self.shown != key or self._last is None:
            return
        self._last = (detail, *self._last[1:])
        if self._painted == key:
            self._draw_scored(home=False)

    def _first_paint_done(self, key: tuple[int, int], home: bool) -> None:
        if self.shown != key:
            return
        self._painted = key
        if self._last is not None and self._last[0] is not self._columns_of:  # the verdict came first
            self._draw_scored(home)
        elif not self.stacked:
            self._show_views(home)

    def _draw_scored(self, home: bool) -> None:
        """The verdict's diffs (in the output column) and its engine views, the scroll kept."""
        detail = self._last[0] if self._last is not None else None
        if detail is None:
            return
        diffs = any(v.kind == "diff" for v in detail.verdict.views) if detail.verdict else False
        self._draw_columns(detail, home, prompt=self.stacked, output=self.stacked or diffs)
        if not self.stacked:
            self._show_views(home)

    def _draw_columns(self, detail: Any, home: bool, prompt: bool = True, output: bool = True) -> None:
        self._columns_of = detail
        if self.stacked:
            self.query_one("#col-prompt", Pane).update(
                Group(self._head, self._output(detail), self._views(detail), self._prompt(detail)), home=home)
            return
        if prompt:
            self.query_one("#col-prompt", Pane).update(self._prompt(detail), home=home)
        if output:
            self.query_one("#col-output", Pane).update(self._output(detail), home=home)

    def show_live(self, detail: Any, live: Any) -> None:
        """The reply of the item shown, as it streams in (the rest of the detail stays as drawn)."""
        output = Group(*question_parts(detail, self.extent), live_output(live), *self._gold(detail))
        pane = "#col-prompt" if self.stacked else "#col-output"
        self.query_one(pane, Pane).update(Group(self._head, output, self._prompt(detail)) if self.stacked else output,
                                          home=False)

    def _show_views(self, home: bool) -> None:
        """The views pane for the detail as it stands (drawn once per detail)."""
        if self._last is not None and self._views_of is not self._last[0]:
            self._views_of = self._last[0]
            self.query_one("#col-views", Pane).update(self._views(self._views_of), home=home)

    def text(self) -> str:
        """Everything the detail shows, as plain text (tests)."""
        return "\n".join(p.plain for p in self.query(Pane))

    def scroll_by(self, lines: int) -> None:
        for pane in self.query("#detail-cols > Pane"):
            pane.scroll_relative(y=lines, animate=False)

    @property
    def extent(self) -> Extent:
        return EXPANDED if self.expanded else FOLDED

    def toggle_expanded(self) -> None:
        """Show every row, node and tool result whole, or fold them again; the item shown is redrawn."""
        self.expanded = not self.expanded
        if self._last is not None:
            self.shown = self._views_of = None
            self.show(*self._last)

    def _prompt(self, detail: Any) -> RenderableType:
        return Group(*prompt_parts(detail, self.extent))

    def _output(self, detail: Any) -> RenderableType:
        outputs = (detail.record or {}).get("outputs") or []
        parts = question_parts(detail, self.extent) + output_parts(outputs, detail.prompts, self.extent)
        if not outputs:
            parts.append(heading("Output"))
            parts.append(Text("(no output yet)" if detail.record is None else "(no output)", style="dim"))
        parts += self._gold(detail)
        verdict = detail.verdict
        for view in verdict.views if verdict else []:
            if view.kind == "diff":
                parts.append(diff_view(view))
        return Group(*parts)

    def _gold(self, detail: Any) -> list[RenderableType]:
        return gold_parts(detail.item.gold, self.extent)

    def _views(self, detail: Any) -> RenderableType:
        """The verdict's views, without the rows named after a code blind mode hides."""
        verdict = detail.verdict
        if verdict is None:
            waiting = "scoring…" if detail.needs_scoring else "(not scored yet)"
            return Group(heading("Views"), Text(waiting, style="italic" if detail.needs_scoring else "dim"))
        hidden = self._last[1].hidden if self._last is not None else set()
        parts = view_parts([without_codes(v, hidden) for v in verdict.views], self.extent)
        return Group(*parts) if parts else Text("(no views)", style="dim")
