"""One item's prompt, outputs, tool results, gold and engine views as rich renderables, folded or whole.

The inspector's detail and ``n2f show`` draw an item from the same parts. Folded (the
inspector until ``o``, ``n2f show`` without ``--full``), a long table shows its first rows,
a tree its first nodes and a text its first lines, each with a note of how much more there
is; a tool's result (a SPARQL result set, the sandbox's runs) is summarised with counts
under its own title instead of being shown as model output, and structured gold values
are summarised the same way. The engine's own panes (result sets, samples, grids) come
before the parsed structure, so they are not behind a long parse tree.

Model text only ever enters as ``safe_text`` (control characters shown, never markup).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from engines.core import View
from n2f_tui.render import MAX_CHARS, MAX_LINES, Fold, clipped, render_view, safe_text
from n2f_tui.toolview import tool_tables

INLINE_JSON = 100  # characters: a structured value this short is shown as is, a longer one summarised


@dataclass(frozen=True)
class Extent:
    """How much of an item to draw: ``fold`` None draws every part whole; ``cap`` still cuts runaway
    model text to a size a terminal pane lays out quickly (the inspector always does; ``--full`` does not)."""

    fold: Fold | None
    cap: bool = True
    marks: bool = True  # long tokens broken to the width with a mark (the inspector); False: whole (the CLI)


def heading(title: str) -> Text:
    return Text(f" {title} ", style="bold reverse")


def body(value: Any, extent: Extent, max_chars: int = MAX_CHARS) -> Text:
    """A text part at the extent asked for."""
    if extent.fold is not None:
        return clipped(value, max_chars, extent.fold.lines, extent.fold.hint)
    if extent.cap:
        return clipped(value, max_chars)
    return safe_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1))


def shape(value: Any) -> str:
    """A structured value in a few words: ``3 keys``, ``1,234 items``, or the value itself when short."""
    if isinstance(value, dict):
        return f"{len(value):,} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, list):
        return f"{len(value):,} item{'s' if len(value) != 1 else ''}"
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= INLINE_JSON else f"{len(text):,} characters"


def summary(value: Any) -> Text:
    """A JSON value as one line per key with counts (two levels deep), never the raw nesting."""
    if not isinstance(value, dict):
        return safe_text(shape(value))
    lines = []
    for key, inner in value.items():
        if isinstance(inner, dict) and inner:
            parts = ", ".join(f"{k} {shape(v)}" for k, v in inner.items())
            lines.append(f"{key}: {parts}")
        else:
            lines.append(f"{key}: {shape(inner)}")
    return safe_text("\n".join(lines))


def structured(value: Any, extent: Extent) -> Text:
    """A gold value or a tool result: text as text, short JSON as is, long JSON summarised when folded."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value[:1] in "{[" else None
        except ValueError:
            parsed = None
        if parsed is None or extent.fold is None:  # whole: as stored
            return body(value, extent, 8_000 if parsed is None else MAX_CHARS)
        value = parsed
    compact = json.dumps(value, ensure_ascii=False)
    if len(compact) <= INLINE_JSON:
        return safe_text(compact)
    if extent.fold is None:
        return body(value, extent)
    if isinstance(value, list):
        entries = [json.dumps(entry, ensure_ascii=False) for entry in value]
        if all(len(entry) <= 2 * INLINE_JSON for entry in entries):  # a list of short rows: one a line
            return clipped("\n".join(entries), MAX_CHARS, extent.fold.rows, extent.fold.hint)
    text = summary(value)
    text.append(f"\n({len(compact):,} characters of JSON; {extent.fold.hint})" if extent.fold.hint else "",
                style="italic dim")
    return text


MIN_INPUT = 8  # characters: a shorter input (a setting's word) may occur anywhere in a prompt's wording


def question_of(detail: Any) -> str:
    """The item's own question: the last user message of its first model step, from the line where the
    item's own input occurs last (worked examples before it stay in the full prompt), with the line
    before it when that is a heading (``Instructions:``, ``[FORMULA]``); the whole message when no
    input occurs in it (16 samples as a grid)."""
    messages: list[dict[str, Any]] = next((step["messages"] for step in detail.prompts if step.get("messages")), [])
    users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1]
    found = [content.rfind(v.strip()) for v in detail.item.inputs.values()
             if isinstance(v, str) and len(v.strip()) >= MIN_INPUT]
    at = max(found, default=-1)
    if at <= 0:
        return content
    start = content.rfind("\n", 0, at) + 1
    before = content.rfind("\n", 0, max(0, start - 1)) + 1
    heading_line = content[before:start].strip()
    if start and heading_line.endswith((":", "]")) and len(heading_line) <= 40:
        start = before
    return content[start:].strip()


QUESTION_LINES = 10  # folded, a question longer than this (16 samples as grids) shows its head


def question_parts(detail: Any, extent: Extent) -> list[RenderableType]:
    """The item's own question; folded, a long one is cut to its head (the full prompt comes last)."""
    question = question_of(detail)
    if not question:
        return []
    if extent.fold is not None:
        return [heading("Question"), clipped(question, MAX_CHARS, QUESTION_LINES,
                                             "the whole prompt is at the end; o shows all")]
    return [heading("Question"), body(question, extent)]


def prompt_parts(detail: Any, extent: Extent) -> list[RenderableType]:
    parts: list[RenderableType] = []
    for step in detail.prompts:
        for message in step.get("messages", []):
            parts.append(heading(f"Prompt: {step.get('step', '')} ({message.get('role', '')})"))
            parts.append(body(message.get("content", ""), extent, 40_000))
    return parts or [Text("(no prompt)", style="dim")]


def output_parts(outputs: list[str], steps: list[dict[str, Any]], extent: Extent) -> list[RenderableType]:
    """Model replies as ``Output``; a tool step's result under its tool's name, summarised when folded."""
    parts: list[RenderableType] = []
    models = sum(1 for i in range(len(outputs)) if not _is_tool(steps, i))
    for index, output in enumerate(outputs):
        step = steps[index] if index < len(steps) else {}
        if _is_tool(steps, index):
            parts.append(heading(f"Tool result: {step.get('tool') or 'tool'} (step {step.get('step', index + 1)})"))
            tables = tool_tables(_parsed(output), extent.marks) if extent.fold is None and extent.cap else None
            parts += tables if tables is not None else [structured(output, extent)]
        else:
            parts.append(heading(f"Output: {step.get('step', index + 1)}" if models > 1 else "Output (raw)"))
            parts.append(body(output, extent))
    return parts


def _parsed(output: str) -> Any:
    try:
        return json.loads(output) if output[:1] in "{[" else None
    except ValueError:
        return None


def _is_tool(steps: list[dict[str, Any]], index: int) -> bool:
    return index < len(steps) and steps[index].get("kind") == "tool"


def gold_parts(gold: dict[str, Any], extent: Extent) -> list[RenderableType]:
    parts: list[RenderableType] = [heading("Gold")]
    for key, value in gold.items():
        parts.append(safe_text(f"{key}:", style="bold"))
        parts.append(structured(value, extent))
    return parts


def bounded(view: View, extent: Extent) -> View:
    """A text view cut to what a pane lays out quickly (views may carry the whole raw output)."""
    if extent.cap and view.kind in ("text", "code") and isinstance(view.data, str):
        if len(view.data) > MAX_CHARS or view.data.count("\n") > MAX_LINES:
            lines = view.data[:MAX_CHARS].split("\n")[:MAX_LINES]
            return View(view.kind, view.title, "\n".join(lines) + "\n… (cut)")
    return view


def view_parts(views: list[View], extent: Extent) -> list[RenderableType]:
    """The engine's panes, then the parsed structure (trees); diffs are drawn beside the output."""
    trees = [v for v in views if v.kind == "tree"]
    others = [v for v in views if v.kind not in ("tree", "diff")]
    parts: list[RenderableType] = []
    if others:
        parts.append(heading("Engine views"))
        parts += [render_view(bounded(v, extent), extent.fold, extent.marks) for v in others]
    if trees:
        parts.append(heading("Parsed structure"))
        parts += [render_view(bounded(v, extent), extent.fold, extent.marks) for v in trees]
    return parts
