"""The DEDC prompt (released code, ``dataset_utils.py``) and message building.

One user message per item. The default template reproduces the official ``input_text``
byte for byte from the item's question and demonstrations (tested on all 10 files).
Placeholders: ``{examples}`` (every demonstration as ``Question: ...\\nAnswer: ...`` joined
by newlines: the shots, then the primitive demonstrations), ``{shot_examples}`` and
``{primitive_examples}`` (the two parts alone), ``{question}``. ``{{`` and ``}}`` are literal
braces; any other brace is left as written, so user templates may contain JSON.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from engines.core import Item, SettingsError

ANSWER = "answer"

DEFAULT_TEMPLATE = (
    "For a given question of tabular reasoning, output the reasoning expressions with minimum steps "
    "using a particular symbolic system. Here are some examples.\n"
    "{examples}\n"
    "Now it's your turn. Just output the answer, don't output anything else.\n"
    "Question: {question}\n"
    "Answer:"
)

PLACEHOLDERS = ("examples", "shot_examples", "primitive_examples", "question")
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def templates() -> dict[str, str]:
    return {ANSWER: DEFAULT_TEMPLATE}


def _examples(demos: list[Mapping[str, Any]]) -> str:
    return "\n".join(f"Question: {d['question']}\nAnswer: {d['answer']}" for d in demos)


def fields(item: Item) -> dict[str, str]:
    demos = list(item.inputs.get("demonstrations") or [])
    n_prim = int(item.inputs.get("n_primitive_demos") or 0)
    n_shots = len(demos) - n_prim
    return {
        "examples": _examples(demos),
        "shot_examples": _examples(demos[:n_shots]),
        "primitive_examples": _examples(demos[n_shots:]),
        "question": str(item.inputs.get("question", "")),
    }


def fill(template: str, values: Mapping[str, str], name: str = ANSWER) -> str:
    """Replace ``{placeholder}``s; an unknown one raises SettingsError naming the known ones."""
    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if text == "{{":
            return "{"
        if text == "}}":
            return "}"
        key = m.group(1)
        if key not in values:
            raise SettingsError(
                f"prompt template {name!r}: unknown placeholder {{{key}}}; "
                f"known: {', '.join('{' + k + '}' for k in PLACEHOLDERS)}")
        return values[key]
    return _FIELD.sub(sub, template)


def build_prompt(item: Item, template: str | None = None) -> str:
    if template is None or template == DEFAULT_TEMPLATE:
        prompt = item.inputs.get("prompt")
        if "demonstrations" not in item.inputs and isinstance(prompt, str):
            return prompt
        template = DEFAULT_TEMPLATE
    return fill(template, fields(item))
