"""Prompt templates for the three tasks (wording of appendix A.2) and message building.

One user message per item, from the template named after the item's task. Placeholders:
``{grammar}`` (the EBNF), ``{code}`` (judge), ``{start}`` and ``{target}`` (goal),
``{instructions}`` (instruct), ``{examples}`` (the worked examples, empty with 0 shots)
and ``{answer_format}`` (what to output: the bare answer, or reasoning then a marked final
answer when CoT is on). ``{{`` and ``}}`` are literal braces.

The goal template adds the world's rules (section 2.1), which a model needs in order to
plan and the paper's excerpt elides with "...".
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from engines.core import Item, SettingsError

PLACEHOLDERS = ("grammar", "code", "start", "target", "instructions", "examples", "answer_format")

JUDGE = (
    "You are a strict syntax checker.\n"
    "Your task is to determine if the provided code is strictly valid according to the EBNF grammar.\n\n"
    "EBNF:\n{grammar}\n\n"
    "{examples}"
    "Code to Check:\n{code}\n\n"
    "If the code can be parsed by the grammar, output 'VALID'. Otherwise, output 'INVALID'.\n"
    "{answer_format}"
)
GOAL = (
    "You are a strict code generator.\n"
    "You are given a NEW programming language definition (EBNF).\n\n"
    "EBNF:\n{grammar}\n\n"
    "The program drives a robot on an unbounded grid. Its state is its position (x, y), the direction it faces "
    "(N, E, S or W) and the items it holds. Moving forward n steps changes the position by n cells in the facing "
    "direction (N: y + n, E: x + n, S: y - n, W: x - n); moving backward n steps goes the opposite way. Turning "
    "left or right rotates the robot 90 degrees. Grabbing an item adds it to the inventory. A loop repeats its "
    "block the given number of times; a conditional runs its first block when its condition holds (holding an "
    "item means the item is in the inventory) and its else block otherwise.\n\n"
    "{examples}"
    "Start state: {start}. Target final state: {target}.\n\n"
    "Your task is to synthesize a valid code according to the EBNF that guides the robot to the target state.\n"
    "{answer_format}"
)
INSTRUCT = (
    "You are a strict code generator.\n"
    "You are given a NEW programming language definition (EBNF).\n\n"
    "EBNF:\n{grammar}\n\n"
    "{examples}"
    "Instructions:\n{instructions}\n\n"
    "Your task is to faithfully translate the instructions into code. You must strictly adhere to the provided "
    "EBNF syntax and ensure the hierarchical structure of the generated program exactly matches the logical "
    "nesting of the instructions.\n"
    "{answer_format}"
)
DEFAULTS = {"judge": JUDGE, "goal": GOAL, "instruct": INSTRUCT}

ANSWER_FORMAT = {
    ("judge", False): "Output only VALID or INVALID, nothing else.",
    ("judge", True): "Think step by step about whether every part of the code follows the grammar, then end your "
                     "reply with a line 'ANSWER: VALID' or 'ANSWER: INVALID'.",
    ("code", False): "Output only the code, nothing else.",
    ("code", True): "First reason step by step. Then write the line 'FINAL PROGRAM:' followed by the complete "
                    "program in a ``` code block.",
}
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def templates() -> dict[str, str]:
    return dict(DEFAULTS)


def answer_format(task: str, cot: bool) -> str:
    return ANSWER_FORMAT[("judge" if task == "judge" else "code", bool(cot))]


def _example(task: str, example: Mapping[str, Any]) -> str:
    if task == "judge":
        return f"Code to Check:\n{example['code']}\nAnswer: {example['answer']}"
    if task == "goal":
        return (f"Start state: {example['start_text']}. Target final state: {example['target_text']}.\n"
                f"Code:\n{example['program']}")
    return f"Instructions:\n{example['instructions']}\nCode:\n{example['program']}"


def examples_text(item: Item) -> str:
    examples = list(item.inputs.get("examples") or [])
    if not examples:
        return ""
    task = str(item.meta.get("task", "instruct"))
    head = "Here is a worked example" if len(examples) == 1 else f"Here are {len(examples)} worked examples"
    body = "\n\n".join(f"Example {k}:\n{_example(task, e)}" for k, e in enumerate(examples, 1))
    return f"{head} in this language:\n\n{body}\n\n"


def fields(item: Item, cot: bool) -> dict[str, str]:
    inputs = item.inputs
    task = str(item.meta.get("task", "instruct"))
    return {
        "grammar": str(inputs.get("grammar", "")),
        "code": str(inputs.get("code", "")),
        "start": str(inputs.get("start_text", "")),
        "target": str(inputs.get("target_text", "")),
        "instructions": str(inputs.get("instructions", "")),
        "examples": examples_text(item),
        "answer_format": answer_format(task, cot),
    }


def fill(template: str, values: Mapping[str, str], name: str) -> str:
    """Replace ``{placeholder}``s; an unknown one raises SettingsError naming the known ones."""
    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if text in ("{{", "}}"):
            return text[0]
        key = m.group(1)
        if key not in values:
            raise SettingsError(f"prompt template {name!r}: unknown placeholder {{{key}}}; "
                                f"known: {', '.join('{' + k + '}' for k in PLACEHOLDERS)}")
        return values[key]

    return _FIELD.sub(sub, template)


def build_prompt(item: Item, cot: bool, template: str | None = None) -> str:
    task = str(item.meta.get("task", "instruct"))
    return fill(template or DEFAULTS[task], fields(item, cot), task)
