"""The ``n2f`` command: headless runs, reports, exports; one clear line on bad input.

The commands live in ``n2f_tui.commands`` by group; asyncio is imported by the commands
that run something, so reading a run starts faster.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any, NoReturn, Sequence

from engines import problems as engine_problems
from engines.core import EngineError
from n2f_tui.commands import about, reading, running, study, upkeep
from n2f_tui.commands.examples import add_examples
from n2f_tui.render import safe_text
from sessions.collector import freeze_for_exit
from sessions.errors import InputError, N2FError
from sessions.redact import redact
from sessions.models import problems as backend_problems

COMMANDS = {**running.COMMANDS, **reading.COMMANDS, **upkeep.COMMANDS, **study.COMMANDS, **about.COMMANDS}


def one_line(message: str) -> str:
    """Errors are one line: newlines and control characters from data must not break that; keys are redacted."""
    return " ".join(safe_text(redact(message)).plain.split())


def warning_line(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """The store's warnings (a damaged line skipped) as one line each, like the errors."""
    print(f"n2f: warning: {one_line(str(message))}", file=sys.stderr)


class UsageError(InputError):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class VersionAction(argparse.Action):
    """``--version``: the version and revision are looked up only when asked for (git runs then)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version (and the git revision of a checkout) and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        from sessions.provenance import version_text

        print(version_text())
        parser.exit()


def build_parser() -> Parser:
    parser = Parser(prog="n2f", description="Inspect natural-to-formal benchmarks: run, score, report.")
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for group in (running, reading, upkeep, study, about):
        group.add_parsers(sub)
    add_examples(parser)
    return parser


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer a completion request of the shell scripts ``n2f completion SHELL`` prints (and exit)."""
    if "_ARGCOMPLETE" in os.environ:
        import argcomplete

        argcomplete.autocomplete(parser)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = warning_line
    try:
        parser = build_parser()
        complete(parser)
        for line in engine_problems() + backend_problems():  # a broken plugin is named once; the others work
            print(f"n2f: warning: {one_line(line)}", file=sys.stderr)
        args = parser.parse_args(argv)
        if args.command is None:
            return upkeep.cmd_tui(args)
        return COMMANDS[args.command](args)
    except (N2FError, EngineError) as exc:
        print(f"n2f: error: {one_line(str(exc))}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("n2f: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0


def entry() -> None:
    """The ``n2f`` console script. The process ends with ``main``, so what is alive is frozen first:
    the interpreter's last full collection would walk every object (0.2 s after a compost run) to free
    memory the exit frees anyway. Workers and files are closed by then (atexit, the stores)."""
    code = main()
    freeze_for_exit()
    sys.exit(code)


if __name__ == "__main__":
    entry()
