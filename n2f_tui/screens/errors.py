"""The error log: what went wrong in the inspector's workers this session, newest first, with tracebacks.

Entries come from ``N2FApp.report_error`` (see ``n2f_tui.workers``); the same error again
right after itself (a live report that keeps failing) adds to its count instead of a line.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from n2f_tui.render import safe_text


@dataclass
class ErrorEntry:
    at: float  # time.time() of its first occurrence
    what: str  # the worker or action that failed
    message: str  # ``KeyError: 'x'``
    details: str  # the traceback
    count: int = 1


class ErrorLog:
    """This session's errors, in order."""

    def __init__(self) -> None:
        self.entries: list[ErrorEntry] = []

    def add(self, what: str, exc: BaseException) -> ErrorEntry:
        message = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        last = self.entries[-1] if self.entries else None
        if last is not None and (last.what, last.message) == (what, message):
            last.count += 1
            return last
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        entry = ErrorEntry(time.time(), what, message, details)
        self.entries.append(entry)
        return entry


class ErrorLogScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ErrorLogScreen { align: center middle; background: $background 60%; }
    ErrorLogScreen > VerticalScroll { width: 110; max-width: 95%; height: 90%; border: thick $error;
                                      background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "dismiss", "Close the error log")]

    def __init__(self, log: ErrorLog) -> None:
        super().__init__()
        self.log_entries = list(reversed(log.entries))

    def compose(self) -> ComposeResult:
        parts: list[Text] = []
        for entry in self.log_entries:
            stamp = time.strftime("%H:%M:%S", time.localtime(entry.at))
            times = f" (×{entry.count})" if entry.count > 1 else ""
            parts.append(safe_text(f"{stamp}  {entry.what}: {entry.message}{times}", style="bold red"))
            parts.append(safe_text(entry.details.rstrip() + "\n", style="dim"))
        with VerticalScroll():
            yield Static(Text("\n").join(parts) if parts else Text("no errors this session", style="dim"),
                         markup=False, id="error-log")
            yield Static(Text("Escape closes the error log", style="dim"), markup=False)
