"""RoboGrid (Li, Chen & Yu): LLMs as in-context interpreters of a novel grammar.

Each item brings its own context-free grammar (a style and a lexicon) and asks for a
grammaticality judgement (VALID/INVALID), a program reaching a target state, or a
program translating template instructions. Replies are parsed with lark under the
item's grammar and scored by the paper's hierarchy SVR >= BER >= SCR.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import Item, Message, Report, RunResults, SimOptions, Step, TagType, Verdict
from engines.robogrid import prompts
from engines.robogrid.settings import RobogridSettings
from engines.robogrid.tags import TAXONOMY


class RobogridEngine:
    name = "robogrid"
    title = "RoboGrid: diagnosing context-free grammar interpretation in LLMs"
    settings_type = RobogridSettings
    main_score = "svr"  # the one score every task defines; status carries each task's top criterion
    tools: tuple[str, ...] = ()

    def items(self, settings: RobogridSettings, seed: int) -> list[Item]:
        from engines.robogrid import generate

        return generate.build_items(settings, seed)

    def templates(self, settings: Any = None) -> dict[str, str]:
        return prompts.templates()

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        from engines.robogrid.score import item_cot, item_task

        task = item_task(item)
        prompt = prompts.build_prompt(item, item_cot(item, settings), (templates or {}).get(task))
        defaults = RobogridSettings()
        params = {"temperature": getattr(settings, "temperature", defaults.temperature),
                  "max_tokens": getattr(settings, "max_tokens", defaults.max_tokens)}
        return Step(name=task, messages=(Message("user", prompt),), params=params, template=task)

    def score(self, item: Item, outputs: Sequence[str], settings: Any = None, with_views: bool = True) -> Verdict:
        from engines.robogrid.score import score_item

        return score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        return list(TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        from engines.robogrid.simulate import simulate

        return simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        from engines.robogrid.simulate import oracle

        return oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        from engines.robogrid.score import aggregate

        return aggregate(run, against, TAXONOMY)


ENGINE = RobogridEngine()
