"""Round-trip logic ("Can LLMs Converse Formally?"): formula -> NL -> formula, judged by Z3.

Step 1 asks the model to describe a formula (FS->NL); step 2, in a fresh conversation
holding only that description and the vocabulary, asks for the formula back (NL->FS).
The item is correct iff Z3 proves the round-trip formula equivalent to the original.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import Item, Message, Report, RunResults, SimOptions, Step, TagType, Verdict
from engines.logic import prompts
from engines.logic.settings import LogicSettings
from engines.logic.tags import TAXONOMY

STEPS = (prompts.FS_TO_NL, prompts.NL_TO_FS)


class LogicEngine:
    name = "logic"
    title = "Round-trip logic: formula -> description -> formula, equivalence by Z3"
    settings_type = LogicSettings
    main_score = "equivalent"
    tools: tuple[str, ...] = ()

    def items(self, settings: LogicSettings, seed: int) -> list[Item]:
        from engines.logic.generate import build_items

        return build_items(settings, seed)

    def templates(self, settings: Any = None) -> dict[str, str]:
        return prompts.templates()

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        """Step 1 shows the formula; step 2 is a fresh context with only the description and vocabulary."""
        if len(outputs) >= len(STEPS):
            return None
        name = STEPS[len(outputs)]
        description = outputs[0] if outputs else ""
        text = prompts.build(name, item, (templates or {}).get(name), description)
        defaults = LogicSettings()
        params = {"temperature": getattr(settings, "temperature", defaults.temperature),
                  "max_tokens": getattr(settings, "max_tokens", defaults.max_tokens)}
        return Step(name=name, messages=(Message("user", text),), params=params, template=name)

    def score(self, item: Item, outputs: Sequence[str], settings: Any = None, with_views: bool = True) -> Verdict:
        from engines.logic.score import score_item

        return score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        return list(TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        from engines.logic.simulate import simulate

        return simulate(item, step, tuple(outputs), options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        from engines.logic.simulate import oracle

        return oracle(item, step)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        from engines.logic.score import aggregate

        return aggregate(run, against, TAXONOMY)


ENGINE = LogicEngine()
