"""Round-trip logic ("Can LLMs Converse Formally?"): formula -> NL -> formula, judged by Z3.

Step 1 asks the model to describe a formula (FS->NL); step 2, in a fresh conversation
holding only that description and the vocabulary, asks for the formula back (NL->FS).
The item is correct iff Z3 proves the round-trip formula equivalent to the original.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts
from engines.core import Item, SimOptions, Status, Step
from engines.logic import prompts
from engines.logic.settings import LogicSettings

STEPS = (prompts.FS_TO_NL, prompts.NL_TO_FS)


class LogicEngine(Engine[LogicSettings]):
    name = "logic"
    title = "Round-trip logic: formula -> description -> formula, equivalence by Z3"
    settings_type = LogicSettings
    main_score = "equivalent"
    rank = 1
    model_steps = len(STEPS)

    def load_parts(self) -> EngineParts[LogicSettings]:
        from engines.logic import generate, paper, score, simulate, tags, views

        return EngineParts(build_items=generate.build_items, templates=prompts.templates, score_item=score.score_item,
                           taxonomy=tags.TAXONOMY, metrics=views.METRICS, aggregate=score.aggregate,
                           paper=paper.PAPER, report_keys=score.REPORT_KEYS)

    def next_step(self, item: Item, settings: LogicSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        """Step 1 shows the formula; step 2 is a fresh context with only the description and vocabulary."""
        if len(outputs) >= len(STEPS):
            return None
        name = STEPS[len(outputs)]
        description = outputs[0] if outputs else ""
        text = prompts.build_prompt(name, item, (templates or {}).get(name), description)
        return self.model_step(name, text, settings)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        """Step 1 describes the formula, step 2 reads the formula back from that description."""
        from engines.logic.simulate import simulate

        return simulate(item, step, tuple(outputs), options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        from engines.logic.simulate import oracle

        return oracle(item, step)

    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """``equivalent``: 1 when Z3 proves the round trip equivalent, else 0 (``unknown`` included)."""
        return scores.get("equivalent")


ENGINE = LogicEngine()
