"""Engine views and reports as rich renderables, generically: no engine-specific code.

Model text is always wrapped in ``rich.text.Text`` (never parsed as markup) with
control characters made visible, so a reply cannot style or break the terminal.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text
from rich.tree import Tree

from engines.core import Report, View
from n2f_tui.fit import MIN_PIECE, Fitted, break_tokens, fitted_table

# C0/C1 controls (tab and newline kept) and the bidi controls that reorder what follows them
# (U+202E would show a reply's text backwards: "Trojan Source")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
MAX_CHARS = 20_000  # model text a terminal pane lays out quickly
MAX_LINES = 400
STATUS_STYLE = {"correct": "green", "wrong": "red", "unparseable": "magenta", "scorer_error": "bold red",
                "error": "yellow", "pending": "dim"}


def safe_text(value: Any, style: str = "") -> Text:
    """Plain text with control, escape and bidi characters shown as ``\\xNN`` / ``\\uNNNN`` instead of acting."""
    raw = value if isinstance(value, str) else str(value)
    return Text(CONTROL.sub(_shown, raw), style=style)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


@dataclass(frozen=True)
class Fold:
    """How much of a long pane to show: at most ``rows`` table rows, tree nodes or pairs, and ``lines``
    lines of text; the rest is counted in a note that ends with ``hint`` (how to see it all)."""

    rows: int = 20
    lines: int = 40
    hint: str = ""

    def note(self, hidden: int, what: str) -> Text:
        return Text(f"… {hidden:,} more {what}" + (f" ({self.hint})" if self.hint else ""), style="italic yellow")


def render_view(view: View, fold: Fold | None = None, marks: bool = True) -> RenderableType:
    """One engine view fitted to the width it is drawn at (``fit.Fitted``: long tokens broken with a mark;
    ``marks=False`` keeps them whole for the CLI); with ``fold``, a long one shows its head and says how
    much more there is. A grid cannot wrap: it keeps its natural width."""
    kind, data = view.kind, view.data
    if kind == "grid":
        grid = Panel(safe_text("\n".join("".join(map(str, row)) for row in data)), title=view.title, title_align="left")
        return Fitted(lambda width, marks: grid, fixed=True)
    if kind == "chart":
        return Fitted(lambda width, marks: render_bars(view.title, data.get("series", {}), data.get("unit", ""),
                                                       width), marks=marks)
    build = {"table": _table, "key-value": _key_value, "tree": _tree, "diff": _diff}.get(kind, _text_panel)
    return Fitted(lambda width, marks: build(view, fold, width, marks), marks=marks)


def _table(view: View, fold: Fold | None, width: int, marks: bool) -> RenderableType:
    rows = list(view.data.get("rows", []))
    table = RichTable(title=view.title, show_lines=False, expand=False)
    shown = rows[: fold.rows] if fold else rows
    fitted_table(table, [safe_text(c) for c in view.data.get("columns", [])],
                 [[safe_text(cell) for cell in row] for row in shown], width, marks)
    if fold and len(rows) > fold.rows:
        table.caption = fold.note(len(rows) - fold.rows, "rows")
    return table


def _key_value(view: View, fold: Fold | None, width: int, marks: bool) -> RenderableType:
    table = RichTable(title=view.title, show_header=False, box=None)
    fitted_table(table, [], [[safe_text(key, style="bold"), safe_text(value)] for key, value in view.data], width,
                 marks)
    return table


def _tree(view: View, fold: Fold | None, width: int, marks: bool) -> RenderableType:
    def fit(text: Text, depth: int) -> Text:  # the panel's border and padding, then a guide per level
        return break_tokens(text, width - 4 - 4 * depth) if marks else text

    data = view.data
    tree = Tree(fit(safe_text(data.get("label", view.title), style="bold"), 0))
    hidden = _grow(tree, data.get("children", []), [fold.rows if fold else -1], fit, 1)
    body: RenderableType = Group(tree, fold.note(hidden, "nodes")) if fold and hidden else tree
    return Panel(body, title=view.title, title_align="left")


def _diff(view: View, fold: Fold | None, width: int, marks: bool) -> RenderableType:
    data = view.data
    half = width // 2 - 5  # two panels side by side, each with its border and padding

    def side(key: str, title: str) -> Panel:
        text = safe_text(data.get(key, ""))
        return Panel(break_tokens(text, half) if marks else text, title=safe_text(data.get(title, key)))

    left, right = side("left", "left_title"), side("right", "right_title")
    if not marks:  # whole values (the CLI): one above the other, each as wide as its longest word
        return Group(Text(view.title, style="bold"), left, right)
    return Group(Text(view.title, style="bold"), Columns([left, right], equal=True, expand=True))


def _text_panel(view: View, fold: Fold | None, width: int, marks: bool) -> RenderableType:
    data = view.data
    text = clipped(data, len(str(data)), fold.lines, fold.hint) if fold else safe_text(data)
    return Panel(break_tokens(text, width - 4) if marks else text, title=view.title, title_align="left")


def clipped(value: Any, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES, hint: str = "") -> Text:
    """Model text made harmless and cut to ``max_chars`` characters and ``max_lines`` lines, saying what was cut."""
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    cuts = []
    if len(raw) > max_chars:
        cuts.append(f"{len(raw) - max_chars:,} more characters")
        raw = raw[:max_chars]
    lines = raw.split("\n")
    if len(lines) > max_lines:
        cuts.insert(0, f"{len(lines) - max_lines:,} more lines")
        raw = "\n".join(lines[:max_lines])
    text = safe_text(raw)
    if cuts:
        text.append("\n… cut: " + "; ".join(cuts) + (f" ({hint})" if hint else ""), style="italic yellow")
    return text


def _grow(root: Tree, children: list[Any], budget: list[int], fit: Callable[[Text, int], Text], depth: int) -> int:
    """Add ``children`` under ``root`` while ``budget[0]`` nodes remain (-1: no limit), each label fitted
    to its depth (``depth`` is the first level's); returns how many were left out. A loop, not recursion:
    view data of any depth draws (rich lays out the levels it is given)."""
    hidden = 0
    stack: list[tuple[Tree, list[Any], int]] = [(root, list(children)[::-1], depth)]
    while stack:
        node, todo, level = stack[-1]
        if not todo:
            stack.pop()
            continue
        child = todo.pop()
        grandchildren = child.get("children", []) if isinstance(child, dict) else []
        if budget[0] == 0:
            hidden += 1 + _count(grandchildren)
            continue
        budget[0] -= 1
        branch = node.add(fit(safe_text(child.get("label", "") if isinstance(child, dict) else child), level))
        if grandchildren:
            stack.append((branch, list(grandchildren)[::-1], level + 1))
    return hidden


def _count(children: list[Any]) -> int:
    """The nodes of a subtree, counted with a stack."""
    total, stack = 0, list(children)
    while stack:
        child = stack.pop()
        total += 1
        if isinstance(child, dict):
            stack.extend(child.get("children", []))
    return total


BAR = 40  # cells of the longest bar when there is room


def render_bars(title: str, series: dict[str, float], unit: str = "", width: int | None = None,
                bar: int = BAR) -> RenderableType:
    """A horizontal bar chart drawn with block characters, its bars (``bar`` cells at most) shortened to fit ``width``."""
    table = RichTable(title=title, show_header=False, box=None)
    table.add_column(justify="right", overflow="fold")
    table.add_column()
    table.add_column(justify="right", no_wrap=True)
    values = [f"{value:g}{unit}" for value in series.values()]
    labels = [safe_text(label) for label in series]
    bar_room = bar
    if width is not None:
        label_room = min(max((len(t) for t in labels), default=0), max(MIN_PIECE, width // 3))
        labels = [break_tokens(t, label_room) for t in labels]
        bar_room = max(4, min(bar, width - label_room - max(map(len, values), default=0) - 6))
    top = max((abs(v) for v in series.values()), default=0) or 1
    for label, value, shown in zip(labels, series.values(), values):
        table.add_row(label, Text("█" * max(0, round(bar_room * abs(value) / top)), style="cyan"), shown)
    return table


def render_report_tables(report: Report) -> list[RenderableType]:
    out: list[RenderableType] = []
    for table in report.tables:
        rich_table = RichTable(title=f"{table.name}: {table.title}" if table.name != table.title else table.title)
        for column in table.columns:
            rich_table.add_column(safe_text(column), justify="left")
        for row in table.rows:
            rich_table.add_row(*(safe_text(_fmt(cell)) for cell in row))
        if table.note:
            rich_table.caption = table.note
        out.append(rich_table)
    for chart in report.charts:
        out.append(render_bars(f"{chart.name}: {chart.title}", chart.series, chart.unit))
    for note in report.notes:
        out.append(safe_text(note, style="italic"))
    return out


def _fmt(cell: Any) -> str:
    if isinstance(cell, float):
        return f"{cell:.2f}"
    return str(cell)


def render_paper(paper: dict[str, Any] | None) -> list[RenderableType]:
    """The report's ``paper`` block: per paper table, one row per published figure, the run's own figure beside it.

    Long rather than wide (a row per figure, not a column per metric), so Table 1 of
    CompoST with six metrics stays readable in an 80-column terminal.
    """
    if not paper:
        return []
    out: list[RenderableType] = []
    for block in paper.get("tables", []):
        title = f"paper {block['table']}" + (f", {block['block']}" if block["block"] else "")
        table = RichTable(title=safe_text(f"{title}: published figures beside this run"))
        conditions = {r["condition"] for r in block["rows"]}
        shared = conditions.pop() if len(conditions) == 1 else None
        compared = {(c["model"], c["row"], c["metric"]): c for c in block["comparisons"]}
        table.add_column("metric", overflow="fold")
        table.add_column("paper model" if shared is not None else "paper model, configuration")
        table.add_column("paper", no_wrap=True)
        table.add_column("this run", no_wrap=True)
        if compared:
            table.add_column("run - paper [95%]")
        run = block["run"]
        for metric in block["metrics"]:
            mine = (f"{_fmt(float(run['values'][metric]))} n={run['n'][metric]}" if metric in run["values"]
                    else "not in report")
            for index, row in enumerate(r for r in block["rows"] if r["metric"] == metric):
                who = row["model"] + (f", {row['condition']}" if shared is None and row["condition"] else "")
                cells: list[Text | str] = [safe_text(metric if index == 0 else ""), safe_text(who),
                         ("≥ " if row["relation"] == ">=" else "") + _fmt(float(row["value"])),
                         safe_text(mine if index == 0 else "")]
                if compared:
                    c = compared.get((row["model"], row["row"], metric))
                    cells.append(safe_text(f"{c['diff']:+.2f} [{c['diff_low']:+.2f}, {c['diff_high']:+.2f}] "
                                           f"{c['verdict']}" if c else ""))
                table.add_row(*cells)
            table.add_section()
        notes = [f"this run: {run['model']}"]
        if shared:
            notes.append(f"paper configuration: {shared}")
        if any(r["percent_in_paper"] for r in block["rows"]):
            notes.append("fractions, as our report keeps them (the paper prints percent)")
        if compared:
            notes.append("[95% Wilson interval of the run's figure from its own n, minus the paper's]")
        notes += [f"offline: {text}" for text in block.get("offline", [])]
        notes += block.get("notes", [])
        table.caption = safe_text("; ".join(notes))
        out.append(table)
    if not paper.get("tables"):
        out.append(safe_text(f"paper: no published figure for this setting ({paper.get('figures_on_record', 0)} on record; "
                             f"n2f papers {paper.get('engine', '')})", style="italic"))
    return out


def render_papers_listing(entries: list[dict[str, Any]]) -> RichTable:
    """``n2f papers``: one row per engine table (and block) on record."""
    table = RichTable(title="published figures on record")
    for column in ("engine", "table", "setting", "models", "metrics", "figures"):
        table.add_column(column, justify="left", overflow="fold")
    for e in entries:
        where = e["table"] + (f", {e['block']}" if e["block"] else "")
        setting = e["settings"] + ("\n(offline: not reproducible as measured)" if e["offline"] else "")
        table.add_row(safe_text(e["engine"]), safe_text(where), safe_text(setting), safe_text("\n".join(e["models"])),
                      safe_text(", ".join(e["metrics"])), str(e["figures"]))
    return table
