"""The adjudication queue: items whose annotators disagree, their labels side by side, settled one by one.

The adjudicator sees every annotator's labels (and the automatic tags) per code, builds
the final set (it starts as the codes most annotators gave), and ``s`` writes it as a
``settle`` event: the settled labels are the item's final tags from then on
(``sessions.labels``), and the item leaves the queue.
"""

from __future__ import annotations

from rich.table import Table as RichTable
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from n2f_tui.render import safe_text
from n2f_tui.screens.dialogs import ChoiceDialog
from sessions import api
from sessions.labels import ItemLabels, RunLabels, store_labels
from sessions.store import RunStore


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


class AdjudicationScreen(Screen[None]):
    DEFAULT_CSS = """
    AdjudicationScreen Horizontal { height: 1fr; }
    AdjudicationScreen OptionList { width: 34; height: 1fr; }
    AdjudicationScreen #adjudicate-labels { width: 1fr; height: 1fr; padding: 0 1; overflow-y: auto; }
    """
    BINDINGS = [
        Binding("escape", "dismiss", "Back"),
        Binding("t", "toggle", "Toggle a code"),
        Binding("s", "settle", "Settle"),
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

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield OptionList(id="queue")
            yield Static("", id="adjudicate-labels", markup=False)
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
            return
        self.draft = majority(item) if draft is None else draft
        table = side_by_side(item, self.draft)
        table.caption = "1-9 take an annotator's labels · t toggles a code · s settles the final column"
        table.caption_justify = "left"
        pane.update(table)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show()

    def action_take(self, position: int) -> None:
        item = self.current
        if item is not None and position < len(item.by_annotator):
            self.show(set(list(item.by_annotator.values())[position]))

    def action_toggle(self) -> None:
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

