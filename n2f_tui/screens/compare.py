"""Two runs over the same items, side by side, with a "different outcome" filter.

Each side reads as the inspector's detail does: the verdict, final tags and the automatic
tags' evidence, the item's question, the output, then the engine's views, drawn once a
worker has re-judged the item (a solver may take seconds; the cursor never waits for it).

The head carries the paired statistics of ``sessions.study.paired`` (McNemar's exact test and
the paired bootstrap interval of each report metric's difference), worked out by a
worker thread once the screen is up: the intervals re-run the engine's report per draw.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from n2f_tui.itemview import heading, output_parts, question_parts, view_parts
from n2f_tui.render import STATUS_STYLE, clipped, safe_text
from n2f_tui.widgets.detail import FOLDED
from n2f_tui.widgets.pane import Pane
from n2f_tui.widgets.style import AUTO_CHIP, GLYPH, number, run_label
from n2f_tui.widgets.vlist import VirtualList
from n2f_tui.workers import guarded_work
from sessions import api
from sessions.store.runs import RunStore


def tag_codes(tags: Any) -> list[str]:
    codes = []
    for tag in tags or []:
        codes.append(str(tag.get("code", "")) if isinstance(tag, dict) else str(getattr(tag, "code", tag)))
    return codes


def status_cell(status: str | None) -> Text:
    status = status or "pending"
    return Text(f"{GLYPH.get(status, '?')} {status:<11}", style=STATUS_STYLE.get(status, ""))


SUMMARY_LABELS = {"both_correct": "both correct", "only_a": "only A correct", "only_b": "only B correct",
                  "neither": "neither", "unjudged": "unjudged", "different": "different"}


def summary_line(summary: dict[str, int], unmatched: dict[str, int]) -> str:
    """``300 items in both (23 only in A) · both correct 250 · …``: unmatched items are counted, never dropped."""
    alone = [f"{n} only in {side}" for side, n in (("A", unmatched.get("only_in_a", 0)),
                                                      ("B", unmatched.get("only_in_b", 0))) if n]
    head = f"{summary.get('items', 0)} items in both" + (f" ({', '.join(alone)}, not compared)" if alone else "")
    return " · ".join([head, *(f"{label} {summary.get(key, 0)}" for key, label in SUMMARY_LABELS.items())])


def paired_line(paired: Any) -> Text:
    """McNemar's p and each metric's A - B with its paired 95% interval, on one line."""
    if paired is None:
        return Text("paired statistics: working them out…", style="italic dim")
    parts = [f"McNemar p {paired.p_value:.3g} (only A {paired.only_a}, only B {paired.only_b}, n {paired.items})"]
    parts += [f"{m.metric} A-B {m.difference:+.3f}" + ("" if m.ci is None else f" [{m.ci[0]:+.3f}, {m.ci[1]:+.3f}]")
              for m in paired.metrics]
    return safe_text(" · ".join(parts), style="bold")


class CompareScreen(Screen[None]):
    DEFAULT_CSS = """
    CompareScreen #cmp-head { height: auto; max-height: 5; padding: 0 1; background: $panel; }
    CompareScreen #cmp-list { height: 1fr; border: round $panel-lighten-2; }
    CompareScreen #cmp-detail { height: 1fr; }
    CompareScreen #cmp-detail > Pane { width: 1fr; height: 1fr; padding: 0 0 0 1; }
    CompareScreen #cmp-a { border-right: vkey $panel-lighten-2; }
    """
    BINDINGS = [
        Binding("d", "toggle_different", "Different only"),
        Binding("j", "cursor(1)", "Next", show=False),
        Binding("k", "cursor(-1)", "Previous", show=False),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, a: str, b: str) -> None:
        super().__init__()
        self.store_a = RunStore.open(a)
        self.store_b = RunStore.open(b)
        self.rows: list[Any] = []
        self.shown: list[Any] = []
        self.different_only = False
        self.id_width = 4
        self.summary: dict[str, Any] = {}
        self.unmatched: dict[str, int] = {}
        self.differences: list[str] = []
        self.records_a: dict[int, dict[str, Any]] = {}
        self.records_b: dict[int, dict[str, Any]] = {}
        self.paired: Any = None  # sessions.study.paired.PairedComparison, once worked out

    def compose(self) -> ComposeResult:
        yield Static("", id="cmp-head", markup=False)
        yield VirtualList(self.render_row, empty="no item differs", id="cmp-list")
        with Horizontal(id="cmp-detail"):
            yield Pane(id="cmp-a")
            yield Pane(id="cmp-b")
        yield Footer()

    def on_mount(self) -> None:
        from sessions.reports.compare import compare_runs, comparison_summary, unmatched
        from sessions.reports.describe import run_differences

        self.rows = list(compare_runs(self.store_a, self.store_b))
        self.id_width = max((len(str(r.id)) for r in self.rows), default=4)
        self.summary = dict(comparison_summary(self.rows))
        self.unmatched = unmatched(self.store_a, self.store_b)
        self.differences = run_differences(self.store_a.meta, self.store_b.meta)
        self.records_a = self.store_a.results()
        self.records_b = self.store_b.results()
        self.apply_filter()
        self.query_one(VirtualList).focus()
        self.work_out_paired()

    @guarded_work(group="paired", exclusive=True, thread=True)
    def work_out_paired(self) -> None:
        from sessions.study.final_tags import load_final_results
        from sessions.study.paired import paired_comparison

        engine, _ = api.run_settings(self.store_a)
        run_a, _ = load_final_results(self.store_a)
        run_b, _ = load_final_results(self.store_b)
        paired = paired_comparison(engine, run_a, run_b)
        self.app.call_from_thread(self._paired, paired)

    def _paired(self, paired: Any) -> None:
        self.paired = paired
        self.update_head()

    def apply_filter(self) -> None:
        self.shown = [r for r in self.rows if r.different] if self.different_only else list(self.rows)
        vlist = self.query_one(VirtualList)
        vlist.set_count(len(self.shown), cursor=0)
        vlist.border_title = Text(f"{len(self.shown)} of {len(self.rows)} items"
                                  + (" · different outcome only" if self.different_only else ""))
        self.update_head()
        self.show_current()

    def update_head(self) -> None:
        text = Text()
        text.append("A ", style="bold")
        text.append_text(safe_text(f"{run_label(self.store_a.meta)} ({self.store_a.meta.get('model', '')})"))
        text.append("   B ", style="bold")
        text.append_text(safe_text(f"{run_label(self.store_b.meta)} ({self.store_b.meta.get('model', '')})"))
        text.append("\n")
        text.append_text(safe_text(summary_line(self.summary, self.unmatched), style="dim"))
        text.append("\n")
        text.append_text(safe_text("B differs from A: " + ("; ".join(self.differences) or "nothing recorded "
                                                            "(same model, settings, templates and seed)")))
        text.append("\n")
        text.append_text(paired_line(self.paired))
        self.query_one("#cmp-head", Static).update(text)

    def render_row(self, position: int) -> Text:
        row = self.shown[position]
        text = Text()
        text.append("≠ " if row.different else "  ", style="bold yellow")
        text.append_text(safe_text(str(row.id)[: self.id_width].ljust(self.id_width)))
        text.append(" A ")
        text.append_text(status_cell(row.status_a))
        text.append(" B ")
        text.append_text(status_cell(row.status_b))
        for code in tag_codes(row.tags_a)[:2]:
            text.append_text(safe_text(f" {code} ", style=AUTO_CHIP))
        return text

    def side(self, label: str, store: RunStore, records: dict[int, dict[str, Any]], index: Any,
             status: Any, scores: Any, tags: Any, detail: Any = None) -> Group:
        """One run's side, in the inspector's reading order: the verdict with its final tags and the automatic
        tags' evidence, the item's question, the output, then the engine's views once re-judged (``detail``)."""
        record = records.get(index) if index is not None else None
        parts: list[Any] = [heading(f"{label}: {run_label(store.meta)}")]
        parts.append(status_cell(status))
        if scores:
            parts.append(safe_text("  ".join(f"{k}={number(v)}" for k, v in dict(scores).items())))
        codes = tag_codes(tags)
        if codes:
            chips = Text()
            for code in codes:
                chips.append_text(safe_text(f" {code} ", style=AUTO_CHIP))
                chips.append(" ")
            parts.append(chips)
        for tag in (record or {}).get("tags", []):
            if isinstance(tag, dict) and tag.get("evidence"):
                line = safe_text(f"{tag.get('code', '')}: ", style="bold")
                line.append_text(clipped(tag["evidence"]))
                parts.append(line)
        if record is None:
            parts.append(Text("(no result in this run)", style="dim"))
            return Group(*parts)
        outputs = list(record.get("outputs", []))
        shown = detail or api.item_detail(store, index, record, annotations=[], scored=False)
        parts += question_parts(shown, FOLDED)
        parts += output_parts(outputs, shown.prompts, FOLDED)
        if detail is None:
            parts += [heading("Views"), Text("scoring…", style="italic")]
        elif detail.verdict is not None:
            parts += view_parts(detail.verdict.views, FOLDED)
        return Group(*parts)

    def show_current(self) -> None:
        vlist = self.query_one(VirtualList)
        a, b = self.query_one("#cmp-a", Pane), self.query_one("#cmp-b", Pane)
        if not self.shown:
            a.update("")
            b.update("")
            return
        row = self.shown[vlist.cursor]
        a.update(self.side("A", self.store_a, self.records_a, row.index_a, row.status_a, row.scores_a, row.tags_a))
        b.update(self.side("B", self.store_b, self.records_b, row.index_b, row.status_b, row.scores_b, row.tags_b))
        self.judge_sides(row)

    @guarded_work(group="cmp-views", exclusive=True, thread=True)
    def judge_sides(self, row: Any) -> None:
        """Both sides re-judged from their stored outputs (a solver may take seconds), then drawn with views."""
        details = [None if index is None or index not in records else
                   api.item_detail(store, index, records[index], annotations=[])
                   for store, records, index in ((self.store_a, self.records_a, row.index_a),
                                                 (self.store_b, self.records_b, row.index_b))]
        self.app.call_from_thread(self._judged, row, *details)

    def _judged(self, row: Any, detail_a: Any, detail_b: Any) -> None:
        if not self.shown or self.shown[self.query_one(VirtualList).cursor] is not row:
            return  # the cursor moved on while judging
        self.query_one("#cmp-a", Pane).update(self.side("A", self.store_a, self.records_a, row.index_a, row.status_a,
                                                        row.scores_a, row.tags_a, detail_a), home=False)
        self.query_one("#cmp-b", Pane).update(self.side("B", self.store_b, self.records_b, row.index_b, row.status_b,
                                                        row.scores_b, row.tags_b, detail_b), home=False)

    def on_virtual_list_highlighted(self, event: VirtualList.Highlighted) -> None:
        self.show_current()

    def action_cursor(self, delta: int) -> None:
        self.query_one(VirtualList).move(delta)

    def action_toggle_different(self) -> None:
        self.different_only = not self.different_only
        self.apply_filter()
