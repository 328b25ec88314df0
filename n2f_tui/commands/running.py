"""run, items, score: making and judging answers.

asyncio is imported inside the commands that run something, so reading a run starts faster.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from engines import get_engine
from engines.core import Item
from n2f_tui.commands import summary
from n2f_tui.commands.common import budget_options, engine_options, err, print_report, service_of, service_options
from n2f_tui.widgets.style import usage_line
from sessions import api
from sessions.errors import InputError, RuntimeFailure
from sessions.store.runs import RunStore


def add_parsers(sub: Any) -> None:
    """run, items, score."""
    p = sub.add_parser("run", help=summary("run"))
    engine_options(p)
    p.add_argument("-m", "--model", default=None, help="sim[:k=v,...] | oracle | replay:FILE | local[:PATH.gguf] | openai:MODEL[@URL]")
    p.add_argument("-n", "--limit", type=int, default=None, help="only the first N items")
    p.add_argument("-j", "--concurrency", type=int, default=None, help="items in flight at once")
    p.add_argument("--name", default="", help="a name to refer to the run by")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--dry-run", action="store_true",
                   help="no call: the items, the prompt characters and an estimate of tokens and cost")
    budget_options(p)
    service_options(p)

    p = sub.add_parser("items", help=summary("items"))
    engine_options(p)

    p = sub.add_parser("score", help=summary("score"))
    p.add_argument("engine")
    p.add_argument("--item", required=True, help="a file holding one item as printed by n2f items")
    p.add_argument("--output", action="append", required=True, help="a file with the model output of one step")
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V")


BUDGET_EXIT = 3  # stopped at --max-tokens / --max-cost: resumable, not a failure
PLAIN_EVERY = 5.0  # seconds between progress lines off a terminal


def rate_text(rate: float) -> str:
    """Items per second as a person reads them: 2650, 14.2 or 0.14 (a local model), never a bare 0."""
    return f"{rate:.0f}" if rate >= 100 else f"{rate:.1f}" if rate >= 1 else f"{rate:.2f}"


def _announce_cap(prepared: api.PreparedRun) -> None:
    """A local model writes until its reply cap: say which cap this run has before it starts."""
    if prepared.backend.spec.kind == "local":
        cap = getattr(prepared.runner.settings, "max_tokens", None)
        err.print(f"local model: replies capped at {cap} tokens (-s max_tokens=N to change)")


def progress_line(label: str, p: Any) -> str:
    """One plain line for logs and CI: done/total, items/s, errors, the concurrency now, cached replies, ETA."""
    limit = p.limit
    eta = f"{p.eta:.0f}s" if p.eta is not None else "-"
    parts = [f"{label}: {p.done}/{p.total} done", f"{rate_text(p.rate)} items/s", f"{p.errors} errors"]
    if limit is not None:
        parts.append(f"concurrency {limit.limit}/{limit.ceiling}")
    if p.cached:
        parts.append(f"{p.cached} of {p.replies} replies cached")
    return " · ".join(parts + [f"ETA {eta}"])


async def _bar(prepared: api.PreparedRun, task: Any) -> None:
    """The rich progress bar, polled on a timer (a terminal); rich.progress is imported here, by the runs
    that draw it, not by a quiet or piped one."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    runner = prepared.runner
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} items/s  acc {task.fields[acc]:.1%}  err {task.fields[errors]}  "
                   "j {task.fields[j]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as bar:
        bar_id = bar.add_task(prepared.store.label, total=None, rate=rate_text(0.0), acc=0.0, errors=0, j="")
        while True:
            p = runner.progress
            bar.update(bar_id, total=p.total, completed=p.done, rate=rate_text(p.rate), acc=p.accuracy,
                       errors=p.errors, j=f"{p.concurrency}/{runner.concurrency}")
            if task.done():
                return
            await asyncio.wait({task}, timeout=0.1)


async def _plain(prepared: api.PreparedRun, task: Any) -> None:
    """A plain progress line on stderr every few seconds, and one at the end (logs, CI, nohup)."""
    import asyncio

    label = f"run {prepared.store.label}"
    while True:
        await asyncio.wait({task}, timeout=PLAIN_EVERY)
        print(progress_line(label, prepared.runner.progress), file=sys.stderr, flush=True)
        if task.done():
            return


async def watch(prepared: api.PreparedRun, quiet: bool) -> Any:
    """Run, shown as a bar on a terminal, as plain lines off one, not at all with ``quiet``."""
    import asyncio

    task = asyncio.create_task(prepared.runner.run())
    try:
        if quiet:
            return await task
        await (_bar(prepared, task) if err.is_terminal or err.file.isatty() else _plain(prepared, task))
        return await task
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def drive(prepared: api.PreparedRun, quiet: bool) -> Any:
    """Run with its progress shown (``watch``); Ctrl-C/SIGTERM stop cleanly for resume.

    A stop cancels the items in flight (``Runner.cancel``), so it takes effect between two
    tokens of a local model or at once for a remote one, not when the reply is done.
    """
    import asyncio

    runner = prepared.runner
    _announce_cap(prepared)
    loop = asyncio.get_running_loop()
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in before:
        try:
            loop.add_signal_handler(sig, runner.cancel)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        return await watch(prepared, quiet)
    finally:
        for sig, handler in before.items():
            try:
                loop.remove_signal_handler(sig)  # which sets Python's default, not what was there
            except (NotImplementedError, RuntimeError):
                pass
            if handler is not None:
                signal.signal(sig, handler)  # the process is left as found (a caller's own handler, or SIG_IGN)
        prepared.store.close()
        await prepared.backend.aclose()


def usage_of(summary: dict[str, Any]) -> str:
    usage = summary["usage"]
    return usage_line(usage["prompt_tokens"], usage["completion_tokens"], usage["cost"])


def finish_run(prepared: api.PreparedRun, progress: Any, as_json: bool) -> int:
    store = RunStore.open(prepared.store.id)
    report, summary = api.build_report(store)
    summary["elapsed_s"] = round(progress.elapsed, 3)
    summary["items_per_s"] = round(progress.rate, 1)
    if as_json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print_report(report, summary)
        err.print(f"run {store.label}: {progress.done} items in {progress.elapsed:.2f}s ({rate_text(progress.rate)} items/s)")
    if progress.cancelled:
        err.print(f"stopped; `n2f resume {store.label}` finishes it")
        return 130
    if progress.errors:
        raise RuntimeFailure(
            f"{progress.errors} item(s) ended in status error (infrastructure); `n2f resume {store.label}` retries them"
        )
    if progress.budget_reached and store.pending_indices():
        err.print(f"stopped at the budget ({usage_of(summary)}); `n2f resume {store.label}` finishes it")
        return BUDGET_EXIT
    return 0


def print_dry_run(args: argparse.Namespace, config: Any) -> int:
    plan = api.plan_run(args.engine, args.settings, model=args.model or config.default_model, seed=args.seed,
                        limit=args.limit, config=config)
    if args.json:
        print(json.dumps(plan.to_json(), ensure_ascii=False))
        return 0
    cost = ("no price in the config" if plan.cost_min is None else
            f"${plan.cost_min:.4f}" + (f" to ${plan.cost_max:.4f}" if plan.cost_max is not None else ""))
    replies = "-" if plan.completion_tokens_max is None else f"at most {plan.completion_tokens_max:,}"
    for line in (f"dry run: {plan.engine} on {plan.model}, nothing sent",
                 f"items          {plan.items:,}  ({plan.model_steps} model step(s) each)",
                 f"prompt chars   {plan.prompt_chars:,}",
                 f"prompt tokens  ~{plan.prompt_tokens:,}",
                 f"reply tokens   {replies}",
                 f"cost           {cost}",
                 f"({plan.basis})"):
        print(line)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from sessions.config import load_config

    config = load_config()
    if args.dry_run:
        return print_dry_run(args, config)

    async def main() -> tuple[api.PreparedRun, Any]:
        prepared = await api.prepare_run(
            args.engine,
            args.settings,
            model=args.model or config.default_model,
            seed=args.seed,
            limit=args.limit,
            concurrency=config.concurrency if args.concurrency is None else args.concurrency,
            name=args.name,
            config=config,
            max_tokens=args.max_tokens,
            max_cost=args.max_cost,
            service=service_of(args),
        )
        return prepared, await drive(prepared, args.quiet)

    prepared, progress = asyncio.run(main())
    return finish_run(prepared, progress, args.json)


def cmd_items(args: argparse.Namespace) -> int:
    _, _, items = api.build_items(args.engine, args.settings, args.seed)
    write = sys.stdout.write
    for item in items:
        write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
    return 0


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{what} file {path}: {getattr(exc, 'strerror', None) or exc}") from None


def cmd_score(args: argparse.Namespace) -> int:
    import asyncio

    from engines.core import parse_settings

    engine = get_engine(args.engine)
    settings = parse_settings(engine.settings_type, args.settings)
    try:
        data = json.loads(_read(args.item, "item"))
    except json.JSONDecodeError as exc:
        raise InputError(f"item file {args.item}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"item file {args.item}: expected one JSON object as printed by n2f items")
    item = Item.from_json(data)
    if item.engine != engine.name:
        raise InputError(f"item {item.id} is a {item.engine} item, not {engine.name}")
    outputs = asyncio.run(api.run_tool_steps(engine, item, settings, [_read(p, "output") for p in args.output]))
    verdict = engine.score(item, outputs, settings)
    print(json.dumps(verdict.to_json(), ensure_ascii=False))
    return 0


COMMANDS = {"run": cmd_run, "items": cmd_items, "score": cmd_score}
