"""The tag dialog: every code of the taxonomy on a key, several toggled before it closes, typing filters.

Labelling is most of a study's work, so the dialog costs one key per code: ``1``-``9``
and ``0`` for the first ten codes, then ``A``-``Z`` (an engine can declare its own key
for a code, ``TagType.key``, which takes precedence). A key toggles its code whether
or not the code is shown; lower-case letters and ``_`` type into the filter instead
(code or label containing the text; Backspace edits it), and
↑/↓ with Space toggle the highlighted code. Enter closes with the codes ticked; Escape
closes without a change. The key of each code stays the same while filtering, so the
keys learnt on the first item hold for the whole study.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from n2f_tui.render import safe_text
from n2f_tui.screens.dialogs import DIALOG_CSS

DEFAULT_KEYS = "1234567890" + string.ascii_uppercase


@dataclass
class Code:
    code: str
    label: str
    description: str = ""
    key: str = ""  # a key the engine declares for the code


def assign_keys(codes: Sequence[Code]) -> dict[str, str]:
    """Key -> code: each code's declared key, the others the first free of ``DEFAULT_KEYS`` in taxonomy order."""
    keys = {c.key: c.code for c in codes if c.key}
    free = (k for k in DEFAULT_KEYS if k not in keys)
    for c in codes:
        if not c.key:
            key = next(free, None)
            if key is not None:
                keys[key] = c.code
    return keys


class CodeList(OptionList, can_focus=False):
    """The codes, never focused: every key comes to the dialog."""


class TagDialog(ModalScreen[frozenset[str] | None]):
    DEFAULT_CSS = DIALOG_CSS.format(name="TagDialog") + """
    TagDialog > Vertical { width: 76; }
    TagDialog OptionList { height: auto; max-height: 14; }
    TagDialog #tag-filter { height: 1; color: $text-muted; }
    TagDialog #tag-help { height: auto; color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("enter", "apply", "Apply")]

    def __init__(self, title: str, codes: Sequence[Code], chosen: set[str]) -> None:
        super().__init__()
        self.title_text = title
        self.codes = list(codes)
        self.keys = assign_keys(self.codes)
        self.key_of = {code: key for key, code in self.keys.items()}
        self.chosen = set(chosen)
        self.filter = ""
        self.shown: list[Code] = list(self.codes)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(safe_text(self.title_text), classes="title", markup=False)
            yield Static("", id="tag-filter", markup=False)
            yield CodeList(id="tag-codes")
            yield Static("", id="tag-help", markup=False)

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self, keep: int | None = None) -> None:
        needle = self.filter
        self.shown = [c for c in self.codes if needle in c.code.lower() or needle in c.label.lower()]
        options = self.query_one(OptionList)
        highlighted = options.highlighted if keep is None else keep
        options.clear_options()
        options.add_options([Option(self.prompt(c), id=c.code) for c in self.shown])
        if self.shown:
            options.highlighted = min(highlighted or 0, len(self.shown) - 1)
        self.query_one("#tag-filter", Static).update(
            Text(f"filter: {needle}▏" if needle else "type to filter", style="italic"))
        self.show_help()

    def prompt(self, c: Code) -> Text:
        text = Text(f"{self.key_of.get(c.code, ' ')} ", style="bold")
        text.append("[x] " if c.code in self.chosen else "[ ] ", style="bold green" if c.code in self.chosen else "")
        text.append_text(safe_text(f"{c.label} ({c.code})"))
        return text

    def show_help(self) -> None:
        options = self.query_one(OptionList)
        current = self.shown[options.highlighted] if self.shown and options.highlighted is not None else None
        text = Text(current.description[:150] + "\n" if current and current.description else "", style="dim")
        text.append(f"{len(self.chosen)} ticked · key toggles · Space toggles ↑↓ · Enter applies · Esc cancels")
        self.query_one("#tag-help", Static).update(text)

    def toggle(self, code: str) -> None:
        self.chosen ^= {code}
        self.redraw()

    def on_key(self, event: events.Key) -> None:
        character = event.character or ""
        options = self.query_one(OptionList)
        if event.key in ("up", "down") and self.shown:
            step = -1 if event.key == "up" else 1
            options.highlighted = ((options.highlighted or 0) + step) % len(self.shown)
            self.show_help()
        elif event.key == "space" and self.shown and options.highlighted is not None:
            self.toggle(self.shown[options.highlighted].code)
        elif event.key == "backspace":
            self.filter = self.filter[:-1]
            self.redraw(keep=0)
        elif character in self.keys:
            self.toggle(self.keys[character])
        elif character and (character.islower() or character in "_-"):
            self.filter += character
            self.redraw(keep=0)
        else:
            return
        event.stop()
        event.prevent_default()

    def action_apply(self) -> None:
        self.dismiss(frozenset(self.chosen))
