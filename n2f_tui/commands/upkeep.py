"""resume, smoke, rescore, bench, tui: finishing, checking and inspecting runs."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from engines import engine_names
from n2f_tui.commands import summary
from n2f_tui.commands.common import budget_options, err, out, service_of, service_options
from n2f_tui.commands.running import drive, finish_run, watch
from n2f_tui.plain import print_whole
from n2f_tui.render import safe_text
from sessions import api
from sessions.study.annotations import resolve_annotator
from sessions.errors import InputError, RuntimeFailure
from sessions.store.runs import RunStore


def add_parsers(sub: Any) -> None:
    """resume, smoke, rescore, bench, tui."""
    p = sub.add_parser("resume", help=summary("resume"))
    p.add_argument("run")
    p.add_argument("-j", "--concurrency", type=int, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    budget_options(p)
    service_options(p)

    p = sub.add_parser("smoke", help=summary("smoke"))
    p.add_argument("-m", "--model", default=None, help="the model to check (as for run)")
    p.add_argument("-n", "--limit", type=int, default=10, help="items per engine (default 10)")
    p.add_argument("--seed", type=int, default=api.DEFAULT_SEED)
    p.add_argument("--engine", dest="engines", action="extend", nargs="+", default=[], metavar="NAME",
                   help="only these engines (default: all)")
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V",
                   help="a setting for every engine that has it (e.g. max_tokens=256)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    service_options(p)

    p = sub.add_parser("rescore", help=summary("rescore"))
    p.add_argument("run")

    p = sub.add_parser("bench", help=summary("bench"))
    p.add_argument("--engine", dest="engines", action="extend", nargs="+", default=[], metavar="NAME",
                   help=f"only these engines (default: all of {', '.join(engine_names())})")
    p.add_argument("-n", "--limit", type=int, default=None, help="at most N items per engine")
    p.add_argument("--no-concurrency", dest="concurrency", action="store_false", help="skip the concurrency check")
    p.add_argument("--latency", type=float, action="append", default=None, metavar="S",
                   help="the stub's answer time in seconds (repeatable; default 0.2 and 2)")
    p.add_argument("--transport", choices=("aiohttp", "httpx"), action="append", default=None,
                   help="the SDK's HTTP transport to measure (repeatable; default both)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")

    p = sub.add_parser("cache", help=summary("cache"))
    cache = p.add_subparsers(dest="cache_command", required=True, parser_class=type(p))
    q = cache.add_parser("info", help="where the cache is, how many replies per model, how old")
    q.add_argument("--json", action="store_true")
    q = cache.add_parser("clear", help="delete cached replies (all, or those of one model, or older ones)")
    q.add_argument("--model", default=None, metavar="M", help="only this model's replies (its name as sent, e.g. gpt-4o-mini)")
    q.add_argument("--older-than", default=None, metavar="AGE", help="only replies older than AGE (7d, 12h, 30m)")

    p = sub.add_parser("tui", help=summary("tui"))
    p.add_argument("run", nargs="?", default=None, help="a run id, name, unique id prefix or `last`")
    p.add_argument("--blind", action="store_true", help="label without seeing automatic tags (b toggles)")
    p.add_argument("--annotator", default=None, help="the name your annotation events carry")


def cmd_resume(args: argparse.Namespace) -> int:
    import asyncio

    async def main() -> tuple[api.PreparedRun, Any]:
        prepared = await api.prepare_resume(args.run, concurrency=args.concurrency, max_tokens=args.max_tokens,
                                            max_cost=args.max_cost, service=service_of(args))
        return prepared, await drive(prepared, args.quiet)

    prepared, progress = asyncio.run(main())
    return finish_run(prepared, progress, args.json)


def cmd_tui(args: argparse.Namespace) -> int:
    """``n2f`` and ``n2f tui [RUN]``: the inspector; with no runs yet it starts the offline demo live.

    Without a terminal (a pipe, CI, nohup) a full-screen app would draw escape codes nobody
    sees and never end: bare ``n2f`` prints the help instead, and both exit with status 2."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        if args.command is None:
            from n2f_tui.cli import build_parser

            build_parser().print_help(sys.stderr)
        raise InputError("the inspector needs a terminal; `n2f --help` lists the headless commands")
    run = getattr(args, "run", None)
    if run:
        run = RunStore.open(run).id  # a bad reference is one clear line and exit status 2, before the screen
    annotator = resolve_annotator(getattr(args, "annotator", None))
    from n2f_tui.app import N2FApp

    N2FApp(run=run, annotator=annotator, blind=getattr(args, "blind", False)).run()
    return 0

def cmd_rescore(args: argparse.Namespace) -> int:
    store, changed = api.rescore(args.run)
    err.print(f"run {store.label}: rescored {changed['rescored']} item(s), {changed['changed']} changed, "
              f"{changed['skipped']} in status error left for resume")
    return 0


def _engine_table(report: Any) -> Table:
    from sessions.run.bench import FIGURES_NOTE

    table = Table(title="engines: full pipeline, sim model at zero latency", caption=FIGURES_NOTE)
    for column in ("engine", "settings", "items", "seconds", "items_per_s", "peak_heap_mb", "max_rss_mb"):
        table.add_column(column, justify="left" if column in ("engine", "settings") else "right")
    for f in report.engines:
        table.add_row(f.engine, " ".join(f.settings) or "-", str(f.items), f"{f.seconds:.2f}",
                      f"{f.items_per_s:,.0f}", f"{f.peak_heap_mb:.1f}", f"{f.max_rss_mb:.0f}")
    return table


def _concurrency_table(report: Any) -> Table:
    table = Table(title="concurrency: openai backend (SDK transport) against a loopback stub answering after a latency",
                  caption="efficiency = calls/s / (j / latency); sdk/s = a plain openai SDK loop at the same -j "
                          "on the same transport and stub, half its calls just before, half just after; "
                          "ratio = calls/s / sdk/s")
    for column in ("transport", "latency", "-j", "items", "seconds", "calls/s", "ideal/s", "efficiency", "sdk/s",
                   "ratio"):
        table.add_column(column, justify="left" if column == "transport" else "right")
    for c in report.concurrency:
        table.add_row(c.transport, f"{c.latency_s * 1000:.0f} ms", str(c.concurrency), str(c.items), f"{c.seconds:.2f}",
                      f"{c.calls_per_s:.1f}", f"{c.ideal_per_s:.0f}", f"{100 * c.efficiency:.1f}%",
                      f"{c.floor_per_s:.1f}", f"{c.ratio:.2f}x")
    return table


async def _smoke_lines(prepared: Any) -> Any:
    """Off a terminal, a smoke run prints its plain progress lines as ``run`` does."""
    return await watch(prepared, quiet=False)


def cmd_smoke(args: argparse.Namespace) -> int:
    import asyncio

    from sessions.config import load_config
    from sessions.run.smoke import run_smoke

    config = load_config()
    group, rows = asyncio.run(run_smoke(args.model or config.default_model, args.limit, args.seed, args.engines, config,
                                        args.settings, service=service_of(args),
                                        watch=None if err.is_terminal else _smoke_lines))
    if args.json:
        print(json.dumps({"group": group, "runs": [r.to_json() for r in rows]}, ensure_ascii=False))
    else:
        table = Table(title=f"smoke {group}: {args.model or config.default_model}, {args.limit} items per engine",
                      caption=f"runs {group}-ENGINE: `n2f tui {group}-{rows[0].engine if rows else 'dedc'}` opens one")
        for column in ("engine", "items", "metric", "value", "errors", "tokens", "cost", "wall s"):
            table.add_column(column, justify="left" if column in ("engine", "metric") else "right")
        for r in rows:
            table.add_row(*(safe_text(v) for v in (
                r.engine, str(r.items), r.metric, "-" if r.value is None else f"{r.value:.3f}", str(r.errors),
                f"{r.tokens:,}" if r.tokens else "-", "-" if r.cost is None else f"${r.cost:.4f}", f"{r.seconds:.2f}")))
        print_whole(out, table)
    errors = sum(r.errors for r in rows)
    if errors:
        raise RuntimeFailure(f"{errors} item(s) ended in status error (infrastructure); `n2f resume RUN` retries them")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from sessions.run.bench import run_bench

    report = run_bench(args.engines, args.limit, args.concurrency, latencies=args.latency, transports=args.transport)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
        return 0
    print_whole(out, _engine_table(report))
    if report.concurrency:
        print_whole(out, _concurrency_table(report))
    return 0



def _when(stamp: float | None) -> str:
    import time

    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def cmd_cache(args: argparse.Namespace) -> int:
    from sessions.config import load_config
    from sessions.backends.service import age_seconds, open_cache

    config = load_config()
    older = age_seconds(args.older_than) if getattr(args, "older_than", None) else None
    with open_cache(config) as cache:
        if args.cache_command == "clear":
            deleted = cache.clear(model=args.model, older_than=older)
            err.print(f"cache {cache.path}: {deleted} repl{'y' if deleted == 1 else 'ies'} deleted")
            return 0
        info = cache.info()
    if args.json:
        print(json.dumps(info, ensure_ascii=False))
        return 0
    expire = f"after {config.cache_expire_days:g} days" if config.cache_expire else "never ([cache] expire_days)"
    out.print(f"cache    {info['path']}\nreplies  {info['entries']:,} ({info['bytes'] / 1e6:.1f} MB)\n"
              f"oldest   {_when(info['oldest'])}\nnewest   {_when(info['newest'])}\nexpire   {expire}", markup=False)
    for model, count in info["models"].items():
        out.print(f"  {count:>8,}  {model or '(unnamed)'}", markup=False)
    return 0


COMMANDS = {"resume": cmd_resume, "cache": cmd_cache, "smoke": cmd_smoke, "rescore": cmd_rescore, "bench": cmd_bench, "tui": cmd_tui}
