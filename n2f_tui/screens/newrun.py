"""The new-run dialog: any registered engine, every one of its settings, in one scrolling form.

Fields, defaults, choices and help come from the settings dataclass and its field
metadata; values are validated by ``engines.core.parse_settings`` (and the model spec,
limit and concurrency by the sessions layer), so the messages are the CLI's. The run
is prepared inside the dialog: a bad replay file or an unreachable server is reported
here, and the dialog closes only with a run ready to start.

The form opens on the engine and values last used (``sessions.store.form_memory``), with the
focus on its first field; the focus moves only through fields the form shows, and
moving it scrolls the field into view, so nothing can be typed into an unseen field.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static, Switch

from engines import engine_names, get_engine
from engines.core import EngineError, parse_settings, settings_fields
from n2f_tui.render import safe_text
from n2f_tui.workers import guarded_work
from sessions.errors import N2FError
from sessions.store.form_memory import FormMemory, load_form_memory, save_form_memory
from sessions.backends.models import parse_model_spec
from sessions.store.index import validate_name

Start = Callable[[dict[str, Any]], Awaitable[Any]]
MODELS = "sim, sim:error_rate=0.3,latency=0.01, oracle, local (Gemma 3 270M on the CPU), replay:FILE, openai:MODEL[@URL]"
REMEMBERED = ("model", "limit", "concurrency", "seed")


@dataclass(frozen=True)
class FormField:
    """One row of the form: what it edits, how, and the help shown beside it."""

    key: str  # the widget id
    label: str
    kind: str  # text | integer | bool | choice
    default: str
    help: str = ""
    choices: tuple[str, ...] = ()
    placeholder: str = ""


def field_kind(cls: type, f: dataclasses.Field[Any]) -> str:
    tp = typing.get_type_hints(cls).get(f.name, str)
    if tp is bool:
        return "bool"
    if f.metadata.get("choices"):
        return "choice"
    return "text"


def default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return ""


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def setting_fields(cls: type) -> list[FormField]:
    """Every settable field of an engine's settings dataclass, with its help and bounds."""
    rows = []
    for f in settings_fields(cls):
        bounds = [f"min {f.metadata['min']}" if "min" in f.metadata else "",
                  f"max {f.metadata['max']}" if "max" in f.metadata else ""]
        info = "; ".join(p for p in [f.metadata.get("help", ""), ", ".join(b for b in bounds if b)] if p)
        rows.append(FormField(f"set-{f.name}", f.name, field_kind(cls, f), as_text(default_of(f)), info,
                              tuple(str(c) for c in f.metadata.get("choices") or ())))
    return rows


def run_fields(model: str, concurrency: int) -> list[FormField]:
    return [
        FormField("model", "model", "text", model, MODELS, placeholder="sim | oracle | replay:FILE | openai:MODEL"),
        FormField("limit", "limit", "integer", "", "only the first N items; empty runs them all",
                  placeholder="all items"),
        FormField("concurrency", "concurrency", "integer", str(concurrency), "items in flight at once (at least 1)"),
        FormField("seed", "seed", "integer", "0", "seed for item construction and the simulator"),
        FormField("name", "name", "text", "", "a name to refer to the run by: letters, digits, . _ -",
                  placeholder="optional"),
    ]


def control_for(f: FormField, value: str) -> Widget:
    if f.kind == "bool":
        return Switch(value == "true", id=f.key, classes="control")  # Switch has no compact style
    if f.kind == "choice":
        choices = list(f.choices) if value in f.choices else [*f.choices, value]
        return Select([(c, c) for c in choices], value=value, allow_blank=False, id=f.key, classes="control",
                      compact=True)
    return Input(value, id=f.key, placeholder=f.placeholder, classes="control", compact=True,
                 type="integer" if f.kind == "integer" else "text")


def field_row(f: FormField, value: str) -> Horizontal:
    return Horizontal(Label(f.label, classes="name"), control_for(f, value),
                      Static(safe_text(f.help), classes="help", markup=False), classes="row")


def control_text(control: Widget) -> str:
    if isinstance(control, Switch):
        return as_text(control.value)
    if isinstance(control, (Select, Input)):
        return str(control.value).strip()
    return ""


def engine_choices() -> list[tuple[str, str]]:
    """Every registered engine, with its title (an engine that fails to load is still listed)."""
    choices = []
    for name in engine_names():
        try:
            title = get_engine(name).title
        except Exception as exc:  # a broken engine must not hide the others
            title = f"(cannot load: {exc})"
        choices.append((f"{name}: {title}", name))
    return choices


class FormScroll(VerticalScroll, can_focus=False):
    """The form's scrolling body: the fields take the focus, never the container."""


class NewRunDialog(ModalScreen[Any]):
    DEFAULT_CSS = """
    NewRunDialog { align: center middle; background: $background 60%; }
    NewRunDialog > Vertical { width: 96%; max-width: 140; height: 96%; border: thick $accent;
                              background: $surface; padding: 0 1; }
    NewRunDialog .title { text-style: bold; }
    NewRunDialog #form { height: 1fr; }
    NewRunDialog #settings { height: auto; }
    NewRunDialog .section { text-style: bold; margin-top: 1; }
    NewRunDialog .row { height: auto; }
    NewRunDialog.-narrow .row { margin-top: 1; }
    NewRunDialog .row > .name { width: 16; }
    NewRunDialog .row > .control { width: 44; }
    NewRunDialog .row > Switch.control { width: auto; }
    NewRunDialog .row > .help { width: 1fr; padding: 0 0 0 2; color: $text-muted; }
    NewRunDialog.-narrow .row { layout: grid; grid-size: 2; grid-columns: 14 1fr; grid-rows: auto; }
    NewRunDialog.-narrow .row > .name { width: 14; }
    NewRunDialog.-narrow .row > .control { width: 1fr; }
    NewRunDialog.-narrow .row > Switch.control { width: auto; }
    NewRunDialog.-narrow .row > .help { column-span: 2; width: 1fr; padding: 0 0 0 14; }
    NewRunDialog #error { color: $error; height: auto; }
    NewRunDialog .buttons { height: auto; align-horizontal: right; }
    NewRunDialog .buttons Button { margin-left: 2; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    AUTO_FOCUS = "#engine"
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "start", "Start")]

    def __init__(self, start: Start, model: str = "sim", concurrency: int = 8) -> None:
        super().__init__()
        self.start = start
        self.memory: FormMemory = load_form_memory()
        names = engine_names()
        self.engine_name = self.memory.engine if self.memory.engine in names else names[0]
        self.run_rows = run_fields(model, concurrency)
        self.setting_rows: list[FormField] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New run (Ctrl+S starts, Escape cancels; Tab moves between fields)", classes="title")
            with FormScroll(id="form"):
                with Horizontal(classes="row"):
                    yield Label("engine", classes="name")
                    yield Select(engine_choices(), value=self.engine_name, allow_blank=False, id="engine",
                                 classes="control", compact=True)
                    yield Static("the benchmark; its own settings are listed after the run's", classes="help")
                for f in self.run_rows:
                    yield field_row(f, self.memory.fields.get(f.key, f.default) if f.key in REMEMBERED else f.default)
                yield Vertical(id="settings")
            yield Static("", id="error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel", compact=True)
                yield Button("Start", id="start", variant="primary", compact=True)

    async def on_mount(self) -> None:
        await self.build_settings()

    async def build_settings(self) -> None:
        """The chosen engine's settings, each at its remembered value (else its default)."""
        box = self.query_one("#settings", Vertical)
        await box.remove_children()
        try:
            cls = get_engine(self.engine_name).settings_type
        except Exception as exc:
            self.setting_rows = []
            await box.mount(Static(safe_text(f"engine {self.engine_name}: {exc}"), classes="error", markup=False))
            return
        self.setting_rows = setting_fields(cls)
        remembered = self.memory.settings.get(self.engine_name, {})
        widgets: list[Widget] = [Label(Text(f"{self.engine_name} settings ({len(self.setting_rows)})"),
                                       classes="section")]
        widgets += [field_row(f, remembered.get(f.label, f.default)) for f in self.setting_rows]
        await box.mount_all(widgets)

    def remember(self) -> None:
        """Keep what the form holds now, for the next opening (and the next engine switch)."""
        for key in REMEMBERED:
            self.memory.fields[key] = control_text(self.query_one(f"#{key}", Widget))
        changed = {f.label: text for f, text in self.setting_texts() if text != f.default}
        self.memory.settings[self.engine_name] = changed
        self.memory.engine = self.engine_name

    def setting_texts(self) -> list[tuple[FormField, str]]:
        return [(f, control_text(self.query_one(f"#{f.key}", Widget))) for f in self.setting_rows]

    @on(Select.Changed, "#engine")
    async def engine_changed(self, event: Select.Changed) -> None:
        if event.value != self.engine_name and isinstance(event.value, str):
            self.remember()
            self.engine_name = event.value
            self.show_error("")  # a message about the other engine's settings no longer applies
            await self.build_settings()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.action_cancel()
        else:
            self.start_run()

    @guarded_work(exclusive=True, group="new-run")
    async def start_run(self) -> None:
        await self.action_start()

    def action_cancel(self) -> None:
        self.remember()
        save_form_memory(self.memory)
        self.dismiss(None)

    def collect(self) -> dict[str, Any]:
        """The form as prepare_run arguments; raises EngineError/N2FError with a clear message."""
        cls = get_engine(self.engine_name).settings_type
        pairs = {f.label: text for f, text in self.setting_texts() if text != f.default}
        parse_settings(cls, pairs)  # the same checks and messages as `n2f run -s`
        model = self.query_one("#model", Input).value.strip() or "sim"
        parse_model_spec(model)
        limit_text = self.query_one("#limit", Input).value.strip()
        limit = int(limit_text) if limit_text else None
        if limit is not None and limit < 1:
            raise ValueError("limit must be at least 1 (or empty for all items)")
        concurrency = int(self.query_one("#concurrency", Input).value.strip() or "8")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        seed = int(self.query_one("#seed", Input).value.strip() or "0")
        name = self.query_one("#name", Input).value.strip()
        if name:
            validate_name(name)
        return {"engine": self.engine_name, "settings": pairs, "model": model, "limit": limit,
                "concurrency": concurrency, "seed": seed, "name": name}

    def show_error(self, message: str) -> None:
        self.query_one("#error", Static).update(safe_text(message))

    async def action_start(self) -> None:
        try:
            request = self.collect()
        except (EngineError, N2FError, ValueError) as exc:
            self.show_error(str(exc))
            return
        self.remember()
        save_form_memory(self.memory)
        self.show_error("starting…")
        try:
            prepared = await self.start(request)
        except (EngineError, N2FError, ValueError) as exc:
            self.show_error(str(exc))
            return
        self.dismiss(prepared)
