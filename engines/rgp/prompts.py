"""The rgp prompt (released ``prompt_en.txt`` and ``generate_prompt.py``) and message building.

All 16 samples go in one user message, each as ``Input:\\n{input}\\nOutput:\\n{grid}\\n``.
Placeholder: ``{samples}``. ``{{`` and ``}}`` are literal braces; any other brace is left
as written.
"""

from __future__ import annotations

import re
from typing import Mapping

from engines.core import Item, SettingsError

PROGRAM = "program"

DEFAULT_TEMPLATE = (
    "Write a Python program that conforms to the following samples. You should try to find patterns in the "
    "samples, but it is permissible to use the samples directly in your program.\n"
    "{samples}"
)

PLACEHOLDERS = ("samples",)
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def templates() -> dict[str, str]:
    return {PROGRAM: DEFAULT_TEMPLATE}


def samples_text(item: Item) -> str:
    return "".join(f"Input:\n{s['input']}\nOutput:\n{s['output']}\n" for s in item.inputs["samples"])


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{placeholder}``s; an unknown one raises SettingsError naming the known ones."""
    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if text in ("{{", "}}"):
            return text[0]
        if m.group(1) not in values:
            raise SettingsError(f"prompt template {PROGRAM!r}: unknown placeholder {text}; "
                                f"known: {', '.join('{' + k + '}' for k in PLACEHOLDERS)}")
        return values[m.group(1)]
    return _FIELD.sub(sub, template)


def build_prompt(item: Item, template: str | None = None) -> str:
    return fill(template or DEFAULT_TEMPLATE, {"samples": samples_text(item)})
