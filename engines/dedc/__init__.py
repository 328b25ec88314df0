"""DEDC (Xu & Wang): decoupled evaluation of decomposition and composition in N2F.

A question of tabular reasoning -> assignment expressions over 10 primitives, after 3
demonstrations (+ one primitive demonstration per needed primitive for P_c).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import Item, Message, Step
from engines.package import PackageEngine
from engines.dedc import prompts
from engines.dedc.settings import DedcSettings


class DedcEngine(PackageEngine):
    name = "dedc"
    title = "DEDC: decomposition and composition in natural-to-formal conversion"
    settings_type = DedcSettings
    main_score = "correct"

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        template = (templates or {}).get(prompts.ANSWER)
        prompt = prompts.build_prompt(item, template)
        return Step(name=prompts.ANSWER, messages=(Message("user", prompt),), params=self.model_params(settings),
                    template=prompts.ANSWER)


ENGINE = DedcEngine()
