"""settings, completion: what the program offers, read without any run or config.

``n2f --version`` is an argparse action of the top-level parser (``n2f_tui.cli``); the
shell completion scripts are argcomplete's, which call ``n2f`` back for the words
(``n2f_tui.cli.main`` answers them before parsing).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.table import Table

from engines import get_engine
from engines.core import describe_settings
from n2f_tui.commands import summary
from n2f_tui.commands.common import engine_argument, out
from n2f_tui.plain import print_whole
from n2f_tui.render import safe_text

SHELLS = ("bash", "zsh", "fish")


def add_parsers(sub: Any) -> None:
    """settings, completion."""
    p = sub.add_parser("settings", help=summary("settings"))
    engine_argument(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("completion", help=summary("completion"))
    p.add_argument("shell", choices=SHELLS)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return '""' if value == "" else str(value)


def cmd_settings(args: argparse.Namespace) -> int:
    engine = get_engine(args.engine)
    rows = describe_settings(engine.settings_type)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, default=str))
        return 0
    table = Table(title=f"{engine.name} settings (-s KEY=VALUE)")
    for column in ("setting", "type", "default", "allowed", "meaning"):
        table.add_column(column)
    for r in rows:
        table.add_row(*(safe_text(v) for v in (r["name"], r["type"], _value(r["default"]), r["allowed"], r["help"])))
    print_whole(out, table)
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["n2f"], shell=args.shell))
    return 0


COMMANDS = {"settings": cmd_settings, "completion": cmd_completion}
