"""What every engine's parser reports when a reply does not parse: where, and the line with a caret.

Positions are 1-based lines and columns; ``context`` is the offending line (cut to
``CONTEXT_WIDTH`` characters around the column on long lines, so the caret stays
visible) with a caret under the column.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

CONTEXT_WIDTH = 120


@dataclass(frozen=True)
class ParseFailure:
    message: str
    line: int
    column: int
    context: str  # the offending line and a caret under the column

    def describe(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


def caret_under(line_text: str, column: int) -> str:
    """``line_text`` and a caret under ``column`` (1-based), long lines cut around it."""
    if len(line_text) > CONTEXT_WIDTH:
        lo = max(0, column - CONTEXT_WIDTH // 2)
        line_text, column = line_text[lo:lo + CONTEXT_WIDTH], column - lo
    return f"{line_text}\n{' ' * (column - 1)}^"


class Positions:
    """Lines and columns of offsets in one text (the line starts are found once)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def at(self, offset: int) -> str:
        line, column = self.line_col(offset)
        return f"line {line}, column {column}"

    def context(self, offset: int) -> str:
        line, column = self.line_col(offset)
        start = self.starts[line - 1]
        end = self.text.find("\n", start)
        return caret_under(self.text[start:] if end < 0 else self.text[start:end], column)

    def failure(self, offset: int, message: str) -> ParseFailure:
        line, column = self.line_col(offset)
        return ParseFailure(message, line, column, self.context(offset))


def failure_at(text: str, offset: int, message: str) -> ParseFailure:
    """The failure at ``offset`` of ``text`` (for a single failure; ``Positions`` for many)."""
    return Positions(text).failure(offset, message)


def shorten(text: str, limit: int = 60, collapse_spaces: bool = False) -> str:
    """``text`` cut to ``limit`` characters with "..." (whitespace runs made one space first if asked)."""
    if collapse_spaces:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
