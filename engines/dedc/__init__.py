"""DEDC (Xu & Wang): decoupled evaluation of decomposition and composition in N2F.

A question of tabular reasoning -> assignment expressions over 10 primitives, after 3
demonstrations (+ one primitive demonstration per needed primitive for P_c).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts
from engines.core import Item, Status, Step
from engines.dedc import prompts
from engines.dedc.settings import DedcSettings


class DedcEngine(Engine[DedcSettings]):
    name = "dedc"
    title = "DEDC: decomposition and composition in natural-to-formal conversion"
    settings_type = DedcSettings
    main_score = "correct"
    rank = 0

    def load_parts(self) -> EngineParts[DedcSettings]:
        from engines.dedc import generate, paper, score, simulate, tags, views

        return EngineParts(build_items=generate.build_items, templates=prompts.templates, score_item=score.score_item,
                           taxonomy=tags.TAXONOMY, metrics=views.METRICS, aggregate=score.aggregate, simulate=simulate.simulate,
                           oracle=simulate.oracle,
                           paper=paper.PAPER, report_keys=score.REPORT_KEYS)

    def next_step(self, item: Item, settings: DedcSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        prompt = prompts.build_prompt(item, (templates or {}).get(prompts.ANSWER))
        return self.model_step(prompts.ANSWER, prompt, settings)

    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """``correct``: 1 for a correct item, 0 otherwise (the paper's accuracies count it)."""
        return scores.get("correct")


ENGINE = DedcEngine()
