"""``n2f show RUN N --full`` at 60 and 80 columns and ``COLUMNS=60 n2f report RUN | cat`` cut no value
(issue 26, point 2), on all five engines, through the real entry point with stdout a pipe.

What "no value cut" means here is checked against the values themselves, read from
``--json`` (which keeps everything as stored): every word of every prompt, output, gold
value, tag evidence and engine view cell appears whole in the printed text (a word Rich
folded at the line's end, or ended in "…", would not), and no line ends a cell in "…".
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import pytest

from n2f_tui.render import _fmt
from cli_support import n2f as cli_n2f

ENGINES = ("dedc", "logic", "compost", "robogrid", "rgp")
RICH_CUT = re.compile(r"\S…\s*([│┃]|$)", re.MULTILINE)


def n2f_at(columns: int, *args: str) -> str:
    return cli_n2f(*args, check=True, env={"COLUMNS": str(columns)}).stdout


def view_texts(view: dict[str, Any]) -> Iterator[str]:
    """The values an engine view shows, as the inspector and ``show`` print them."""
    kind, data = view["kind"], view["data"]
    if kind == "table":
        yield from (str(c) for c in data.get("columns", []))
        yield from (str(cell) for row in data.get("rows", []) for cell in row)
    elif kind == "key-value":
        yield from (str(v) for pair in data for v in pair)
    elif kind == "tree":
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                yield str(node.get("label", ""))
                stack += node.get("children", [])
            else:
                yield str(node)
    elif kind == "diff":
        yield str(data.get("left", ""))
        yield str(data.get("right", ""))
    elif kind in ("text", "code"):
        yield str(data)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings(inner)


def shown_values(shown: dict[str, Any]) -> Iterator[str]:
    """Every text ``show`` prints for the item: prompts, outputs, gold, evidence, engine views."""
    yield shown["item"]["id"]
    for step in shown["prompts"]:
        yield from (m["content"] for m in step.get("messages", []))
    yield from (shown["record"] or {}).get("outputs", [])
    yield from strings(shown["item"]["gold"])
    verdict = shown["verdict"] or {}
    yield from (t["evidence"] for t in verdict.get("tags", []))
    for view in verdict.get("views", []):
        yield from view_texts(view)


TIMING = re.compile(r"^\d+(\.\d+)? ms$")  # a solver's time, measured anew by each re-score


def cut_words(text: str, values: Iterator[str]) -> list[str]:
    return sorted({word for value in values if not TIMING.match(value) for word in value.split() if word not in text})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    home = tmp_path_factory.mktemp("whole-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("N2F_HOME", str(home))
        for engine in ENGINES:
            n2f_at(80, "run", engine, "-n", "8", "-q", "--name", engine)
    return home


@pytest.fixture
def store(runs, monkeypatch):
    monkeypatch.setenv("N2F_HOME", str(runs))


def items_to_show(engine: str) -> list[str]:
    """A wrong item (tags with evidence) and a correct one, as 1-based positions."""
    report = [json.loads(line) for line in n2f_at(80, "export", engine, "--format", "jsonl").splitlines()]
    wrong = next((i for i, r in enumerate(report) if r.get("status") != "correct"), 0)
    right = next((i for i, r in enumerate(report) if r.get("status") == "correct"), 0)
    return [str(wrong + 1), str(right + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_show_full_at_60_and_80_columns_cuts_no_value(store, engine):
    for position in items_to_show(engine):
        shown = json.loads(n2f_at(80, "show", engine, position, "--json"))
        for columns in (60, 80):
            text = n2f_at(columns, "show", engine, position, "--full")
            assert cut_words(text, shown_values(shown)) == [], (columns, position)
            assert not RICH_CUT.search(text), (columns, position, RICH_CUT.search(text))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_report_piped_at_60_columns_cuts_no_value(store, engine):
    text = n2f_at(60, "report", engine)
    report = json.loads(n2f_at(60, "report", engine, "--json"))
    lines = text.splitlines()
    for table in report["tables"]:
        for row in table["rows"]:
            cells = [_fmt(cell) for cell in row]
            assert any(all(cell in line for cell in cells) for line in lines), (table["name"], cells)
    notes = [n for n in report.get("notes", []) if isinstance(n, str)]
    assert cut_words(text, iter(notes)) == []
    assert not RICH_CUT.search(text), RICH_CUT.search(text)
