"""Code shape: no function over 60 lines and no module over 400 lines outside tests.

A module or function may be longer only if its docstring says why it must be one piece,
in a line that starts with ``One piece:`` and gives the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "sessions", "n2f_tui", "benchmarks")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
MARKER = "One piece:"


def justified(docstring: str | None) -> bool:
    """The docstring has a line ``One piece: <reason>``."""
    lines = (line.strip() for line in (docstring or "").splitlines())
    return any(line.startswith(MARKER) and line[len(MARKER):].strip() for line in lines)


def shape_problems(source: str, name: str) -> list[str]:
    """Every function (a method too) over MAX_FUNCTION_LINES and the module if over MAX_MODULE_LINES, unjustified."""
    tree = ast.parse(source)
    problems = []
    length = len(source.splitlines())
    if length > MAX_MODULE_LINES and not justified(ast.get_docstring(tree)):
        problems.append(f"{name}: module of {length} lines (limit {MAX_MODULE_LINES})")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES and not justified(ast.get_docstring(node)):
                problems.append(f"{name}:{node.lineno}: {node.name} has {length} lines (limit {MAX_FUNCTION_LINES})")
    return problems


def test_no_function_or_module_is_longer_than_the_limits_unless_it_says_why():
    files = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))
    assert len(files) > 100, "the walk must find the project's modules"
    problems = [p for path in files for p in shape_problems(path.read_text(encoding="utf-8"),
                                                            str(path.relative_to(ROOT)))]
    assert not problems, (f"split these along a seam, or give the docstring a line '{MARKER} <reason>':\n"
                          + "\n".join(problems))


def body(lines: int) -> str:
    return "".join(f"    x{i} = {i}\n" for i in range(lines))


def test_the_check_finds_a_long_function_and_module_and_accepts_a_stated_reason():
    at_limit = "def f():\n" + body(MAX_FUNCTION_LINES - 1)
    assert shape_problems(at_limit, "m") == []
    over = "def f():\n" + body(MAX_FUNCTION_LINES)
    assert shape_problems(over, "m") == [f"m:1: f has 61 lines (limit {MAX_FUNCTION_LINES})"]
    method = "class C:\n    async def g(self):\n" + body(MAX_FUNCTION_LINES).replace("    ", "        ")
    assert shape_problems(method, "m") == [f"m:2: g has 61 lines (limit {MAX_FUNCTION_LINES})"]
    reasoned = 'def f():\n    """Doc.\n\n    One piece: the steps share one loop state.\n    """\n' + body(MAX_FUNCTION_LINES)
    assert shape_problems(reasoned, "m") == []

    module = '"""Doc."""\n' + "x = 1\n" * (MAX_MODULE_LINES - 1)
    assert shape_problems(module, "m") == []
    module += "x = 1\n"
    assert shape_problems(module, "m") == [f"m: module of 401 lines (limit {MAX_MODULE_LINES})"]
    assert shape_problems(module.replace('"""Doc."""', '"""Doc.\n\nOne piece: run as a script.\n"""', 1), "m") == []
    assert shape_problems(module.replace('"""Doc."""', '"""Doc.\n\nOne piece:\n"""', 1), "m"), "a reason is needed"
    assert shape_problems(module.replace('"""Doc."""', '"""Doc. One piece: inline."""', 1), "m"), \
        "the marker starts a line"
