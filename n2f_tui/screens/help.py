"""``?``: every key of the screen below (and the app's), with what it does."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from n2f_tui.render import safe_text

NOTES = [
    ("ctrl+p", "command palette: every action below by name"),
    ("tab / shift+tab", "move the focus (item list, detail columns)"),
    ("← → / shift+wheel", "scroll the focused pane sideways a page at a time (a grid wider than the pane)"),
]


SKIP_ACTIONS = {  # Textual's generic keys: scrolling, focus, copy
    "scroll_left", "scroll_right", "scroll_up", "scroll_down", "scroll_home", "scroll_end", "page_up", "page_down",
    "page_left", "page_right", "copy_text", "focus_next", "focus_previous", "command_palette", "help_quit",
}


def screen_bindings(screen: Screen[Any]) -> list[tuple[Any, Binding]]:
    """(node, binding) for every key in force on ``screen``: its own first, then the focused
    widget's, then the app's; Textual's generic scrolling and focus keys left out."""
    app = screen.app
    nodes: list[Any] = [screen]
    focused = screen.focused
    if focused is not None:
        nodes += [n for n in focused.ancestors_with_self if n is not screen and n is not app]
    nodes.append(app)
    found = []
    for node in nodes:
        for bindings in node._bindings.key_to_bindings.values():
            for binding in bindings:
                if binding.action.split(".")[-1].split("(")[0] in SKIP_ACTIONS:
                    continue
                found.append((node, binding))
    return found


def key_rows(screen: Screen[Any]) -> list[tuple[str, str]]:
    """(keys, what they do), one row per action (``n`` and ``p`` of ``wrong(±1)`` together), described by
    its longest tooltip, else its descriptions; an action the screen refuses now (``refused_actions``:
    accept in blind mode) is not listed."""
    refused: set[str] = getattr(screen, "refused_actions", set())
    keys: dict[str, list[str]] = {}
    described: dict[str, list[str]] = {}
    for _, binding in screen_bindings(screen):
        action = binding.action.split(".")[-1].split("(")[0]
        if action in refused:
            continue
        shown = screen.app.get_key_display(binding)
        if shown not in keys.setdefault(action, []):
            keys[action].append(shown)
        text = binding.tooltip or binding.description or binding.action
        if text not in described.setdefault(action, []):
            described[action].append(text)
    rows = []
    for action, texts in described.items():
        tips = [t for t in texts if "(" in t or len(t) > 30]
        rows.append((", ".join(keys[action]), max(tips, key=len) if tips else " / ".join(texts)))
    return rows + NOTES


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen > VerticalScroll { width: 70; max-width: 95%; height: 90%; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape,question_mark", "dismiss", "Close help"),
        Binding("j,down", "scroll(1)", "Down", show=False),
        Binding("k,up", "scroll(-1)", "Up", show=False),
    ]

    def action_scroll(self, lines: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=lines, animate=False)

    def __init__(self, below: Screen[Any]) -> None:
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        table = Table(title=f"Keys: {type(self.below).__name__.replace('Screen', '').lower() or 'app'}",
                      show_header=True, expand=True, box=None)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        for key, description in key_rows(self.below):
            table.add_row(safe_text(key), safe_text(description))
        with VerticalScroll():
            yield Static(table, markup=False)
            yield Static(Text("Escape or ? closes this help; q quits (while a run goes on it asks first: "
                              "the run is cancelled and can be resumed)",
                              style="dim"), markup=False)
