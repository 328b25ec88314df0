"""papers, runs, report, show, export: reading what is stored (never the runner)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.panel import Panel
from rich.table import Table

from engines import engine_names
from n2f_tui.commands import summary
from n2f_tui.commands.common import err, out, print_report
from n2f_tui.itemview import Extent, gold_parts, output_parts, prompt_parts, view_parts
from n2f_tui.plain import print_whole
from n2f_tui.render import Fold, render_papers_listing, render_view, safe_text, status_text
from sessions import api
from sessions.errors import InputError
from sessions.reports.figures import proportion
from sessions.reports.papers import papers_listing
from sessions.store.index import damaged_runs, list_run_meta
from sessions.store.runs import RunStore
from sessions.run.usage import Usage

EXPORT_FORMATS = ("jsonl", "csv", "parquet", "inspect")


def add_parsers(sub: Any) -> None:
    """papers, runs, report, show, export."""
    p = sub.add_parser("papers", help=summary("papers"))
    p.add_argument("engine", nargs="?", help="an engine's name (default: all; a name not known lists the known ones)")
    # not listed here: listing the engines imports them all, and this group's parsers are built for `n2f runs` too
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("runs", help=summary("runs"))
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("report", help=summary("report"))
    p.add_argument("run")
    p.add_argument("--against", nargs="+", default=[], metavar="RUN",
                   help="runs to compare with (e.g. D_c/D_d, deltas; McNemar's test and paired intervals on matched items)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", default="text", choices=("text", "md", "latex", "csv"),
                   help="the tables for a paper: Markdown, LaTeX (booktabs) or CSV")

    p = sub.add_parser("show", help=summary("show"))
    p.add_argument("run")
    p.add_argument("item", help="item id or 1-based position")
    p.add_argument("--full", action="store_true", help="every table row, tree node, line and tool result (default: folded)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("export", help=summary("export"))
    p.add_argument("runs", nargs="+", metavar="RUN", help="one or more runs: their rows go to one file, a run column each")
    p.add_argument("--format", choices=EXPORT_FORMATS, required=True,
                   help="jsonl | csv | parquet (the [parquet] extra) | inspect (the [inspect] extra: a .eval log)")
    p.add_argument("--annotations", action="store_true",
                   help="add each annotator's labels, the settled labels and the manual tag changes")
    p.add_argument("-o", "--out", default=None, help="write to this file (needed for parquet and inspect); default stdout")



def cmd_papers(args: argparse.Namespace) -> int:
    if args.engine is not None and args.engine not in engine_names():
        raise InputError(f"unknown engine {args.engine!r}; one of: {', '.join(engine_names())}")
    entries = [e for name in ([args.engine] if args.engine else engine_names()) for e in papers_listing(name)]
    if args.json:
        print(json.dumps(entries, ensure_ascii=False))
    else:
        print_whole(out, render_papers_listing(entries))
    return 0



def cmd_runs(args: argparse.Namespace) -> int:
    from sessions.config import reading_config
    from sessions.reports.describe import describe_run

    config, problem = reading_config()
    if problem:
        err.print(f"n2f: warning: {problem} (ignored here: listing runs does not need it; costs need its prices)")
    metas = list_run_meta()
    rows = []
    for meta in metas:
        store = RunStore(Path(meta["_folder"]))
        summary = store.summary()
        rows.append({
            "id": meta["id"], "name": meta.get("name", ""), "engine": meta["engine"], "model": meta.get("model", ""),
            "settings": meta.get("settings", {}), "changes": describe_run(meta).text,
            "done": summary.finished,
            "total": meta.get("total", 0), "accuracy": summary.accuracy, "status": meta.get("status", ""),
            "created": meta.get("created", ""), "group": meta.get("group", ""),
            "usage": summary.usage.to_json(api.price_of(store, config)), "damage": store.damage,
        })
    rows += [{"id": d["id"], "name": "", "engine": "?", "model": "", "settings": {}, "changes": "", "done": 0, "total": 0,
              "accuracy": None, "status": "damaged", "created": "", "group": "", "usage": Usage().to_json(None),
              "damage": d["damage"]} for d in damaged_runs()]
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
        acc = proportion(r["accuracy"])
        usage = r["usage"]
        tokens = f"{usage['total_tokens']:,}" if usage["total_tokens"] else "-"
        cost = "-" if usage["cost"] is None else f"${usage['cost']:.4f}"
        status = f"{r['status']}: {r['damage']}" if r["damage"] else r["status"]
        table.add_row(*(safe_text(v) for v in (r["id"], r["name"], r["engine"], r["model"], r["changes"],
                                               f"{r['done']}/{r['total']}", acc, tokens, cost, status, r["created"])))
    print_whole(out, table)
    return 0



def cmd_report(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run)
    against = [RunStore.open(ref) for ref in args.against]
    report, summary = api.build_report(store, against)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    elif args.format != "text":
        from n2f_tui.table_formats import WRITERS, report_tables

        sys.stdout.write(WRITERS[args.format](report_tables(report, summary)))
    else:
        print_report(report, summary)
    return 0


SHOW_FOLDED = Extent(Fold(rows=20, lines=40, hint="n2f show --full prints all"), marks=False)


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
    extent = Extent(None, cap=False, marks=False) if args.full else SHOW_FOLDED
    print_whole(out, Panel(safe_text(detail.item.id), title=f"{store.label} item {index + 1}/{store.total}",
                           subtitle=status_text(detail.status)))
    parts = prompt_parts(detail, extent) + output_parts(list((record or {}).get("outputs", [])), detail.prompts, extent)
    parts += gold_parts(detail.item.gold, extent)
    if record and record.get("error"):
        parts.append(Panel(safe_text(record["error"]), title="error", style="yellow"))
    if verdict:
        parts += [safe_text(f"[{tag.code}] ", style="bold red") + safe_text(tag.evidence) for tag in verdict.tags]
        parts += [render_view(view, marks=False) for view in verdict.views if view.kind == "diff"]
        parts += view_parts(verdict.views, extent)
    for part in parts:
        print_whole(out, part)
    for note in detail.annotations:
        print_whole(out, safe_text(f"{note['time']} {note['kind']} {note.get('code', '')} {note.get('text', '')}",
                                   style="italic"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Rows are written as they are read (``sessions.reports.export``); parquet and inspect write to a file."""
    from sessions.reports.export import export_rows, plan_columns
    from sessions.reports.export_formats import csv_lines, jsonl_lines, write_parquet, write_text

    if args.format in ("parquet", "inspect") and not args.out:
        raise InputError(f"--format {args.format} writes a file: give it with -o FILE")
    stores = [RunStore.open(ref) for ref in args.runs]
    if args.format == "inspect":
        if len(stores) > 1:
            raise InputError("an Inspect log holds one run: export each run to its own .eval file")
        from sessions.reports.inspect_log import write_inspect_log

        write_inspect_log(stores[0], args.out)
        return 0
    columns = plan_columns(stores, annotations=args.annotations)
    rows = export_rows(stores, columns)
    if args.format == "parquet":
        write_parquet(rows, columns, args.out)
    else:
        write_text(jsonl_lines(rows) if args.format == "jsonl" else csv_lines(rows, columns), args.out, sys.stdout)
    return 0


COMMANDS = {"papers": cmd_papers, "runs": cmd_runs, "report": cmd_report, "show": cmd_show, "export": cmd_export}
