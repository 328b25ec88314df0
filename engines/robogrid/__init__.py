"""RoboGrid (Li, Chen & Yu): LLMs as in-context interpreters of a novel grammar.

Each item brings its own context-free grammar (a style and a lexicon) and asks for a
grammaticality judgement (VALID/INVALID), a program reaching a target state, or a
program translating template instructions. Replies are parsed with lark under the
item's grammar and scored by the paper's hierarchy SVR >= BER >= SCR.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import Item, Message, Step
from engines.package import PackageEngine
from engines.robogrid import prompts
from engines.robogrid.settings import RobogridSettings


class RobogridEngine(PackageEngine):
    name = "robogrid"
    title = "RoboGrid: diagnosing context-free grammar interpretation in LLMs"
    settings_type = RobogridSettings
    main_score = "svr"  # the one score every task defines; status carries each task's top criterion
    # The paper's "autoregressive echoing" (A.4.3 case 3) is a model re-predicting what is
    # already in its context: a prompt repeated back or a span looping is that failure.
    reply_tag_map = {"prompt_echo": "autoregressive_echoing", "repetition_loop": "autoregressive_echoing"}

    def next_step(self, item: Item, settings: Any, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        from engines.robogrid.score import item_cot, item_task

        task = item_task(item)
        prompt = prompts.build_prompt(item, item_cot(item, settings), (templates or {}).get(task))
        return Step(name=task, messages=(Message("user", prompt),), params=self.model_params(settings), template=task)


ENGINE = RobogridEngine()
