"""Glyphs, colours, tag chips and number formats shared by the screens.

Everything that shows text from a run builds ``rich.text.Text`` through
``n2f_tui.render.safe_text``: model text is never parsed as markup.

What changes from one session to the next (dates, rates, timings, run ids) is written
by a ``Formats`` the app holds: ``LIVE`` normally, ``STABLE`` (fixed placeholders) when a
snapshot test injects it, so screenshots do not depend on the clock.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from rich.text import Text

from engines.core import Tag
from n2f_tui.render import STATUS_STYLE, safe_text
from sessions.reports.figures import proportion

GLYPH = {"correct": "✓", "wrong": "✗", "unparseable": "?", "scorer_error": "‼", "error": "!", "pending": "·"}
AUTO_CHIP = "black on #d7875f"
MANUAL_CHIP = "black on #5fafd7"
REMOVED_CHIP = "dim strike"


def glyph(status: str) -> Text:
    return Text(GLYPH.get(status, "?"), style=STATUS_STYLE.get(status, ""))


def chip(code: str, style: str) -> Text:
    return safe_text(f" {code} ", style=style)


def chips(auto: Iterable[Tag], manual: dict[str, str] | None = None, removed: Iterable[Tag] = (),
          reviewed: bool = False) -> Text:
    """Tag chips: automatic (orange), added by a person (blue), removed (struck through)."""
    out = Text()
    for tag in auto:
        out.append_text(chip(tag.code, AUTO_CHIP))
        out.append(" ")
    for code in (manual or {}):
        out.append_text(chip(code, MANUAL_CHIP))
        out.append(" ")
    for tag in removed:
        out.append_text(chip(tag.code, REMOVED_CHIP))
        out.append(" ")
    if reviewed:
        out.append("✔reviewed", style="green")
    out.rstrip()
    return out


def pct(value: Any) -> str:
    return proportion(None if value is None else float(value))


def number(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


@dataclass(frozen=True)
class Formats:
    """How the values that change between sessions are written; ``stable`` writes placeholders."""

    stable: bool = False

    def rate(self, value: float) -> str:
        return "– items/s" if self.stable else f"{value:.0f} items/s"

    def duration(self, seconds: float | None) -> str:
        if self.stable or seconds is None:
            return "–"
        seconds = int(seconds)
        if seconds >= 3600:
            return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
        if seconds >= 60:
            return f"{seconds // 60}m{seconds % 60:02d}s"
        return f"{seconds}s"

    def date(self, iso: str) -> str:
        """A stored ISO time as local ``YYYY-MM-DD HH:MM``."""
        if self.stable:
            return "····-··-·· ··:··"
        try:
            return dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
        except (TypeError, ValueError):
            return str(iso or "-")

    def run_label(self, meta: Mapping[str, Any]) -> str:
        """``run_label``, with an unnamed run's id (it carries a timestamp) as a placeholder when stable."""
        return "run" if self.stable and not meta.get("name") else run_label(meta)

    def run_id(self, run_id: str) -> str:
        return "" if self.stable else run_id


LIVE = Formats()
STABLE = Formats(stable=True)


def usage_line(prompt_tokens: int, completion_tokens: int, cost: float | None = None) -> str:
    """``1,234 tokens (1,000 in / 234 out) · $0.0012`` (the cost only when a price is known)."""
    text = f"{prompt_tokens + completion_tokens:,} tokens ({prompt_tokens:,} in / {completion_tokens:,} out)"
    return text + (f" · ${cost:.4f}" if cost is not None else "")


def run_label(meta: Mapping[str, Any]) -> str:
    """A run's name, or its id."""
    return str(meta.get("name") or meta.get("id", "?"))
