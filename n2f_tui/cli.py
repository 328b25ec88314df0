"""The ``n2f`` command: headless runs, reports, exports; one clear line on bad input.

The commands live in ``n2f_tui.commands`` by group. A command pays only for its own group:
the parser is built with the group of the command given (``SUMMARIES`` names it without
importing anything) and lists the other commands by their one-line help, so ``n2f --help``
imports no engine, no store and no rich. Plugins are loaded, and a broken one named, once a
command runs; asyncio is imported by the commands that run something.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from importlib import import_module
from types import ModuleType
from typing import Any, Callable, NoReturn, Sequence

from n2f_tui.commands import GROUPS, SUMMARIES
from n2f_tui.commands.examples import add_examples
from sessions.errors import InputError, N2FError

Command = Callable[[argparse.Namespace], int]  # a group's COMMANDS: the parsed arguments to an exit status
EVERY = "*"  # build_parser: every group's parsers (completion, the conventions test, the help of bare `n2f`)


def one_line(message: str) -> str:
    """Errors are one line: newlines and control characters from data must not break that; keys are redacted."""
    from n2f_tui.render import safe_text
    from sessions.redact import redact

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
        from sessions.run.provenance import version_text

        print(version_text())
        parser.exit()


def group(name: str) -> ModuleType:
    return import_module(f"n2f_tui.commands.{name}")


def build_parser(command: str | None = EVERY) -> Parser:
    """The parser, with full parsers for ``command``'s group (every group for ``EVERY``); the other
    commands are listed by their one-line help (a command is always parsed by its own group)."""
    parser = Parser(prog="n2f", description="Inspect natural-to-formal benchmarks: run, score, report.")
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    wanted = SUMMARIES.get(command or "", ("", ""))[0]
    for name in GROUPS:
        if command == EVERY or name == wanted:
            group(name).add_parsers(sub)
        else:
            for listed, (owner, line) in SUMMARIES.items():
                if owner == name:
                    sub.add_parser(listed, help=line)
    add_examples(parser)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top level has no option
    taking a value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer a completion request of the shell scripts ``n2f completion SHELL`` prints (and exit)."""
    if "_ARGCOMPLETE" in os.environ:
        import argcomplete

        argcomplete.autocomplete(parser)


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = warning_line
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(EVERY if "_ARGCOMPLETE" in os.environ else command_of(words))
        complete(parser)
        args = parser.parse_args(words)
        if args.command not in ENGINE_FREE:
            warn_about_plugins()
        command: Command = (group("upkeep").cmd_tui if args.command is None
                            else group(SUMMARIES[args.command][0]).COMMANDS[args.command])
        return command(args)
    except KeyboardInterrupt:
        print("n2f: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except Exception as exc:
        if not users_error(exc):
            raise
        print(f"n2f: error: {one_line(str(exc))}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)


def users_error(exc: Exception) -> bool:
    """An error meant for the user (one line, no traceback): the project's, or an engine's settings."""
    if isinstance(exc, N2FError):
        return True
    from engines.core import EngineError

    return isinstance(exc, EngineError)


ENGINE_FREE = frozenset({"runs"})  # commands that import no engine (a run's meta names its description): no plugin to check


def warn_about_plugins() -> None:
    """A broken engine or backend plugin is named once, in one line; the others work."""
    from engines import problems as engine_problems
    from sessions.backends.models import problems as backend_problems

    for line in engine_problems() + backend_problems():
        print(f"n2f: warning: {one_line(line)}", file=sys.stderr)


def entry() -> None:
    """The ``n2f`` console script. The process ends with ``main``, so what is alive is frozen first:
    the interpreter's last full collection would walk every object (0.2 s after a compost run) to free
    memory the exit frees anyway. Workers and files are closed by then (atexit, the stores)."""
    code = main()
    from sessions.collector import freeze_for_exit

    freeze_for_exit()
    sys.exit(code)


if __name__ == "__main__":
    entry()
