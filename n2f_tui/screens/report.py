"""A run's report: the summary, the engine's tables and charts drawn in the terminal.

Besides the report's own charts, every table with a label column and a numeric
column (error-type counts, accuracy by graph type, by gap...) is also drawn as bars,
generically: the column with ``%`` in its name if any, else the last numeric one.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from engines.core import EngineError, Report, Table
from n2f_tui.figures import render_report_head
from n2f_tui.render import render_bars, render_paper, render_report_tables, safe_text
from n2f_tui.widgets.pane import Pane
from n2f_tui.widgets.style import run_label
from n2f_tui.workers import guarded_work
from sessions import api
from sessions.errors import N2FError
from sessions.store.runs import RunStore


def as_number(cell: Any) -> float | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, (int, float)):
        return float(cell)
    if cell in ("-", "–", ""):
        return 0.0
    try:
        return float(str(cell).rstrip("%"))
    except ValueError:
        return None


# the review's tables: bars of the final counts would repeat the error-type table's, bars of tp/fp/fn mean nothing
NOT_CHARTED = ("Review", "Tagger quality")


def table_chart(table: Table) -> RenderableType | None:
    """Bars for one report table, or None when it has nothing to chart."""
    if len(table.rows) < 2 or len(table.columns) < 2 or table.name in NOT_CHARTED:
        return None
    numeric = [c for c in range(1, len(table.columns))
               if all(as_number(row[c]) is not None for row in table.rows if c < len(row))
               and any(isinstance(row[c], (int, float)) for row in table.rows if c < len(row))]
    if not numeric:
        return None
    percent = [c for c in numeric if "%" in str(table.columns[c])]
    column = percent[0] if percent else numeric[-1]
    series = {str(row[0]): as_number(row[column]) or 0.0 for row in table.rows}
    unit = "%" if "%" in str(table.columns[column]) else ""
    # the table's title names what the column is (``acc %`` of rgp's table is in-sample accuracy)
    return render_bars(f"{table.name}: {table.columns[column]} by {table.columns[0]} (from: {table.title})", series,
                       unit, bar=30)


def report_renderable(report: Report, summary: dict[str, Any]) -> RenderableType:
    run = run_label({"id": summary["run"], "name": summary.get("name")})
    parts: list[RenderableType] = [render_report_head(summary, run), Text("")]
    charted = False
    for table in report.tables:
        chart = table_chart(table)
        if chart is not None:
            parts += [chart, Text("")]
            charted = True
    tag_series = summary.get("tags") or {}
    if tag_series and not charted:
        parts += [render_bars("Error tags (items per tag)", tag_series, bar=30), Text("")]
    parts += render_report_tables(report)
    parts += render_paper(summary.get("paper"))
    return Group(*parts)


class ReportScreen(Screen[None]):
    DEFAULT_CSS = """
    ReportScreen Pane { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("r", "reload", "Reload")]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        yield Pane(Text("building the report…", style="italic"), id="report")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Pane).focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.build()

    def renderable(self) -> RenderableType:
        try:
            store = RunStore.open(self.run_id)
            report, summary = api.build_report(store)
            return report_renderable(report, summary)
        except (N2FError, EngineError) as exc:
            return safe_text(f"no report: {exc}", style="red")

    @guarded_work(thread=True, exclusive=True, group="report")
    def build(self) -> None:
        renderable = self.renderable()
        self.app.call_from_thread(self.query_one("#report", Pane).update, renderable)
