"""The fork server compiles each program once for all its runs, and a run cannot tell.

A run given the server's code must do exactly what it did when it compiled the program
itself: same stdout, stderr and exit status, for a program that compiles, one with a
syntax error, one the compiler warns about, and one at the compiler's recursion limit
(which depends on the stack depth). The comparison is the same program padded with a
trailing comment past ``COMPILE_MAX_CHARS``, which its runs compile as before.
"""

from __future__ import annotations

import asyncio

import pytest

from sessions.tools import sandbox_server
from sessions.tools.sandbox import Limits, Sandbox
from sessions.tools.sandbox_server import COMPILE_MAX_CHARS, COMPILED_KEPT, CompiledPrograms

GRID = "s = input().split()\nprint('\\n'.join('**..' if c in 'ACEG' else '..**' for c in s))\n"


@pytest.fixture(scope="module")
def sandbox():
    box = Sandbox()
    yield box
    box.close()


def compiled_by_run(program: str) -> str:
    """The same program, too long for the server to compile: each run compiles it."""
    return program + "\n#" + "x" * COMPILE_MAX_CHARS + "\n"


def outcomes(sandbox: Sandbox, programs: list[str]) -> list[tuple[str, str, int | None]]:
    async def all_runs():
        return await asyncio.gather(*(sandbox.run_all(p, ["A D E H"], Limits(timeout_s=10)) for p in programs))

    return [(r.stdout, r.stderr, r.exit_code) for results in asyncio.run(all_runs()) for r in results]


@pytest.mark.parametrize("program", [
    GRID,
    "print(1\n",  # a syntax error: the run's stderr has the compiler's message
    "x = 1\nprint(x is 1)\n",  # a SyntaxWarning, printed by the run's compile
    "import sys\nprint(sys.argv, __name__, __file__)\nraise SystemExit(3)\n",
], ids=["grid", "syntax error", "warning", "exit status"])
def test_a_run_of_server_compiled_code_is_the_run_of_its_own_compile(sandbox, program):
    server, own = outcomes(sandbox, [program, compiled_by_run(program)])
    assert server == own


def test_at_the_compilers_recursion_limit_the_outcome_is_the_runs_own(sandbox):
    """The limit moves with the stack depth (three levels a frame): around it, each depth of nesting
    fails or compiles as in a run that compiles it (the server compiles deeper, and leaves failures)."""
    programs = [f"x = {'-' * n}1\nprint('compiled')\n" for n in range(2900, 3000)]
    server = outcomes(sandbox, programs)
    own = outcomes(sandbox, [compiled_by_run(p) for p in programs])
    assert server == own
    assert {s[2] for s in own} == {0, 1}, "the range must straddle the limit"


def test_the_server_compiles_a_program_once_and_keeps_a_bounded_number(monkeypatch):
    calls: list[str] = []
    real = sandbox_server.compile_program
    monkeypatch.setattr(sandbox_server, "compile_program", lambda source: calls.append(source) or real(source))
    programs = CompiledPrograms()
    codes = {id(programs.get(GRID)) for _ in range(16)}
    assert len(codes) == 1 and calls == [GRID]
    assert programs.get("print(1\n") is None and programs.get("print(1\n") is None
    assert programs.get("print(1 is 1)\n") is None  # warns: its runs compile it and print the warning
    assert programs.get(compiled_by_run(GRID)) is None and len(calls) == 3  # too long: not compiled here
    for n in range(COMPILED_KEPT + 5):
        programs.get(f"print({n})\n")
    assert len(programs._codes) == COMPILED_KEPT
    programs.get(GRID)
    assert calls.count(GRID) == 2  # evicted by the newer programs, compiled again
