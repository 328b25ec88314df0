"""The ``n2f`` command in a test, through its real entry point.

``n2f`` calls ``n2f_tui.cli.main`` in the test's own process with a stdout, a stderr, a stdin
and environment variables of its own: the same parser, commands, messages and exit status as
the installed command, without a fresh interpreter importing the project for every call (0.3 to
0.7 s of CPU each; start-ups were most of what the CLI tests spent). ``n2f_process`` starts
``python -m n2f_tui`` for what only a process of its own shows: a signal or a kill, a fresh
interpreter's imports and start-up cost, plugins on another path.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """``os.environ`` with ``changes`` applied (``None`` removes a variable), restored afterwards."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            _set(name, value)
        yield
    finally:
        for name, value in saved.items():
            _set(name, value)


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


class _Stdin(io.StringIO):
    """A stdin that is not a terminal, as a piped or ``/dev/null`` stdin is not."""

    def isatty(self) -> bool:
        return False


def n2f(*args: str, check: bool = False, env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """``n2f ARGS`` in this process, stdin empty; ``check`` fails the test on a non-zero exit status."""
    from n2f_tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_stdin, sys.stdin = sys.stdin, _Stdin("")
    try:
        with environment(env or {}), redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")  # each call shows its warnings, as a fresh process would
            try:
                code = main(list(args))
            except SystemExit as stop:  # --help and --version end through argparse
                code = _exit_status(stop.code, err)
    finally:
        sys.stdin = saved_stdin
    return _checked(subprocess.CompletedProcess(["n2f", *args], code, out.getvalue(), err.getvalue()), check)


def _exit_status(code: object, err: io.StringIO) -> int:
    """What ``sys.exit(code)`` makes a process's exit status (a message goes to stderr, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=err)
    return 1


def n2f_process(*args: str, check: bool = False, env: Mapping[str, str | None] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m n2f_tui ARGS`` as a process of its own, from the checkout, stdin empty."""
    with environment(env or {}):
        result = subprocess.run([sys.executable, "-m", "n2f_tui", *args], capture_output=True, text=True,
                                timeout=timeout, cwd=ROOT, stdin=subprocess.DEVNULL)
    return _checked(result, check)


def _checked(result: subprocess.CompletedProcess[str], check: bool) -> subprocess.CompletedProcess[str]:
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(result.args)} exited {result.returncode}\n{result.stderr}")
    return result
