"""RoboGrid (Li, Chen & Yu): LLMs as in-context interpreters of a novel grammar.

Each item brings its own context-free grammar (a style and a lexicon) and asks for a
grammaticality judgement (VALID/INVALID), a program reaching a target state, or a
program translating template instructions. Replies are parsed with lark under the
item's grammar and scored by the paper's hierarchy SVR >= BER >= SCR.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts
from engines.core import Item, Status, Step
from engines.robogrid import prompts
from engines.robogrid.settings import RobogridSettings

HIERARCHY = ("svr", "ber", "scr")  # each implies the one before; a task defines a prefix of them


class RobogridEngine(Engine[RobogridSettings]):
    name = "robogrid"
    title = "RoboGrid: diagnosing context-free grammar interpretation in LLMs"
    settings_type = RobogridSettings
    main_score = "svr"  # the one score every task defines; status carries each task's top criterion
    rank = 2
    # The paper's "autoregressive echoing" (A.4.3 case 3) is a model re-predicting what is
    # already in its context: a prompt repeated back or a span looping is that failure.
    reply_tag_map = {"prompt_echo": "autoregressive_echoing", "repetition_loop": "autoregressive_echoing"}

    def load_parts(self) -> EngineParts[RobogridSettings]:
        from engines.robogrid import generate, paper, score, simulate, tags, views

        return EngineParts(build_items=generate.build_items, templates=prompts.templates, score_item=score.score_item,
                           taxonomy=tags.TAXONOMY, metrics=views.METRICS, aggregate=score.aggregate, simulate=simulate.simulate,
                           oracle=simulate.oracle,
                           paper=paper.PAPER, report_keys=score.REPORT_KEYS)

    def next_step(self, item: Item, settings: RobogridSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        from engines.robogrid.score import item_cot, item_task

        task = item_task(item)
        prompt = prompts.build_prompt(item, item_cot(item, settings), (templates or {}).get(task))
        return self.model_step(task, prompt, settings)

    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """The share of its task's levels (SVR, BER, SCR) an item reaches: 1 exactly when the top
        level, the one the status follows, holds (judge 0 or 1, a wrong goal at most 1/2, a wrong
        instruct at most 2/3)."""
        levels = [scores[key] for key in HIERARCHY if key in scores]
        return sum(levels) / len(levels) if levels else None


ENGINE = RobogridEngine()
