"""CLI output that never cuts a value: tables boxed when they fit the terminal, plain columns otherwise;
other parts as wide as their longest word.

rich fits a table to the console's width by squeezing columns and ending cells with "…";
piped, the width is 80 and ``n2f report RUN | cat`` printed ``96.…``. A table that is
piped, or wider than the terminal, is printed instead without its box at its natural
width (every cell whole, a line as long as it needs), which also suits ``cut``, ``awk``
and spreadsheets.
"""

from __future__ import annotations

import copy

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table

from n2f_tui.fit import Fitted

UNBOUNDED = 100_000  # columns: wide enough for any table's natural width


def natural_width(console: Console, table: Table) -> int:
    return console.measure(table, options=console.options.update(max_width=UNBOUNDED)).maximum


def plain(table: Table) -> Table:
    """The same table without box or edge, its columns never squeezed."""
    bare = copy.copy(table)
    bare.box = None
    bare.show_edge = False
    bare.expand = False
    bare.padding = (0, 1)
    bare.columns = [copy.copy(column) for column in table.columns]
    for column in bare.columns:
        column.no_wrap = True
        column.overflow = "ignore"
    return bare


def least_width(console: Console, renderable: RenderableType) -> int:
    """The fewest columns ``renderable`` needs to cut none of its words. Rich measures a panel by its
    content's widest line, not its narrowest: a panel is its content's least width plus its frame."""
    if isinstance(renderable, Fitted):
        return least_width(console, renderable.build(console.width, False))
    if isinstance(renderable, Panel):
        _, right, _, left = Padding.unpack(renderable.padding)
        return least_width(console, renderable.renderable) + left + right + 2
    if isinstance(renderable, Group):
        return max((least_width(console, part) for part in renderable.renderables), default=0)
    return console.measure(renderable, options=console.options.update(max_width=UNBOUNDED)).minimum


def print_whole(console: Console, renderable: RenderableType) -> None:
    """Print ``renderable`` with no value cut or broken: a table that would not fit whole is printed plain
    at its natural width; anything else (a panel, text, an engine view) is printed at the terminal's
    width, or wider when one of its words (an IRI, a query) is longer than that line."""
    if isinstance(renderable, Table):
        if console.is_terminal and natural_width(console, renderable) <= console.width:
            console.print(renderable)
            return
        renderable = plain(renderable)
        needed = natural_width(console, renderable)
    else:
        needed = least_width(console, renderable)
    width = console.width
    console.width = max(width, needed)  # print(width=) alone is capped at the console's
    try:
        console.print(renderable, crop=False)
    finally:
        console.width = width
