"""Debug a prompt live: edit the item's template, re-run that one item, compare attempts.

Nothing runs while typing: Ctrl+S re-runs the item with the edited template
(``sessions.run.attempts.rerun_item``) and shows the new attempt beside the stored result;
every attempt is kept (``list_attempts``). While the model answers, its reply streams
into the attempt pane (a timer polls the ``LiveReply`` the backend feeds, ten times a
second) with its token count and tokens/s. Ctrl+N applies the edited template to the
whole run as a new run (``fork_with_templates``), started and opened at once.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, OptionList, Select, Static, TextArea
from textual.widgets.option_list import Option

from engines.core import EngineError, Tag
from n2f_tui.itemview import heading, output_parts
from n2f_tui.render import STATUS_STYLE, clipped, safe_text
from n2f_tui.screens.base import AppScreen
from n2f_tui.screens.dialogs import TextDialog
from n2f_tui.state import RunState
from n2f_tui.widgets.detail import FOLDED, live_output
from n2f_tui.widgets.pane import Pane
from n2f_tui.widgets.style import GLYPH, chips, number
from n2f_tui.workers import guarded_work
from sessions.errors import N2FError


def outcome(title: str, status: str, scores: dict[str, Any], tags: list[Any], outputs: list[str],
            steps: list[dict[str, Any]], error: str = "") -> Group:
    """One attempt (or the stored result): status, scores, tags, outputs (a tool step's result summarised)."""
    parts: list[Any] = [heading(title)]
    line = Text()
    line.append(f"{GLYPH.get(status, '?')} {status}", style=f"bold {STATUS_STYLE.get(status, '')}")
    if scores:
        line.append_text(safe_text("  " + "  ".join(f"{k}={number(v)}" for k, v in scores.items())))
    parts.append(line)
    tag_objs = [t if isinstance(t, Tag) else Tag.from_json(t) for t in tags or []]
    if tag_objs:
        parts.append(chips(tag_objs))
        for tag in tag_objs:
            if tag.evidence:
                parts.append(clipped(f"  {tag.code}: {tag.evidence}", 400, 3))
    if error:
        parts.append(safe_text(f"error: {error}", style="yellow"))
    parts += output_parts(list(outputs or []), steps, FOLDED)
    if not outputs and not error:
        parts.append(Text("(no output)", style="dim"))
    return Group(*parts)


STREAM_TICK = 0.1  # seconds between redraws of a streaming reply

PROMPT_BLIND = {  # models whose reply does not depend on the prompt, and what it depends on instead
    "sim": "the simulator answers from the gold, with errors drawn at random from the seed, item and attempt",
    "oracle": "the oracle answers with the gold",
    "replay": "replay answers with the recorded outputs",
}


def editor_head(item_id: str, template: str, model: str) -> Text:
    """What is edited, whether the run's model reads the prompt at all, and what Ctrl+S and Ctrl+N do.

    With a model that ignores the prompt, Ctrl+S (a new attempt: the simulator draws again)
    and Ctrl+N (a new run with the original attempts: the same draws as the run) can
    disagree with each other although neither saw the edit; the head says so.
    """
    kind = model.partition(":")[0]
    head = Text()
    head.append("Prompt editor  ", style="bold")
    head.append_text(safe_text(f"item {item_id} · template {template!r} · model {model}"))
    blind = PROMPT_BLIND.get(kind)
    if blind:
        head.append_text(safe_text(f"\n{model} does not read the prompt ({blind}): an edit cannot change "
                                   "any outcome; use an openai: or local model to test a prompt.", style="bold yellow"))
    again = {"sim": "a new random draw, so the reply may change though the prompt is not read",
             "oracle": "the same gold answer", "replay": "the same recorded output"}.get(kind, "a new reply, never "
                                                                                              "from the cache")
    same = {"sim": "the run's own draws, so each item gets its original reply"}.get(kind, "")
    head.append_text(safe_text(f"\nCtrl+S saves and re-runs this item as a new attempt ({again}) · Ctrl+N runs "
                               f"the whole run with this template as a new run{f' ({same})' if same else ''} · "
                               "Escape goes back (the edit is kept)", style="dim"))
    return head


class EditorScreen(AppScreen):
    DEFAULT_CSS = """
    EditorScreen #ed-head { height: auto; padding: 0 1; background: $panel; }
    EditorScreen #ed-body { height: 1fr; }
    EditorScreen #ed-left { width: 1fr; }
    EditorScreen #ed-left Select { width: 1fr; }
    EditorScreen TextArea { height: 1fr; }
    EditorScreen #ed-right { width: 1fr; }
    EditorScreen #ed-sides { height: 1fr; }
    EditorScreen #ed-sides > Pane { width: 1fr; height: 1fr; padding: 0 0 0 1; }
    EditorScreen #ed-original { border-right: vkey $panel-lighten-2; }
    EditorScreen #attempts { height: 7; border: round $panel-lighten-2; }
    EditorScreen.-narrow #ed-body { layout: vertical; }
    EditorScreen.-narrow #ed-left { height: 2fr; width: 1fr; }
    EditorScreen.-narrow #ed-right { height: 3fr; width: 1fr; }
    EditorScreen.-narrow #attempts { height: 5; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [
        Binding("ctrl+s", "rerun", "Save & re-run item", priority=True),
        Binding("ctrl+n", "fork", "New run with template", priority=True),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, state: RunState, index: int) -> None:
        super().__init__()
        self.state = state
        self.index = index
        self.item = state.items[index]
        self.templates: dict[str, str] = state.drafts
        record = state.record(index) or {}
        steps = record.get("steps") or []
        name = next((s.get("template") for s in steps if s.get("template") in self.templates), None)
        self.template_name = name or next(iter(self.templates), "")
        self.attempts: list[dict[str, Any]] = []
        self.selected_attempt: dict[str, Any] | None = None
        self.live: Any = None  # the LiveReply of a re-run in progress
        self._live_drawn: tuple[int, int] | None = None  # the re-run's reply last drawn: (tokens, step)

    def compose(self) -> ComposeResult:
        yield Static("", id="ed-head", markup=False)
        with Horizontal(id="ed-body"):
            with Vertical(id="ed-left"):
                if len(self.templates) > 1:
                    yield Select([(n, n) for n in self.templates], value=self.template_name, allow_blank=False,
                                 id="ed-template")
                yield TextArea(self.templates.get(self.template_name, ""), soft_wrap=True, id="ed-text",
                               show_line_numbers=False)
            with Vertical(id="ed-right"):
                with Horizontal(id="ed-sides"):
                    yield Pane(id="ed-original")
                    yield Pane(id="ed-attempt")
                yield OptionList(id="attempts")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#ed-head", Static).update(editor_head(self.item.id, self.template_name,
                                                              str(self.state.store.meta.get("model", ""))))
        record = self.state.record(self.index) or {}
        self.query_one("#ed-original", Pane).update(outcome(
            "Stored result", self.state.status(self.index), record.get("scores") or {}, record.get("tags") or [],
            record.get("outputs") or [], self.steps(record.get("outputs") or []), record.get("error", "")))
        self.query_one("#ed-attempt", Pane).update(Text("no attempt yet: edit the template, then Ctrl+S",
                                                          style="italic dim"))
        self.query_one(OptionList).border_title = "attempts"
        self.load_attempts()
        self.query_one(TextArea).focus()
        self.set_interval(STREAM_TICK, self.draw_live)

    def draw_live(self) -> None:
        live = self.live
        if live is None or live.done or (live.tokens, live.step) == self._live_drawn:
            return
        self._live_drawn = (live.tokens, live.step)
        self.query_one("#ed-attempt", Pane).update(live_output(live), home=False)

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and event.value != self.template_name:
            self.save_draft()
            self.template_name = event.value
            self.query_one(TextArea).load_text(self.templates.get(self.template_name, ""))

    def save_draft(self) -> None:
        self.templates[self.template_name] = self.query_one(TextArea).text

    # --------------------------------------------------------------- attempts

    def load_attempts(self) -> None:
        from sessions.run.attempts import list_attempts

        try:
            self.attempts = list(list_attempts(self.state.store, self.item.id))
        except (N2FError, EngineError, OSError) as exc:
            self.notify(f"attempts: {exc}", severity="error", markup=False)
            self.attempts = []
        options = self.query_one(OptionList)
        options.clear_options()
        for number_, attempt in enumerate(self.attempts, 1):
            status = str(attempt.get("status", "?"))
            label = Text()
            label.append(f"#{number_} ", style="bold")
            label.append(f"{GLYPH.get(status, '?')} {status}", style=STATUS_STYLE.get(status, ""))
            label.append_text(safe_text(f"  {self.n2f.formats.date(str(attempt.get('time', '')))}", style="dim"))
            options.add_option(Option(label, id=str(attempt.get("attempt_id", number_))))
        if self.attempts:
            self.show_attempt(self.attempts[-1])
            options.highlighted = len(self.attempts) - 1

    def show_attempt(self, attempt: dict[str, Any]) -> None:
        self.selected_attempt = attempt
        number_ = self.attempts.index(attempt) + 1 if attempt in self.attempts else len(self.attempts)
        self.query_one("#ed-attempt", Pane).update(outcome(
            f"Attempt #{number_}", str(attempt.get("status", "?")), attempt.get("scores") or {},
            attempt.get("tags") or [], attempt.get("outputs") or [], self.steps(attempt.get("outputs") or []),
            attempt.get("error") or ""))

    def steps(self, outputs: list[str]) -> list[dict[str, Any]]:
        """Which outputs are model replies and which tool results (the kinds do not depend on the template)."""
        from sessions.api import item_steps

        return item_steps(self.state.store, self.item, outputs)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index is not None and 0 <= event.option_index < len(self.attempts):
            self.show_attempt(self.attempts[event.option_index])

    # ---------------------------------------------------------------- actions

    def action_rerun(self) -> None:
        self.save_draft()
        self.query_one("#ed-attempt", Pane).update(Text("re-running this item…", style="italic"))
        self.rerun(dict(self.templates))

    @guarded_work(exclusive=True, group="rerun")
    async def rerun(self, templates: dict[str, str]) -> None:
        from sessions.run.attempts import rerun_item
        from sessions.backends.streaming import LiveReply

        self.live, self._live_drawn = LiveReply(), None
        try:
            attempt = await rerun_item(self.state.store, self.index, templates, live=self.live)
        except (N2FError, EngineError, ValueError) as exc:
            self.query_one("#ed-attempt", Pane).update(safe_text(f"could not re-run: {exc}", style="red"))
            return
        finally:
            self.live.done = True
        self.load_attempts()
        match = next((a for a in self.attempts if a.get("attempt_id") == attempt.get("attempt_id")), None)
        self.show_attempt(match or attempt)
        self.notify(f"attempt: {attempt.get('status', '?')}", timeout=2, markup=False)

    def action_fork(self) -> None:
        self.save_draft()
        templates = dict(self.templates)

        def create(name: str) -> str:  # a bad or taken name keeps the dialog open with what was typed
            from sessions.run.attempts import fork_with_templates

            new = fork_with_templates(self.state.store, templates, name=name.strip())
            new.close()
            return new.id

        self.app.push_screen(TextDialog("Run the whole run with this template as a new run: name (optional)",
                                        allow_empty=True, check=create), self.start_fork)

    @guarded_work(exclusive=True, group="fork")
    async def start_fork(self, new_id: str | None) -> None:
        if new_id is None:
            return
        job = await self.n2f.resume_run(new_id, open_screen=False)
        if job is not None:
            self.app.pop_screen()
            self.n2f.open_run(new_id)

    def action_back(self) -> None:
        self.save_draft()
        self.app.pop_screen()
