"""What the command groups share: the two consoles, the engine and budget options, the printed report."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.panel import Panel

from engines import engine_names
from n2f_tui.figures import render_report_head
from n2f_tui.plain import print_whole
from n2f_tui.render import render_paper, render_report_tables
from sessions import api

out = Console(highlight=False)
err = Console(stderr=True, highlight=False, soft_wrap=True)  # hints stay one line on a pipe, to copy and paste


def engine_completer(**_: Any) -> tuple[str, ...]:
    """The words the shell completes an ENGINE argument with (argcomplete calls it)."""
    return engine_names()


def budget_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="stop taking new items once the run has used N tokens (resumable)")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop taking new items once the run has cost USD (needs the model's [prices] in the config)")


def service_options(p: argparse.ArgumentParser) -> None:
    """The response cache and the per-minute ceilings: run, resume, smoke."""
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", dest="cache", action="store_const", const="off", default="use",
                       help="neither read nor store cached replies")
    cache.add_argument("--refresh-cache", dest="cache", action="store_const", const="refresh",
                       help="ask the model again and store its new replies")
    p.add_argument("--rpm", type=int, default=None, metavar="N", help="at most N model calls started per minute")
    p.add_argument("--tpm", type=int, default=None, metavar="N", help="at most N tokens per minute")


def service_of(args: argparse.Namespace) -> Any:
    from sessions.backends.service import ServiceOptions

    return ServiceOptions(cache=args.cache, rpm=args.rpm, tpm=args.tpm)


def engine_argument(p: argparse.ArgumentParser) -> None:
    """The engine's name, completed by argcomplete from the installed engines."""
    action = p.add_argument("engine", help=f"one of: {', '.join(engine_names())}")
    action.completer = engine_completer  # type: ignore[attr-defined]  # argcomplete's hook: an attribute argparse does not declare


def engine_options(p: argparse.ArgumentParser) -> None:
    engine_argument(p)
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V", help="an engine setting")
    p.add_argument("--seed", type=int, default=api.DEFAULT_SEED, help="seed for item construction and the simulator")


def print_report(report: Any, summary: dict[str, Any]) -> None:
    out.print(Panel(render_report_head(summary, provenance=True), title="report", title_align="left"))
    for renderable in render_report_tables(report) + render_paper(summary.get("paper")):
        print_whole(out, renderable)
