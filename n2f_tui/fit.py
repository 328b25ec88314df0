"""Content fitted to the width it is drawn at: long tokens broken with a mark, table cells given room first.

Rich wraps text at spaces and folds a word longer than the line without a sign; it
squeezes a table wider than the line by ending cells with "…", and draws a panel around
a table at the table's width, cutting its right border off. An IRI, a SPARQL query or a
DEDC expression is one long token, so an engine view of them was cut at the pane's edge.

Here a part is built for its width (``Fitted``, rendered by Rich with the width it gets):
every run of non-space characters longer than the room it has is cut into pieces that
end in ``MARK`` (the break is visible, nothing is lost), and a table's columns are each
given a share of the width before that, the widest ones giving up room first. ``marks=False``
(the CLI, which must never break a value) builds the same parts with tokens whole: the
printer widens the line to the longest token instead (``plain.print_whole``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

MARK = "↩"  # ends a piece of a token broken to fit; the token goes on at the start of the next line
MIN_PIECE = 6  # cells: a token is never broken into pieces narrower than this


def break_tokens(text: Text, limit: int) -> Text:
    """``text`` with each run of non-space characters longer than ``limit`` cut into pieces of at most
    ``limit`` cells, every piece but the last ending in ``MARK`` and a line break."""
    limit = max(MIN_PIECE, limit)
    plain = text.plain
    long_runs = list(re.finditer(r"\S{%d,}" % (limit + 1), plain))
    if not long_runs:
        return text
    out = text.blank_copy()
    at = 0
    for run in long_runs:
        out.append_text(text[at:run.start()])
        for start in range(run.start(), run.end(), limit - 1):
            end = min(start + limit - 1, run.end())
            out.append_text(text[start:end])
            if end < run.end():
                out.append(MARK + "\n", style="dim")
        at = run.end()
    out.append_text(text[at:])
    return out


def longest_token(text: Text | str) -> int:
    plain = text.plain if isinstance(text, Text) else text
    return max((len(t) for t in plain.split()), default=0)


@dataclass
class Fitted:
    """A part built when Rich knows its width: ``build(width)`` (``None``: tokens whole, at their natural
    width). ``fixed`` parts (a grid of cells) cannot wrap: a pane scrolls sideways to them instead."""

    build: Callable[[int | None], RenderableType]
    marks: bool = True
    fixed: bool = False

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width if self.marks and not self.fixed else None)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = options.max_width if self.marks and not self.fixed else None
        return Measurement.get(console, options, self.build(width))


def shares(needs: list[int], room: int) -> list[int]:
    """Each column's width limit: what it needs, the widest columns capped first until the sum fits ``room``."""
    room = max(room, MIN_PIECE * len(needs))
    if sum(needs) <= room:
        return list(needs)
    low, high = MIN_PIECE, max(needs)
    while low < high:  # the largest cap that fits
        cap = (low + high + 1) // 2
        if sum(min(n, cap) for n in needs) <= room:
            low = cap
        else:
            high = cap - 1
    return [min(n, low) for n in needs]


def table_overhead(columns: int, boxed: bool, padding: int = 1, edge: bool = True) -> int:
    """Cells a Rich table spends besides its cells: borders between and around columns, and padding."""
    borders = (columns - 1 + (2 if edge else 0)) if boxed else 0
    return borders + 2 * padding * columns


def fit_cells(header: list[Text], rows: list[list[Text]], width: int | None, overhead: int) -> list[list[Text]]:
    """The header and rows with each column's long tokens broken to its share of ``width`` (None: whole)."""
    table = [header] + rows if header else rows
    if width is None or not table:
        return table
    columns = max(len(r) for r in table)
    needs = [max((longest_token(r[c]) for r in table if c < len(r)), default=1) for c in range(columns)]
    limits = shares(needs, width - overhead)
    return [[break_tokens(cell, limits[c]) if needs[c] > limits[c] else cell for c, cell in enumerate(row)]
            for row in table]


def fitted_table(table: Table, header: list[Text], rows: list[list[Text]], width: int | None) -> Table:
    """``table`` (its columns not added yet) filled with ``header`` and ``rows`` fitted to ``width``."""
    boxed = table.box is not None
    overhead = table_overhead(len(header or (rows[0] if rows else [])), boxed, edge=table.show_edge)
    cells = fit_cells(header, rows, width, overhead)
    body = cells[1:] if header else cells
    for title in (cells[0] if header else [Text("")] * (len(body[0]) if body else 0)):
        table.add_column(title, overflow="fold")
    for row in body:
        table.add_row(*row)
    return table
