"""Modal dialogs: confirm, choose one of many, type a line of text; and the choice of a run to compare with."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from engines.core import EngineError
from n2f_tui.render import safe_text
from n2f_tui.screens.base import AppScreen
from n2f_tui.widgets.style import run_label
from sessions.reports.describe import describe_run
from sessions.errors import N2FError

DIALOG_CSS = """
{name} {{ align: center middle; background: $background 60%; }}
{name} > Vertical {{
    width: 72; max-width: 95%; height: auto; max-height: 90%;
    border: thick $accent; background: $surface; padding: 1 2;
}}
{name} .title {{ text-style: bold; margin-bottom: 1; }}
{name} .buttons {{ height: auto; margin-top: 1; align-horizontal: right; }}
{name} .buttons Button {{ margin-left: 2; }}
{name} .error {{ color: $error; height: auto; }}
"""


class ConfirmDialog(ModalScreen[bool]):
    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")
    BINDINGS = [Binding("escape,n", "dismiss(False)", "No"), Binding("y", "dismiss(True)", "Yes")]

    def __init__(self, message: str, yes: str = "Yes") -> None:
        super().__init__()
        self.message = message
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe_text(self.message), markup=False)
            with Horizontal(classes="buttons"):
                yield Button("No (n)", id="no")
                yield Button(f"{self.yes} (y)", id="yes", variant="error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class ChoiceDialog(ModalScreen[str | None]):
    """Pick one of ``choices`` ((key, label[, description]) tuples); Escape cancels."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ChoiceDialog") + """
    ChoiceDialog OptionList { height: auto; max-height: 20; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, choices: Sequence[tuple[str, ...]], current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = list(choices)
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for choice in self.choices:
            key, label = choice[0], choice[1]
            prompt = safe_text(label)
            if len(choice) > 2 and choice[2]:
                prompt.append("\n")
                prompt.append_text(safe_text(choice[2], style="dim"))
            options.append(Option(prompt, id=key))
        with Vertical():
            yield Label(safe_text(self.title_text), classes="title", markup=False)
            yield OptionList(*options)

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        keys = [c[0] for c in self.choices]
        if self.current in keys:
            option_list.highlighted = keys.index(self.current)
        elif keys:
            option_list.highlighted = 0
        option_list.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


class TextDialog(ModalScreen[Any]):
    """One line of text (a note, a search, a name); Enter accepts, Escape cancels.

    ``check`` (optional) turns the text into the dialog's result, or raises with a clear
    message: the message is shown and the dialog stays open with the text as typed.
    """

    DEFAULT_CSS = DIALOG_CSS.format(name="TextDialog")
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "", allow_empty: bool = False,
                 check: Callable[[str], Any] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder
        self.allow_empty = allow_empty
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(safe_text(self.title_text), classes="title", markup=False)
            yield Input(self.value, placeholder=self.placeholder)
            yield Static("", classes="error", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip() and not self.allow_empty:
            self.query_one(".error", Static).update(Text("type something, or Escape to cancel"))
            return
        if self.check is None:
            self.dismiss(event.value)
            return
        try:
            result = self.check(event.value)
        except (N2FError, EngineError, ValueError) as exc:
            self.query_one(".error", Static).update(safe_text(str(exc)))
            return
        self.dismiss(result)


def choose_run_to_compare(screen: AppScreen, meta: Mapping[str, Any], metas: Iterable[Mapping[str, Any]],
                          title: str) -> None:
    """Ask which other run of the same engine (in the order of ``metas``) to compare the run of ``meta`` with,
    then open the comparison."""
    others = [m for m in metas if m["id"] != meta["id"] and m.get("engine") == meta.get("engine")]
    if not others:
        screen.notify("no other run of the same engine to compare with", severity="warning")
        return
    choices = [(m["id"], f"{run_label(m)}  {m.get('model')}  {describe_run(m).text}") for m in others]

    def chosen(other: str | None) -> None:
        if other:
            screen.n2f.open_compare(meta["id"], other)

    screen.app.push_screen(ChoiceDialog(title, choices), chosen)
