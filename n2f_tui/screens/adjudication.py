"""The adjudication queue: items whose annotators disagree, their labels side by side, settled one by one.

The adjudicator sees every annotator's labels (and the automatic tags) per code with
their notes, and under them what is being judged: the item's question (its inputs), the
model's output, the gold answer, the engine's diff and the automatic tags with their
evidence (``item_case``, folded). Enter (or ``o``) opens the whole item unfolded, prompts
and every view included, and Escape comes back to the queue where it was. The final set
starts as the codes most annotators gave; ``s`` writes it as a ``settle`` event: the
settled labels are the item's final tags from then on (``sessions.study.labels``), and the
item leaves the queue. The item is drawn by a worker thread: re-judging it for its views
can take a moment (a solver), and moving in the queue never waits for it.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from n2f_tui.itemview import Extent, gold_parts, heading, output_parts, prompt_parts, structured, view_parts
from n2f_tui.render import Fold, render_view, safe_text
from n2f_tui.screens.dialogs import ChoiceDialog
from n2f_tui.workers import guarded_work
from sessions import api
from sessions.study.labels import ItemLabels, RunLabels, store_labels
from sessions.store.runs import RunStore

FOLDED = Extent(Fold(rows=8, lines=12, hint="Enter opens the whole item"))
WHOLE = Extent(None)


def majority(item: ItemLabels) -> set[str]:
    """The codes more than half of the item's annotators gave."""
    sets = list(item.by_annotator.values())
    return {code for code in set().union(*sets) if 2 * sum(code in s for s in sets) > len(sets)}


def side_by_side(item: ItemLabels, draft: set[str]) -> RichTable:
    people = list(item.by_annotator)
    table = RichTable(title=f"{item.item}: labels side by side", title_justify="left")
    for column in ["code", "auto", *(f"{k + 1} {name}" for k, name in enumerate(people)), "final"]:
        table.add_column(safe_text(column))
    codes = sorted(item.auto.union(draft, *item.by_annotator.values()))
    for code in codes:
        marks = ["✓" if code in item.auto else ""] + ["✓" if code in item.by_annotator[p] else "" for p in people]
        table.add_row(safe_text(code), *marks, Text("✓" if code in draft else "", style="bold green"))
    if not codes:
        table.add_row("(no tag from anyone)", *[""] * (len(people) + 2))
    return table


def notes_of(events: list[dict[str, Any]]) -> Text:
    """Each annotator's notes on the item, one a line."""
    notes = [e for e in events if e.get("kind") == "note" and e.get("text")]
    text = Text()
    for event in notes:
        text.append(f"{event.get('annotator', '?')}: ", style="bold")
        text.append_text(safe_text(event["text"]))
        text.append("\n")
    return text if notes else Text("(no note)\n", style="dim")


def item_case(detail: api.ItemDetail, extent: Extent) -> list[RenderableType]:
    """What the adjudicator judges: question (the item's inputs), output, gold, diff, automatic tags with evidence."""
    parts: list[RenderableType] = [heading("Question")]
    for key, value in detail.item.inputs.items():
        parts += [safe_text(f"{key}:", style="bold"), structured(value, extent)]
    parts += output_parts(list((detail.record or {}).get("outputs", [])), detail.prompts, extent)
    parts += gold_parts(detail.item.gold, extent)
    views = detail.verdict.views if detail.verdict else []
    parts += [render_view(v, extent.fold) for v in views if v.kind == "diff"]
    tags = detail.verdict.tags if detail.verdict else []
    parts.append(heading(f"Automatic tags ({len(tags)})"))
    for tag in tags:
        parts.append(safe_text(f"[{tag.code}] ", style="bold red") + safe_text(tag.evidence or "(no evidence)"))
    return parts


class ItemScreen(Screen[None]):
    """One item whole: prompts, outputs, gold, automatic tags with evidence and every engine view; Escape returns."""

    DEFAULT_CSS = "ItemScreen VerticalScroll { height: 1fr; padding: 0 1; }"
    BINDINGS = [Binding("escape,o", "dismiss", "Back to the queue")]

    def __init__(self, detail: api.ItemDetail) -> None:
        super().__init__()
        self.detail = detail

    def compose(self) -> ComposeResult:
        parts = prompt_parts(self.detail, WHOLE) + item_case(self.detail, WHOLE)
        parts += view_parts(self.detail.verdict.views if self.detail.verdict else [], WHOLE)
        with VerticalScroll():
            yield Static(Group(*parts), id="item-whole")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()


class AdjudicationScreen(Screen[None]):
    DEFAULT_CSS = """
    AdjudicationScreen Horizontal { height: 1fr; }
    AdjudicationScreen OptionList { width: 24; height: 1fr; }
    AdjudicationScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    AdjudicationScreen #adjudicate-labels, AdjudicationScreen #adjudicate-case { height: auto; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Back"),
        Binding("o", "open", "Whole item"),
        Binding("t", "toggle_code", "Toggle a code"),
        Binding("s", "settle", "Settle"),
        Binding("J", "scroll(5)", "Scroll down", show=False),
        Binding("K", "scroll(-5)", "Scroll up", show=False),
        *(Binding(str(k), f"take({k - 1})", f"Take annotator {k}", show=False) for k in range(1, 10)),
    ]

    def __init__(self, store: RunStore, annotator: str = "") -> None:
        super().__init__()
        self.store = store
        self.annotations = store.annotations(annotator)
        engine, _ = api.run_settings(store)
        self.taxonomy = {t.code: t.label for t in engine.taxonomy()}
        self.labels: RunLabels = store_labels(store)
        self.queue: list[str] = []
        self.draft: set[str] = set()
        self.details: dict[str, api.ItemDetail] = {}  # item id -> its detail, judged once by the worker
        self.open_when_read: str | None = None  # Enter came before the item's detail was read
        self.case_shown = ""  # the item whose case the pane shows

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="queue")
            with VerticalScroll():
                yield Static("", id="adjudicate-labels", markup=False)
                yield Static("", id="adjudicate-case", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(OptionList).focus()

    def reload(self, keep: int = 0) -> None:
        self.labels = store_labels(self.store)
        self.queue = self.labels.queue()
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(safe_text(i), id=i) for i in self.queue])
        options.border_title = f"queue: {len(self.queue)} item(s) · adjudicator {self.annotations.annotator}"
        if self.queue:
            options.highlighted = min(keep, len(self.queue) - 1)
        self.show()

    @property
    def current(self) -> ItemLabels | None:
        position = self.query_one(OptionList).highlighted
        return self.labels.items[self.queue[position]] if position is not None and self.queue else None

    def show(self, draft: set[str] | None = None) -> None:
        item = self.current
        pane = self.query_one("#adjudicate-labels", Static)
        if item is None:
            pane.update(Text("no disputed item: every item the annotators disagree on is settled", style="italic"))
            self.query_one("#adjudicate-case", Static).update("")
            self.case_shown = ""
            return
        self.draft = majority(item) if draft is None else draft
        table = side_by_side(item, self.draft)
        table.caption = "1-9 take an annotator's labels · t toggles a code · s settles · Enter/o the whole item"
        table.caption_justify = "left"
        pane.update(Group(table, heading("Notes"), notes_of(self.annotations.events(item.item))))
        if self.case_shown != item.item:
            self.case_shown = item.item
            self.show_case(item.item)

    def show_case(self, item_id: str) -> None:
        if self.open_when_read != item_id:  # the cursor moved on: that Enter was for another item
            self.open_when_read = None
        case = self.query_one("#adjudicate-case", Static)
        detail = self.details.get(item_id)
        if detail is None:
            case.update(Text("reading the item…", style="italic dim"))
            self.load_detail(item_id)
            return
        case.update(Group(*item_case(detail, FOLDED)))

    @guarded_work(thread=True, exclusive=True, group="case")
    def load_detail(self, item_id: str) -> None:
        index = self.store.find_item(item_id)
        if index is None:
            return
        detail = api.item_detail(self.store, index, annotations=[])
        self.app.call_from_thread(self._loaded, item_id, detail)

    def _loaded(self, item_id: str, detail: api.ItemDetail) -> None:
        self.details[item_id] = detail
        if self.case_shown == item_id:
            self.show_case(item_id)
            if self.open_when_read == item_id:
                self.open_when_read = None
                self.app.push_screen(ItemScreen(detail))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        """The whole item, once its detail is read (the queue keeps its place meanwhile)."""
        item = self.current
        if item is None:
            return
        detail = self.details.get(item.item)
        if detail is None:  # opened as soon as it is read, unless the cursor moves on first
            self.open_when_read = item.item
            self.notify("reading the item: it opens when read", timeout=1.5)
            return
        self.app.push_screen(ItemScreen(detail))

    def action_scroll(self, lines: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_take(self, position: int) -> None:
        item = self.current
        if item is not None and position < len(item.by_annotator):
            self.show(set(list(item.by_annotator.values())[position]))

    def action_toggle_code(self) -> None:
        item = self.current
        if item is None:
            return
        codes = list(self.taxonomy) + sorted(set(self.labels.names) - set(self.taxonomy))
        choices = [(c, f"{c} ({self.taxonomy.get(c, self.labels.names.get(c, c))})" + (" ✓" if c in self.draft else ""))
                   for c in codes]

        def done(code: str | None) -> None:
            if code:
                self.show(self.draft ^ {code})

        self.app.push_screen(ChoiceDialog("Toggle a code in the final labels", choices), done)

    def action_settle(self) -> None:
        item = self.current
        if item is None:
            return
        names = {**self.labels.names, **self.taxonomy}
        self.annotations.add(item.item, "settle", codes={c: names.get(c, c) for c in sorted(self.draft)})
        position = self.query_one(OptionList).highlighted or 0
        self.notify(f"settled {item.item}: {', '.join(sorted(self.draft)) or 'no tag'}", timeout=1.5, markup=False)
        self.reload(keep=position)

