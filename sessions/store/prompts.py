"""The prompts a stored item was asked, rebuilt from the run's templates and its stored outputs.

Runs store outputs, not prompts: a prompt is the engine's next step for the outputs so far
(logic's second prompt reads the first reply), so the inspector, ``n2f show`` and the
exports rebuild them the same way. Nothing heavy is imported here, so reading a run stays cheap.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.contract import Engine
from engines.core import Item


def rebuilt_steps(engine: Engine[Any], settings: Any, templates: Mapping[str, str] | None, item: Item,
                  outputs: Sequence[str]) -> list[dict[str, Any]]:
    """One step per stored output (at least one): ``{"step", "kind" (model|tool), "tool",
    "messages": [{"role", "content"}]}``; a tool step has no messages."""
    steps: list[dict[str, Any]] = []
    for step_index in range(max(1, len(outputs))):
        step, _ = engine.next_call(item, settings, outputs[:step_index], templates)
        if step is None:  # done, or the engine cannot read the outputs: the verdict says why
            break
        steps.append({"step": step.name, "kind": step.kind, "tool": step.tool,
                      "messages": [m.to_json() for m in step.messages]})
    return steps
