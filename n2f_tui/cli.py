"""The ``n2f`` command: headless runs, reports, exports; one clear line on bad input.

The commands live in ``n2f_tui.commands`` by group; asyncio is imported by the commands
that run something, so reading a run starts faster.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, Sequence

from engines.core import EngineError
from n2f_tui.commands import reading, running, study, upkeep
from n2f_tui.render import safe_text
from sessions.collector import freeze_for_exit
from sessions.errors import InputError, N2FError

COMMANDS = {**running.COMMANDS, **reading.COMMANDS, **upkeep.COMMANDS, **study.COMMANDS}


def one_line(message: str) -> str:
    """Errors are one line: newlines and control characters from data must not break that."""
    return " ".join(safe_text(message).plain.split())


class UsageError(InputError):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def build_parser() -> Parser:
    parser = Parser(prog="n2f", description="Inspect natural-to-formal benchmarks: run, score, report.")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for group in (running, reading, upkeep, study):
        group.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
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
