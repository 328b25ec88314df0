"""``n2f run --dry-run``: what a run would send, before any call: items, prompt size, tokens and cost.

The first model step of every item is built exactly as the run would build it (its
messages' characters counted); later steps depend on the model's replies (the logic
round trip's second prompt is built from the first answer), so a multi-step engine's
prompt side is that first step times ``model_steps``, said so in ``basis``. Tokens are
estimated at ``CHARS_PER_TOKEN`` characters a token (OpenAI's rule of thumb for English;
formal notation runs a little denser). Replies are bounded by the run's ``max_tokens``
per step, so their side is a ceiling, not an estimate. Cost needs the model's
``[prices]``; without one it is unknown (None), never zero.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from engines.contract import Engine
from engines.core import Item
from sessions.config import Price

CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class DryRun:
    engine: str
    model: str
    items: int
    model_steps: int
    prompt_chars: int  # of the first model step of every item
    prompt_tokens: int  # estimated, every model step
    completion_tokens_max: int | None  # max_tokens x model steps x items; None when the engine sets no cap
    cost_min: float | None  # the prompts alone
    cost_max: float | None  # the prompts and every reply at its cap
    basis: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def dry_run(engine: Engine[Any], settings: Any, items: Sequence[Item], model: str, price: Price | None) -> DryRun:
    chars = 0
    count = 0
    for item in items:
        step = engine.next_step(item, settings, [], None)
        if step is not None and step.kind != "tool":
            chars += sum(len(m.content) for m in step.messages)
        count += 1
    steps = max(1, engine.model_steps)
    prompt_tokens = round(chars / CHARS_PER_TOKEN) * steps
    cap = engine.model_params(settings).get("max_tokens")
    completion_max = int(cap) * steps * count if isinstance(cap, int) else None
    cost_min = price.cost(prompt_tokens, 0) if price is not None else None
    cost_max = price.cost(prompt_tokens, completion_max) if price is not None and completion_max is not None else None
    basis = (f"prompt characters of the first model step; tokens at {CHARS_PER_TOKEN:g} characters each"
             + (f", times {steps} model steps" if steps > 1 else ""))
    return DryRun(engine=engine.name, model=model, items=count, model_steps=steps, prompt_chars=chars,
                  prompt_tokens=prompt_tokens, completion_tokens_max=completion_max, cost_min=cost_min,
                  cost_max=cost_max, basis=basis)
