"""DEDC (Xu & Wang): decoupled evaluation of decomposition and composition in N2F.

A question of tabular reasoning -> assignment expressions over 10 primitives, after 3
demonstrations (+ one primitive demonstration per needed primitive for P_c).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import Item, Report, RunResults, SimOptions, Step, TagType, Verdict, Message
from engines.dedc import prompts
from engines.dedc.settings import DedcSettings
from engines.dedc.tags import TAXONOMY


class DedcEngine:
    name = "dedc"
    title = "DEDC: decomposition and composition in natural-to-formal conversion"
    settings_type = DedcSettings
    main_score = "correct"
    tools: tuple[str, ...] = ()

    def items(self, settings: DedcSettings, seed: int) -> list[Item]:
        from engines.dedc import generate  # lazily: generation is its own module

        return generate.build_items(settings, seed)

    def templates(self, settings: Any = None) -> dict[str, str]:
        return prompts.templates()

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        template = (templates or {}).get(prompts.ANSWER)
        prompt = prompts.build_prompt(item, template)
        defaults = DedcSettings()
        params = {"temperature": getattr(settings, "temperature", defaults.temperature),
                  "max_tokens": getattr(settings, "max_tokens", defaults.max_tokens)}
        return Step(name=prompts.ANSWER, messages=(Message("user", prompt),), params=params,
                    template=prompts.ANSWER)

    def score(self, item: Item, outputs: Sequence[str], settings: Any = None, with_views: bool = True) -> Verdict:
        from engines.dedc.score import score_item

        return score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        return list(TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        from engines.dedc.simulate import simulate

        return simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        from engines.dedc.simulate import oracle

        return oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        from engines.dedc.score import aggregate

        return aggregate(run, against, TAXONOMY)


ENGINE = DedcEngine()
