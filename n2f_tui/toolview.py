"""A tool's result shown whole as tables, not JSON: what ``o`` opens on a SPARQL result or a sandbox's runs.

A SPARQL result (``{"vars": [...], "rows": [[...], ...]}``) becomes a table of its distinct
rows, each with how many times it came back: SPARQL keeps repeated solutions, so a row
count (6,138) can exceed the distinct values the engine's result-set view compares
(4,987), and the title says by how many. A list of records (the sandbox's runs, one per
sample) becomes a table with a column per field; the other fields are listed as
key: value. Anything else is left to the JSON view.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from engines.core import View
from n2f_tui.render import render_view, safe_text


def is_result_set(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("vars"), list) and isinstance(value.get("rows"), list)


def is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def cell(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def result_set_view(name: str, result: dict[str, Any]) -> View:
    rows = [tuple(cell(c) for c in row) for row in result["rows"]]
    counts = Counter(rows)
    extra = len(rows) - len(counts)
    title = f"{name}: {len(rows):,} rows, {len(counts):,} distinct"
    if extra:
        title += f" ({extra:,} repeated: SPARQL keeps duplicate solutions; the result-set view compares distinct values)"
    if result.get("truncated"):
        title += "; cut by the endpoint's row limit"
    return View("table", title, {"columns": [*map(str, result["vars"]), "times"],
                                 "rows": [[*row, times] for row, times in counts.items()]})


def records_view(name: str, records: list[dict[str, Any]]) -> View:
    columns: dict[str, None] = {}
    for record in records:
        columns.update((k, None) for k in record)
    return View("table", f"{name}: {len(records):,} (one row each)",
                {"columns": ["#", *columns], "rows": [[n, *(cell(r.get(k, "")) for k in columns)]
                                                       for n, r in enumerate(records, 1)]})


def tool_tables(value: Any, marks: bool = True) -> list[RenderableType] | None:
    """The tables for a tool's result (parsed JSON), or None when it has neither result sets nor records."""
    if not isinstance(value, dict):
        return None
    if is_result_set(value):
        value = {"result": value}
    tables = [result_set_view(k, v) if is_result_set(v) else records_view(k, v)
              for k, v in value.items() if is_result_set(v) or is_records(v)]
    if not tables:
        return None
    scalars = [f"{k}: {cell(v)}" for k, v in value.items() if not (is_result_set(v) or is_records(v))]
    parts: list[RenderableType] = [safe_text("\n".join(scalars))] if scalars else []
    return parts + [render_view(view, None, marks) for view in tables] + [Text("")]
