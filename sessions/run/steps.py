"""One item through its steps, and the result record it leaves.

The engine names each next step from the outputs so far; model steps go to the backend,
tool steps to ``sessions.tools.dispatch`` (the backend never sees them). The runner and the prompt
editor's re-runs both walk an item this way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from engines.contract import Engine
from engines.core import Item, Status, Step, Verdict
from sessions.backends.base import Backend, BackendError, CallRequest, Completion
from sessions.store.files import now_iso
from sessions.redact import redact
from sessions.backends.streaming import LiveReply
from sessions.tools.dispatch import run_tool


def record_for(item: Item, index: int, verdict: Verdict, outputs: Sequence[str], steps: list[dict[str, Any]],
               attempt: int) -> dict[str, Any]:
    """The stored result; a ``scorer_error`` verdict keeps the exception as ``error``."""
    return {
        "id": item.id,
        "index": index,
        "status": verdict.status,
        "scores": verdict.scores,
        "tags": [t.to_json() for t in verdict.tags],
        "outputs": list(outputs),
        "steps": steps,
        **({"error": redact(verdict.error)} if verdict.error else {}),
        "attempt": attempt,
        "time": now_iso(),
    }


def error_record(item: Item, index: int, message: str, outputs: Sequence[str], steps: list[dict[str, Any]], attempt: int,
                 status: Status = "error") -> dict[str, Any]:
    """The stored result of an item that was not judged: an infrastructure ``error`` (resume runs it again)
    or a ``scorer_error`` of the engine choosing its next step. The message is stored redacted."""
    return {
        "id": item.id,
        "index": index,
        "status": status,
        "scores": {},
        "tags": [],
        "outputs": list(outputs),
        "steps": steps,
        "error": redact(message),
        "attempt": attempt,
        "time": now_iso(),
    }


@dataclass
class StepTrace:
    """What one pass of an item through its steps produced."""

    outputs: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)  # per step: name, template, usage, latency, cached[, finish_reason,
    # tool (a tool step), served_model, system_fingerprint]
    prompts: list[dict[str, Any]] = field(default_factory=list)  # per step: {"step", "messages"}
    error: str = ""  # an infrastructure failure (BackendError) that stopped the item
    scorer_error: str = ""  # the engine failed naming the next step (the item is its own scorer_error)

    def sent_prompts(self) -> list[str | None]:
        """Each step's prompt as it was sent, None for a tool step (``Engine.score``'s ``prompts``:
        the scorer compares a reply with these instead of building every prompt again)."""
        return [None if "tool" in step else "\n".join(m["content"] for m in sent["messages"])
                for step, sent in zip(self.steps, self.prompts)]


async def run_steps(
    engine: Engine[Any], item: Item, settings: Any, backend: Backend, templates: Mapping[str, str] | None, attempt: int,
    live: LiveReply | None = None,
) -> StepTrace:
    """Ask the engine for steps until the item is done: model steps go to the backend, tool steps to
    ``sessions.tools.dispatch`` (the backend never sees them); either output is appended alike.

    With ``live``, model steps stream: every text delta goes to it as it arrives."""
    trace = StepTrace()
    try:
        while (step := _next(engine, item, settings, trace, templates)) is not None:
            trace.prompts.append({"step": step.name, "messages": [m.to_json() for m in step.messages]})
            if step.kind == "tool":
                started = time.monotonic()
                text = await run_tool(step.tool, step.payload)
                completion = Completion(text=text, latency=time.monotonic() - started)
            else:
                if live is not None:
                    live.begin(len(trace.outputs), step.name)
                request = CallRequest(item=item, step=step, step_index=len(trace.outputs),
                                      outputs=tuple(trace.outputs), attempt=attempt,
                                      on_text=live.feed if live is not None else None)
                completion = await backend.complete(request)
            trace.outputs.append(completion.text)
            trace.steps.append({
                "name": step.name,
                "template": step.template,
                "usage": completion.usage,
                "latency": round(completion.latency, 4),
                "cached": completion.cached,
                **({"finish_reason": completion.finish_reason} if completion.finish_reason else {}),
                **({"tool": step.tool} if step.kind == "tool" else {}),
                **({"served_model": completion.served_model} if completion.served_model else {}),
                **({"system_fingerprint": completion.fingerprint} if completion.fingerprint else {}),
            })
    except BackendError as exc:
        trace.error = str(exc)
    return trace



def _next(engine: Engine[Any], item: Item, settings: Any, trace: StepTrace, templates: Mapping[str, str] | None) -> Step | None:
    """The engine's next step; if the engine fails choosing it, None with the failure in ``trace.scorer_error``."""
    step, trace.scorer_error = engine.next_call(item, settings, trace.outputs, templates)
    return step
