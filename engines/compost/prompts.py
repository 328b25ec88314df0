"""The CompoST prompt: the released chat-format system prompt, shots as question/query pairs.

Placeholders: ``{shots}`` (each shot as ``Question: ...\\nSPARQL: ...``, blank-line
separated; empty for zero-shot) and ``{question}``. ``{{``/``}}`` are literal braces.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from engines.core import Item, SettingsError

QUERY = "query"
SYSTEM = ("Given a natural language question about a specific entity, generate a SPARQL query that "
          "retrieves relevant information from DBpedia.")
DEFAULT_TEMPLATE = "{shots}Question: {question}\nSPARQL:"
PLACEHOLDERS = ("shots", "question")
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def templates() -> dict[str, str]:
    return {QUERY: DEFAULT_TEMPLATE}


def shots_text(shots: list[Mapping[str, Any]]) -> str:
    return "".join(f"Question: {s['question']}\nSPARQL: {s['query']}\n\n" for s in shots)


def build_prompt(item: Item, template: str | None = None) -> str:
    values: dict[str, str] = {"shots": shots_text(item.inputs.get("shots") or []), "question": item.inputs["question"]}

    def fill(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        name = m.group(1)
        if name not in values:
            raise SettingsError(f"template: unknown placeholder {{{name}}}; known: {', '.join(PLACEHOLDERS)}")
        return values[name]

    return _FIELD.sub(fill, template or DEFAULT_TEMPLATE)
