"""The run header: what the run is and how it differs from the defaults, how far it got, how fast,
and the engine's headline metrics (labelled, one unit each; the report has the rest)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from engines.core import STATUSES

from n2f_tui.figures import headline_line
from n2f_tui.render import STATUS_STYLE, safe_text
from n2f_tui.widgets.style import LIVE, Formats, pct, usage_line

BAR = 24


def bar(done: int, total: int, width: int = BAR) -> Text:
    filled = round(width * done / total) if total else width
    text = Text("▕")
    text.append("█" * filled, style="green")
    text.append("░" * (width - filled), style="dim")
    text.append("▏")
    return text


def progress_text(meta: dict[str, Any], counts: dict[str, int], total: int, status: str, live: Any = None,
                  metrics: dict[str, Any] | None = None, description: str = "defaults",
                  usage: Any = None, price: Any = None, formats: Formats = LIVE) -> Text:
    """Three lines: the run, the progress and tokens, the metrics (``live``: the runner's Progress, with
    its adaptive concurrency limit over ``-j``;
    ``description``: what differs from the defaults (``sessions.reports.describe``); ``usage``: a
    ``sessions.run.usage.Usage``, shown once there are tokens, with the cost given a ``price``)."""
    text = Text()
    text.append_text(safe_text(formats.run_label(meta), style="bold"))
    text.append_text(safe_text(f"  {meta.get('engine', '')} · {meta.get('model', '')} · "
                               f"{description}", style="dim"))
    text.append("  ")
    text.append(status, style="bold " + {"running": "cyan", "paused": "yellow", "finished": "green",
                                         "cancelled": "yellow", "incomplete": "yellow",
                                         "stopped (budget)": "yellow"}.get(status, ""))
    text.append("\n")
    done = total - counts.get("pending", 0)
    text.append_text(bar(done, total))
    text.append(f" {done}/{total}")
    if live is not None and status == "paused":  # no rate or ETA while nothing runs
        text.append(f"  paused  elapsed {formats.duration(live.elapsed)}")
    elif live is not None:
        text.append(f"  {formats.rate(live.rate)}  ETA {formats.duration(live.eta)}  "
                    f"elapsed {formats.duration(live.elapsed)}")
        limit = getattr(live, "limit", None)
        if limit is not None:  # below -j once the server pushed back
            text.append(f"  concurrency {limit.limit}/{limit.ceiling}",
                        style="yellow" if limit.limit < limit.ceiling else "dim")
    for key in STATUSES:
        if counts.get(key):
            text.append(f"  {key} {counts[key]}", style=STATUS_STYLE[key])
    if usage is not None and usage.total_tokens:
        text.append("  " + usage_line(usage.prompt_tokens, usage.completion_tokens, usage.cost(price)), style="dim")
    judged = sum(counts.get(k, 0) for k in ("correct", "wrong", "unparseable"))
    text.append("\n")
    text.append(f"accuracy {pct(counts.get('correct', 0) / judged if judged else None)}", style="bold")
    headline = headline_line(str(meta.get("engine", "")), metrics or {}, skip=("accuracy",))
    if headline:
        text.append_text(safe_text(f"  {headline}"))
    return text


class RunHeader(Static):
    DEFAULT_CSS = """
    RunHeader { height: 3; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)

    def update(self, content: Any = "", *, layout: bool = False) -> None:
        """New figures, four times a second while a run goes on: the header's height is fixed, so
        no layout pass (each one re-flowed the whole screen and cost the runner a third of its rate)."""
        super().update(content, layout=layout)
