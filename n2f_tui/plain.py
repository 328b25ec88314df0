"""CLI tables that never cut a cell: boxed when they fit the terminal, plain columns otherwise.

rich fits a table to the console's width by squeezing columns and ending cells with "…";
piped, the width is 80 and ``n2f report RUN | cat`` printed ``96.…``. A table that is
piped, or wider than the terminal, is printed instead without its box at its natural
width (every cell whole, a line as long as it needs), which also suits ``cut``, ``awk``
and spreadsheets.
"""

from __future__ import annotations

import copy

from rich.console import Console, RenderableType
from rich.table import Table

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


def print_table(console: Console, renderable: RenderableType) -> None:
    """Print ``renderable``; a table that would not fit whole is printed plain at its natural width."""
    if not isinstance(renderable, Table):
        console.print(renderable)
        return
    if console.is_terminal and natural_width(console, renderable) <= console.width:
        console.print(renderable)
        return
    bare = plain(renderable)
    width = console.width
    console.width = max(width, natural_width(console, bare))  # print(width=) alone is capped at the console's
    try:
        console.print(bare, crop=False)
    finally:
        console.width = width
