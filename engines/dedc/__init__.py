"""DEDC (Xu & Wang): decoupled evaluation of decomposition and composition in N2F.

A question of tabular reasoning -> assignment expressions over 10 primitives, after 3
demonstrations (+ one primitive demonstration per needed primitive for P_c).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.contract import Engine, with_extraction
from engines.core import Item, Report, RunResults, SimOptions, Step, TagType, Verdict
from engines.dedc import prompts
from engines.dedc.settings import DedcSettings


class DedcEngine(Engine[DedcSettings]):
    name = "dedc"
    title = "DEDC: decomposition and composition in natural-to-formal conversion"
    settings_type = DedcSettings
    main_score = "correct"

    def items(self, settings: DedcSettings, seed: int) -> Sequence[Item]:
        from engines.dedc.generate import build_items

        return build_items(settings, seed)

    def templates(self, settings: DedcSettings) -> dict[str, str]:
        return prompts.templates()

    def next_step(self, item: Item, settings: DedcSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        prompt = prompts.build_prompt(item, (templates or {}).get(prompts.ANSWER))
        return self.model_step(prompts.ANSWER, prompt, settings)

    def judge(self, item: Item, outputs: Sequence[str], settings: DedcSettings, with_views: bool) -> Verdict:
        from engines.dedc.score import score_item

        return score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        from engines.dedc.tags import TAXONOMY

        return list(TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        from engines.dedc.simulate import simulate

        return simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        from engines.dedc.simulate import oracle

        return oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        from engines.dedc.score import aggregate

        return with_extraction(aggregate(run, against, self.taxonomy()), run)

    def list_score(self, status: str, scores: Mapping[str, float]) -> float | None:
        """``correct``: 1 for a correct item, 0 otherwise (the paper's accuracies count it)."""
        return scores.get("correct")


ENGINE = DedcEngine()
