"""The new-run dialog: any registered engine, a settings form built from its dataclass.

Fields, defaults, choices and help come from the settings dataclass and its field
metadata; values are validated by ``engines.core.parse_settings`` (and the model spec,
limit and concurrency by the sessions layer), so the messages are the CLI's. The run
is prepared inside the dialog: a bad replay file or an unreachable server is reported
here, and the dialog closes only with a run ready to start.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Awaitable, Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from engines import engine_names, get_engine
from engines.core import EngineError, parse_settings, settings_fields
from n2f_tui.render import safe_text
from sessions.errors import N2FError
from sessions.models import parse_model_spec
from sessions.store import validate_name

Start = Callable[[dict[str, Any]], Awaitable[Any]]


def field_kind(cls: type, f: dataclasses.Field) -> str:
    tp = typing.get_type_hints(cls).get(f.name, str)
    if tp is bool:
        return "bool"
    if f.metadata.get("choices"):
        return "choice"
    return "text"


def default_of(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
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


class NewRunDialog(ModalScreen[Any]):
    DEFAULT_CSS = """
    NewRunDialog { align: center middle; background: $background 60%; }
    NewRunDialog > Vertical { width: 90; max-width: 98%; height: 90%; border: thick $accent;
                              background: $surface; padding: 0 1; }
    NewRunDialog .title { text-style: bold; }
    NewRunDialog #form { height: 1fr; }
    NewRunDialog .row { height: auto; }
    NewRunDialog .row > Label { width: 16; padding-top: 1; }
    NewRunDialog .row > Input, NewRunDialog .row > Select { width: 1fr; }
    NewRunDialog .help { color: $text-muted; padding-left: 16; height: auto; }
    NewRunDialog #error { color: $error; height: auto; }
    NewRunDialog .buttons { height: auto; align-horizontal: right; }
    NewRunDialog .buttons Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "start", "Start")]

    def __init__(self, start: Start, model: str = "sim", concurrency: int = 8) -> None:
        super().__init__()
        self.start = start
        self.default_model = model
        self.default_concurrency = concurrency
        self.engine_name = engine_names()[0]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New run (Ctrl+S starts, Escape cancels)", classes="title")
            with VerticalScroll(id="form"):
                with Horizontal(classes="row"):
                    yield Label("engine")
                    yield Select(engine_choices(), value=self.engine_name, allow_blank=False, id="engine")
                with Horizontal(classes="row"):
                    yield Label("model")
                    yield Input(self.default_model, id="model",
                                placeholder="sim[:error_rate=0.3,latency=0.01] | oracle | replay:FILE | openai:MODEL[@URL]")
                yield Static("sim, sim:error_rate=0.3,latency=0.01, oracle, replay:FILE, openai:MODEL[@URL]",
                             classes="help", markup=False)
                with Horizontal(classes="row"):
                    yield Label("limit")
                    yield Input("", id="limit", placeholder="all items", type="integer")
                with Horizontal(classes="row"):
                    yield Label("concurrency")
                    yield Input(str(self.default_concurrency), id="concurrency", type="integer")
                with Horizontal(classes="row"):
                    yield Label("seed")
                    yield Input("0", id="seed", type="integer")
                with Horizontal(classes="row"):
                    yield Label("name")
                    yield Input("", id="name", placeholder="optional")
                yield Vertical(id="settings")
            yield Static("", id="error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start", id="start", variant="primary")

    async def on_mount(self) -> None:
        await self.build_settings()

    async def build_settings(self) -> None:
        box = self.query_one("#settings", Vertical)
        await box.remove_children()
        try:
            engine = get_engine(self.engine_name)
        except Exception as exc:
            await box.mount(Static(safe_text(f"engine {self.engine_name}: {exc}"), classes="error", markup=False))
            return
        cls = engine.settings_type
        widgets = [Label(Text(f"{engine.name} settings", style="bold"))]
        for f in settings_fields(cls):
            kind = field_kind(cls, f)
            default = default_of(f)
            wid = f"set-{f.name}"
            if kind == "bool":
                control: Any = Switch(bool(default), id=wid)
            elif kind == "choice":
                control = Select([(str(c), str(c)) for c in f.metadata["choices"]], value=str(default),
                                 allow_blank=False, id=wid)
            else:
                control = Input("" if default is None else str(default), id=wid)
            widgets.append(Horizontal(Label(f.name), control, classes="row"))
            info = f.metadata.get("help", "")
            bounds = [f"min {f.metadata['min']}" if "min" in f.metadata else "",
                      f"max {f.metadata['max']}" if "max" in f.metadata else ""]
            info = "; ".join(p for p in [info, ", ".join(b for b in bounds if b)] if p)
            if info:
                widgets.append(Static(safe_text(info), classes="help", markup=False))
        await box.mount_all(widgets)

    @on(Select.Changed, "#engine")
    async def engine_changed(self, event: Select.Changed) -> None:
        if event.value != self.engine_name and isinstance(event.value, str):
            self.engine_name = event.value
            await self.build_settings()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self.run_worker(self.action_start(), exclusive=True, group="new-run")

    def collect(self) -> dict[str, Any]:
        """The form as prepare_run arguments; raises EngineError/N2FError with a clear message."""
        engine = get_engine(self.engine_name)
        cls = engine.settings_type
        pairs: dict[str, str] = {}
        for f in settings_fields(cls):
            control = self.query_one(f"#set-{f.name}")
            default = default_of(f)
            if isinstance(control, Switch):
                if control.value != bool(default):
                    pairs[f.name] = "true" if control.value else "false"
            elif isinstance(control, Select):
                if control.value != str(default):
                    pairs[f.name] = str(control.value)
            else:
                value = control.value.strip()
                if value != ("" if default is None else str(default)):
                    pairs[f.name] = value
        parse_settings(cls, pairs)  # the same checks and messages as `n2f run -s`
        model = self.query_one("#model", Input).value.strip() or "sim"
        parse_model_spec(model)
        limit_text = self.query_one("#limit", Input).value.strip()
        limit = int(limit_text) if limit_text else None
        if limit is not None and limit < 1:
            raise ValueError("limit must be at least 1 (or empty for all items)")
        concurrency_text = self.query_one("#concurrency", Input).value.strip() or "8"
        concurrency = int(concurrency_text)
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
        self.show_error("starting…")
        try:
            prepared = await self.start(request)
        except (EngineError, N2FError, ValueError) as exc:
            self.show_error(str(exc))
            return
        self.dismiss(prepared)
