"""Agreement of the automatic tagger with a person's review, per tag.

Precision, recall and Cohen's kappa over the reviewed items (``sessions.agreement``);
the items where the two disagree are listed, and Enter jumps to one in the run.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from n2f_tui.render import safe_text
from sessions.store import RunStore

COLUMNS = ("code", "label", "tp", "fp", "fn", "tn", "precision", "recall", "kappa", "disagree")


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


class AgreementScreen(Screen[str | None]):
    DEFAULT_CSS = """
    AgreementScreen #agree-head { height: auto; padding: 0 1; background: $panel; }
    AgreementScreen DataTable { height: 2fr; }
    AgreementScreen #disagree-title { height: 1; padding: 0 1; text-style: bold; }
    AgreementScreen OptionList { height: 1fr; }
    """
    BINDINGS = [Binding("escape", "close", "Back"), Binding("tab", "app.focus_next", "Switch pane", show=False)]

    def __init__(self, store: RunStore) -> None:
        super().__init__()
        self.store = store
        self.rows: list[Any] = []
        self.reviewed = 0

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="agree-head", markup=False)
            yield DataTable(cursor_type="row", id="agree-table")
            yield Static("", id="disagree-title", markup=False)
            yield OptionList(id="disagree")
        yield Footer()

    def on_mount(self) -> None:
        from sessions.agreement import agreement

        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column)
        self.rows, self.reviewed = agreement(self.store)
        for row in self.rows:
            table.add_row(*(safe_text(fmt(getattr(row, c))) for c in COLUMNS[:-1]),
                          safe_text(str(len(row.disagreeing))), key=row.code)
        head = Text(f"automatic tags against a person's review · {self.reviewed} reviewed item(s)", style="bold")
        if not self.reviewed:
            head.append("\nno item reviewed yet: in the run, a accepts an item's tags, t/x correct them", style="dim")
        self.query_one("#agree-head", Static).update(head)
        table.focus()
        self.show_disagreeing(0)

    def show_disagreeing(self, row_index: int) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        if not self.rows or not 0 <= row_index < len(self.rows):
            self.query_one("#disagree-title", Static).update("")
            return
        row = self.rows[row_index]
        self.query_one("#disagree-title", Static).update(
            safe_text(f"{len(row.disagreeing)} item(s) where tagger and reviewer disagree on {row.code} (Enter opens)"))
        options.add_options([Option(safe_text(item_id), id=item_id) for item_id in row.disagreeing])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_disagreeing(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            options.focus()
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
