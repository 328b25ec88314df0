"""The ``n2f`` command: headless runs, reports, exports; one clear line on bad input.

asyncio is imported by the commands that run something, so reading a run starts faster.
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from engines import engine_names, get_engine
from engines.core import EngineError, Item
from n2f_tui.cli_study import COMMANDS as STUDY_COMMANDS, add_parsers as add_study_parsers
from n2f_tui.figures import render_report_head
from n2f_tui.itemview import Extent, gold_parts, output_parts, prompt_parts, view_parts
from n2f_tui.plain import print_table
from n2f_tui.render import Fold, render_paper, render_papers_listing, render_report_tables, render_view, safe_text, status_text
from n2f_tui.widgets.style import usage_line
from sessions import api
from sessions.annotations import resolve_annotator
from sessions.errors import InputError, N2FError, RuntimeFailure
from sessions.export import export_records, to_csv, to_jsonl
from sessions.papers import papers_listing
from sessions.store import RunStore, list_run_meta

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def one_line(message: str) -> str:
    """Errors are one line: newlines and control characters from data must not break that."""
    return " ".join(safe_text(message).plain.split())


class UsageError(InputError):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def budget_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="stop taking new items once the run has used N tokens (resumable)")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop taking new items once the run has cost USD (needs the model's [prices] in the config)")


def engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("engine", help=f"one of: {', '.join(engine_names())}")
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V", help="an engine setting")
    p.add_argument("--seed", type=int, default=api.DEFAULT_SEED, help="seed for item construction and the simulator")


def build_parser() -> Parser:
    parser = Parser(prog="n2f", description="Inspect natural-to-formal benchmarks: run, score, report.")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    _running_commands(sub)
    _reading_commands(sub)
    _upkeep_commands(sub)
    add_study_parsers(sub)
    return parser


def _running_commands(sub: Any) -> None:
    """run, items, score: making and judging answers."""
    p = sub.add_parser("run", help="run a benchmark headless")
    engine_options(p)
    p.add_argument("-m", "--model", default=None, help="sim[:k=v,...] | oracle | replay:FILE | local[:PATH.gguf] | openai:MODEL[@URL]")
    p.add_argument("-n", "--limit", type=int, default=None, help="only the first N items")
    p.add_argument("-j", "--concurrency", type=int, default=None, help="items in flight at once")
    p.add_argument("--name", default="", help="a name to refer to the run by")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    budget_options(p)

    p = sub.add_parser("items", help="print the items as JSON lines")
    engine_options(p)

    p = sub.add_parser("score", help="score one item's outputs; prints the verdict as JSON")
    p.add_argument("engine")
    p.add_argument("--item", required=True, help="a file holding one item as printed by n2f items")
    p.add_argument("--output", action="append", required=True, help="a file with the model output of one step")
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V")


def _reading_commands(sub: Any) -> None:
    """papers, runs, report, show, export: reading what is stored."""
    p = sub.add_parser("papers", help="the papers' published figures on record: table, setting, models, metrics")
    p.add_argument("engine", nargs="?", help=f"one of: {', '.join(engine_names())} (default: all)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("runs", help="list the runs in the store")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("report", help="a run's report: the paper's tables")
    p.add_argument("run")
    p.add_argument("--against", nargs="+", default=[], metavar="RUN", help="runs to compare with (e.g. D_c/D_d, deltas)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("show", help="one item of a run: prompt, output, verdict, views")
    p.add_argument("run")
    p.add_argument("item", help="item id or 1-based position")
    p.add_argument("--full", action="store_true", help="every table row, tree node, line and tool result (default: folded)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help="export a run, one record per item")
    p.add_argument("run")
    p.add_argument("--format", choices=("jsonl", "csv"), required=True)
    p.add_argument("--annotations", action="store_true", help="include manual tags and notes")
    p.add_argument("-o", "--out", default=None, help="write to this file instead of stdout")


def _upkeep_commands(sub: Any) -> None:
    """resume, smoke, rescore, bench, tui: finishing, checking and inspecting runs."""
    p = sub.add_parser("resume", help="finish a run that was cut off, retry items in status error")
    p.add_argument("run")
    p.add_argument("-j", "--concurrency", type=int, default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    budget_options(p)

    p = sub.add_parser("smoke", help="a small seeded sample of every engine through one model, one table")
    p.add_argument("-m", "--model", default=None, help="the model to check (as for run)")
    p.add_argument("-n", "--limit", type=int, default=10, help="items per engine (default 10)")
    p.add_argument("--seed", type=int, default=api.DEFAULT_SEED)
    p.add_argument("--engine", dest="engines", action="extend", nargs="+", default=[], metavar="NAME",
                   help="only these engines (default: all)")
    p.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="K=V",
                   help="a setting for every engine that has it (e.g. max_tokens=256)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")

    p = sub.add_parser("rescore", help="re-score stored outputs with the current scorer (no model calls)")
    p.add_argument("run")

    p = sub.add_parser("bench", help="measure each engine's items/s and memory, and concurrency against a slow stub")
    p.add_argument("--engine", dest="engines", action="extend", nargs="+", default=[], metavar="NAME",
                   help=f"only these engines (default: all of {', '.join(engine_names())})")
    p.add_argument("-n", "--limit", type=int, default=None, help="at most N items per engine")
    p.add_argument("--no-concurrency", dest="concurrency", action="store_false", help="skip the concurrency check")
    p.add_argument("--latency", type=float, action="append", default=None, metavar="S",
                   help="the stub's answer time in seconds (repeatable; default 0.2 and 2)")
    p.add_argument("--transport", choices=("aiohttp", "httpx"), action="append", default=None,
                   help="the SDK's HTTP transport to measure (repeatable; default both)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")

    p = sub.add_parser("tui", help="the inspector (what bare `n2f` opens), optionally on one run")
    p.add_argument("run", nargs="?", default=None, help="a run id, name, unique id prefix or `last`")
    p.add_argument("--blind", action="store_true", help="label without seeing automatic tags (b toggles)")
    p.add_argument("--annotator", default=None, help="the name your annotation events carry")


# ----------------------------------------------------------------------- running


def rate_text(rate: float) -> str:
    """Items per second as a person reads them: 2650, 14.2 or 0.14 (a local model), never a bare 0."""
    return f"{rate:.0f}" if rate >= 100 else f"{rate:.1f}" if rate >= 1 else f"{rate:.2f}"


def _announce_cap(prepared: api.PreparedRun) -> None:
    """A local model writes until its reply cap: say which cap this run has before it starts."""
    if prepared.backend.spec.kind == "local":
        cap = getattr(prepared.runner.settings, "max_tokens", None)
        err.print(f"local model: replies capped at {cap} tokens (-s max_tokens=N to change)")


async def _drive(prepared: api.PreparedRun, quiet: bool) -> Any:
    """Run with a progress bar polled on a timer; Ctrl-C/SIGTERM stop cleanly for resume.

    A stop cancels the items in flight (``Runner.cancel``), so it takes effect between two
    tokens of a local model or at once for a remote one, not when the reply is done.
    """
    import asyncio

    runner = prepared.runner
    _announce_cap(prepared)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, runner.cancel)
        except (NotImplementedError, RuntimeError):
            pass
    task = asyncio.create_task(runner.run())
    try:
        if quiet or not err.is_terminal and not err.file.isatty():
            return await task
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} items/s  acc {task.fields[acc]:.1%}  err {task.fields[errors]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=err, transient=False) as bar:
            bar_id = bar.add_task(prepared.store.label, total=None, rate=rate_text(0.0), acc=0.0, errors=0)
            while not task.done():
                p = runner.progress
                bar.update(bar_id, total=p.total, completed=p.done, rate=rate_text(p.rate), acc=p.accuracy, errors=p.errors)
                await asyncio.wait({task}, timeout=0.1)
            p = runner.progress
            bar.update(bar_id, total=p.total, completed=p.done, rate=rate_text(p.rate), acc=p.accuracy, errors=p.errors)
        return await task
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass
        prepared.store.close()
        await prepared.backend.aclose()


def usage_of(summary: dict[str, Any]) -> str:
    usage = summary["usage"]
    return usage_line(usage["prompt_tokens"], usage["completion_tokens"], usage["cost"])


def _finish_run(prepared: api.PreparedRun, progress: Any, as_json: bool) -> int:
    store = RunStore.open(prepared.store.id)
    report, summary = api.build_report(store)
    summary["elapsed_s"] = round(progress.elapsed, 3)
    summary["items_per_s"] = round(progress.rate, 1)
    if as_json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        _print_report(report, summary)
        err.print(f"run {store.label}: {progress.done} items in {progress.elapsed:.2f}s ({rate_text(progress.rate)} items/s)")
    if progress.cancelled:
        err.print(f"stopped; `n2f resume {store.label}` finishes it")
        return 130
    if progress.budget_reached and store.pending_indices():
        err.print(f"stopped at the budget ({usage_of(summary)}); `n2f resume {store.label}` finishes it")
    if progress.errors:
        raise RuntimeFailure(
            f"{progress.errors} item(s) ended in status error (infrastructure); `n2f resume {store.label}` retries them"
        )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from sessions.config import load_config

    config = load_config()

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
        )
        return prepared, await _drive(prepared, args.quiet)

    prepared, progress = asyncio.run(main())
    return _finish_run(prepared, progress, args.json)


def cmd_resume(args: argparse.Namespace) -> int:
    import asyncio

    async def main() -> tuple[api.PreparedRun, Any]:
        prepared = await api.prepare_resume(args.run, concurrency=args.concurrency, max_tokens=args.max_tokens,
                                            max_cost=args.max_cost)
        return prepared, await _drive(prepared, args.quiet)

    prepared, progress = asyncio.run(main())
    return _finish_run(prepared, progress, args.json)


def cmd_tui(args: argparse.Namespace) -> int:
    """``n2f`` and ``n2f tui [RUN]``: the inspector; with no runs yet it starts the offline demo live."""
    run = getattr(args, "run", None)
    if run:
        run = RunStore.open(run).id  # a bad reference is one clear line and exit status 2, before the screen
    annotator = resolve_annotator(getattr(args, "annotator", None))
    from n2f_tui.app import N2FApp

    N2FApp(run=run, annotator=annotator, blind=getattr(args, "blind", False)).run()
    return 0


# ---------------------------------------------------------------------- the rest


def cmd_items(args: argparse.Namespace) -> int:
    _, _, items = api.build_items(args.engine, args.settings, args.seed)
    write = sys.stdout.write
    for item in items:
        write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
    return 0


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{what} file {path}: {exc.strerror or exc}") from None


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


def cmd_runs(args: argparse.Namespace) -> int:
    from sessions.config import load_config
    from sessions.describe import describe_run

    config = load_config()
    metas = list_run_meta()
    rows = []
    for meta in metas:
        store = RunStore(Path(meta["_folder"]))
        summary = store.summary()
        rows.append({
            "id": meta["id"], "name": meta.get("name", ""), "engine": meta["engine"], "model": meta.get("model", ""),
            "settings": meta.get("settings", {}), "changes": describe_run(meta).text,
            "done": summary["done"] + summary["errors"],
            "total": meta.get("total", 0), "accuracy": summary["accuracy"], "status": meta.get("status", ""),
            "created": meta.get("created", ""), "group": meta.get("group", ""),
            "usage": summary["usage"].to_json(api.price_of(store, config)),
        })
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        err.print("no runs yet; start one with `n2f run dedc`")
        return 0
    table = Table(title="runs")
    for column in ("id", "name", "engine", "model", "changes", "done", "accuracy", "tokens", "cost", "status", "created"):
        table.add_column(column, justify="right" if column in ("tokens", "cost") else "left")
    for r in rows:
        acc = "-" if r["accuracy"] is None else f"{100 * r['accuracy']:.2f}%"
        usage = r["usage"]
        tokens = f"{usage['total_tokens']:,}" if usage["total_tokens"] else "-"
        cost = "-" if usage["cost"] is None else f"${usage['cost']:.4f}"
        table.add_row(*(safe_text(v) for v in (r["id"], r["name"], r["engine"], r["model"], r["changes"],
                                               f"{r['done']}/{r['total']}", acc, tokens, cost, r["status"], r["created"])))
    print_table(out, table)
    return 0


def _print_report(report: Any, summary: dict[str, Any]) -> None:
    out.print(Panel(render_report_head(summary), title="report", title_align="left"))
    for renderable in render_report_tables(report) + render_paper(summary.get("paper")):
        print_table(out, renderable)


def cmd_report(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run)
    against = [RunStore.open(ref) for ref in args.against]
    report, summary = api.build_report(store, against)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        _print_report(report, summary)
    return 0


SHOW_FOLDED = Extent(Fold(rows=20, lines=40, hint="n2f show --full prints all"))


def cmd_show(args: argparse.Namespace) -> int:
    """One item; long tables, trees, texts and tool results folded unless ``--full``."""
    store = RunStore.open(args.run)
    index, _ = api.find_item(store, args.item)
    detail = api.item_detail(store, index)
    record, verdict = detail.record, detail.verdict
    if args.json:
        print(json.dumps({
            "run": store.id, "item": detail.item.to_json(), "record": record, "prompts": detail.prompts,
            "verdict": verdict.to_json() if verdict else None, "annotations": detail.annotations,
        }, ensure_ascii=False))
        return 0
    extent = Extent(None, cap=False) if args.full else SHOW_FOLDED
    out.print(Panel(safe_text(detail.item.id), title=f"{store.label} item {index + 1}/{store.total}",
                    subtitle=status_text(detail.status)))
    parts = prompt_parts(detail, extent) + output_parts(list((record or {}).get("outputs", [])), detail.prompts, extent)
    parts += gold_parts(detail.item.gold, extent)
    for part in parts:
        out.print(part)
    if record and record.get("error"):
        out.print(Panel(safe_text(record["error"]), title="error", style="yellow"))
    if verdict:
        for tag in verdict.tags:
            out.print(safe_text(f"[{tag.code}] ", style="bold red") + safe_text(tag.evidence))
        for view in verdict.views:
            if view.kind == "diff":
                out.print(render_view(view))
        for part in view_parts(verdict.views, extent):
            print_table(out, part)
    for note in detail.annotations:
        out.print(safe_text(f"{note['time']} {note['kind']} {note.get('code', '')} {note.get('text', '')}", style="italic"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run)
    records = export_records(store, with_annotations=args.annotations)
    text = to_jsonl(records) if args.format == "jsonl" else to_csv(records)
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 0


def cmd_rescore(args: argparse.Namespace) -> int:
    store, changed = api.rescore(args.run)
    err.print(f"run {store.label}: rescored {changed['rescored']} item(s), {changed['changed']} changed, "
              f"{changed['skipped']} in status error left for resume")
    return 0


def _engine_table(report: Any) -> Table:
    from sessions.bench import FIGURES_NOTE

    table = Table(title="engines: full pipeline, sim model at zero latency", caption=FIGURES_NOTE)
    for column in ("engine", "settings", "items", "seconds", "items_per_s", "peak_heap_mb", "max_rss_mb"):
        table.add_column(column, justify="left" if column in ("engine", "settings") else "right")
    for f in report.engines:
        table.add_row(f.engine, " ".join(f.settings) or "-", str(f.items), f"{f.seconds:.2f}",
                      f"{f.items_per_s:,.0f}", f"{f.peak_heap_mb:.1f}", f"{f.max_rss_mb:.0f}")
    return table


def _concurrency_table(report: Any) -> Table:
    table = Table(title="concurrency: openai backend (SDK transport) against a loopback stub answering after a latency",
                  caption="efficiency = calls/s / (j / latency)")
    for column in ("transport", "latency", "-j", "items", "seconds", "calls/s", "ideal/s", "efficiency"):
        table.add_column(column, justify="left" if column == "transport" else "right")
    for c in report.concurrency:
        table.add_row(c.transport, f"{c.latency_s * 1000:.0f} ms", str(c.concurrency), str(c.items), f"{c.seconds:.2f}",
                      f"{c.calls_per_s:.1f}", f"{c.ideal_per_s:.0f}", f"{100 * c.efficiency:.1f}%")
    return table


def cmd_smoke(args: argparse.Namespace) -> int:
    import asyncio

    from sessions.config import load_config
    from sessions.smoke import run_smoke

    config = load_config()
    group, rows = asyncio.run(run_smoke(args.model or config.default_model, args.limit, args.seed, args.engines, config,
                                        args.settings))
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
        print_table(out, table)
    errors = sum(r.errors for r in rows)
    if errors:
        raise RuntimeFailure(f"{errors} item(s) ended in status error (infrastructure); `n2f resume RUN` retries them")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from sessions.bench import run_bench

    report = run_bench(args.engines, args.limit, args.concurrency, latencies=args.latency, transports=args.transport)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
        return 0
    print_table(out, _engine_table(report))
    if report.concurrency:
        print_table(out, _concurrency_table(report))
    return 0


def cmd_papers(args: argparse.Namespace) -> int:
    if args.engine is not None and args.engine not in engine_names():
        raise InputError(f"unknown engine {args.engine!r}; one of: {', '.join(engine_names())}")
    entries = [e for name in ([args.engine] if args.engine else engine_names()) for e in papers_listing(name)]
    if args.json:
        print(json.dumps(entries, ensure_ascii=False))
    else:
        print_table(out, render_papers_listing(entries))
    return 0


COMMANDS = {
    "papers": cmd_papers, "run": cmd_run, "items": cmd_items, "score": cmd_score, "runs": cmd_runs, "report": cmd_report,
    "show": cmd_show, "export": cmd_export, "resume": cmd_resume, "rescore": cmd_rescore, "bench": cmd_bench,
    "smoke": cmd_smoke, "tui": cmd_tui, **STUDY_COMMANDS,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            return cmd_tui(args)
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
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    entry()
