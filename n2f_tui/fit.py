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
    """A part built when Rich knows its width: ``build(width, marks)``, where ``marks`` says whether a
    token may be broken (with ``MARK``) to fit or must stay whole, the part then wider than ``width``.
    A ``fixed`` part (a grid of cells) cannot wrap: a pane scrolls sideways to it instead."""

    build: Callable[[int, bool], RenderableType]
    marks: bool = True
    fixed: bool = False

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width, self.marks and not self.fixed)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.build(options.max_width, self.marks and not self.fixed))


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


def widths_within(least: list[int], natural: list[int], room: int) -> list[int]:
    """Column widths between each column's least and natural width, the widest cut first to fit ``room``
    (each at its least when even that does not fit: the table is then wider than ``room``)."""
    widths = [max(a, b) for a, b in zip(least, natural)]
    if sum(widths) <= room:
        return widths
    low, high = 1, max(widths)
    while low < high:  # the largest cap that fits
        cap = (low + high + 1) // 2
        if sum(max(a, min(b, cap)) for a, b in zip(least, natural)) <= room:
            low = cap
        else:
            high = cap - 1
    return [max(a, min(b, low)) for a, b in zip(least, natural)]


def line_width(text: Text) -> int:
    return max((len(line) for line in text.plain.split("\n")), default=0)


def fitted_table(table: Table, header: list[Text], rows: list[list[Text]], width: int, marks: bool) -> Table:
    """``table`` (its columns not added yet) filled with ``header`` and ``rows``, each column given a
    fixed width so that the table fits ``width``: Rich's own squeezing ignores how narrow a column
    may go and folds or ends cells in "…". With ``marks`` a column's long tokens are first broken
    to its share; without, a column is never narrower than its longest token."""
    table_rows = [header] + rows if header else rows
    columns = max((len(r) for r in table_rows), default=0)
    if not columns:
        return table
    room = width - table_overhead(columns, table.box is not None, edge=table.show_edge)
    cells = [list(r) + [Text("")] * (columns - len(r)) for r in table_rows]
    tokens = [max(longest_token(r[c]) for r in cells) for c in range(columns)]
    least = shares(tokens, room) if marks else tokens
    if marks:
        cells = [[break_tokens(cell, least[c]) if tokens[c] > least[c] else cell for c, cell in enumerate(r)]
                 for r in cells]
    natural = [max(line_width(r[c]) for r in cells) for c in range(columns)]
    widths = widths_within(least, natural, room)
    for c in range(columns):
        table.add_column(cells[0][c] if header else "", width=max(1, widths[c]), overflow="fold")
    for row in cells[1:] if header else cells:
        table.add_row(*row)
    return table
