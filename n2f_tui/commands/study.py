"""The annotation-study commands: ``pack``, ``unpack``, ``study``, ``annotations`` and ``agreement``.

Their output is plain columns that are never cut (scripts and pipes read them); ``--json``
prints the same figures as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from n2f_tui.commands import summary
from sessions.reports.figures import figure, undefined_note
from sessions.study.annotations import resolve_annotator
from sessions.errors import InputError
from sessions.store.runs import RunStore


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("pack", help=summary("pack"))
    p.add_argument("run")
    p.add_argument("-o", "--out", required=True, metavar="FILE")
    p = sub.add_parser("unpack", help=summary("unpack"))
    p.add_argument("file")

    p = sub.add_parser("study", help=summary("study"))
    study = p.add_subparsers(dest="study_command", required=True)
    c = study.add_parser("create", help="draw the study's items (the same options give the same items anywhere)")
    c.add_argument("run")
    c.add_argument("--size", type=int, required=True, help="how many items")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--stratify", default="", metavar="KEY", help="tag, status or an item field (e.g. graph_type)")
    c.add_argument("--only", default="all", choices=("all", "wrong"), help="wrong: only items not judged correct")
    c.add_argument("--replace", action="store_true", help="replace the run's study (labels are kept)")
    s = study.add_parser("show", help="the study's items and each annotator's progress")
    s.add_argument("run")
    s.add_argument("--json", action="store_true")

    p = sub.add_parser("annotations", help=summary("annotations"))
    ann = p.add_subparsers(dest="annotations_command", required=True)
    e = ann.add_parser("export", help="the events as JSON lines (one person's with --annotator)")
    e.add_argument("run")
    e.add_argument("--annotator", default=None)
    e.add_argument("-o", "--out", default=None, help="write to a file instead of stdout")
    i = ann.add_parser("import", help="merge events from a file (events already here are skipped)")
    i.add_argument("run")
    i.add_argument("file")
    i.add_argument("--force", action="store_true",
                   help="also import events made on other outputs than this run's (marked forced)")
    t = ann.add_parser("settle", help="an adjudicator's final labels for an item (no code: no tag)")
    t.add_argument("run")
    t.add_argument("item", help="item id or 1-based position")
    t.add_argument("codes", nargs="*")
    t.add_argument("--annotator", default=None, help="the adjudicator (default: config, else login name)")

    p = sub.add_parser("agreement", help=summary("agreement"))
    p.add_argument("run")
    p.add_argument("--annotators", default="", help="comma-separated names (default: everyone who reviewed)")
    p.add_argument("--against", default=None, metavar="NAME", help="measure the tagger against this annotator")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", default="text", choices=("text", "md", "latex", "csv"),
                   help="the tables for a paper: Markdown, LaTeX (booktabs) or CSV")


def cmd_study(args: argparse.Namespace) -> int:
    from sessions.study import sample as studies
    from sessions.study.labels import store_labels

    store = RunStore.open(args.run)
    if args.study_command == "create":
        created, written = studies.create(store, args.size, args.seed, args.stratify, args.only, args.replace)
        print(f"study on run {store.label}: {studies.describe(created)}" + ("" if written else " (already there)"))
        if created.strata:
            print("strata: " + "  ".join(f"{k} {v}" for k, v in created.strata.items()))
        return 0
    study = studies.load(store)
    if study is None:
        raise InputError(f"run {store.label} has no study (`n2f study create {store.label} --size N`)")
    progress = study.progress(store_labels(store))
    if args.json:
        print(json.dumps({**vars(study), "progress": progress}, ensure_ascii=False))
        return 0
    print(f"study on run {store.label}: {studies.describe(study)}")
    for name, done in progress.items():
        print(f"  {name}: {done}/{len(study.items)} labelled")
    print("items: " + " ".join(study.items))
    return 0


def cmd_annotations(args: argparse.Namespace) -> int:
    store = RunStore.open(args.run)
    if args.annotations_command == "export":
        log = store.annotations()
        name = resolve_annotator(args.annotator) if args.annotator else None
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in log.events(annotator=name))
        write_out(text, args.out)
        return 0
    if args.annotations_command == "import":
        path = Path(args.file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
        return import_events(store, lines, str(path), args.force)
    return settle(store, args)


def import_events(store: RunStore, lines: list[str], source: str, force: bool) -> int:
    """``annotations import``: refused when events were made on other outputs, unless ``force``."""
    from sessions.store.fingerprint import check_import, output_hashes, refusal

    check = check_import(lines, output_hashes(store))
    if check.foreign and not force:
        raise refusal(check, store.label, source)
    new = store.annotations().import_lines(check.lines, set(store.item_ids()), source)
    total = sum(1 for line in lines if line.strip())
    print(f"imported {new} new event(s) into run {store.label} ({total - new} already there)"
          + (f"; {check.foreign_events} made on other outputs, marked forced" if check.foreign else ""))
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    from sessions.store.pack import pack_run

    store, fingerprint, size = pack_run(args.run, Path(args.out))
    print(f"packed run {store.label} ({store.total} items, fingerprint {fingerprint}) into {args.out} ({size:,} bytes)")
    return 0


def cmd_unpack(args: argparse.Namespace) -> int:
    from sessions.store.pack import unpack_run

    done = unpack_run(Path(args.file))
    if done.installed:
        print(f"installed run {done.label} ({done.run}, fingerprint {done.fingerprint})")
    else:
        print(f"run {done.label} is here already with the same items and outputs; "
              f"took in {done.merged} new annotation event(s)")
    return 0


def settle(store: RunStore, args: argparse.Namespace) -> int:
    from sessions import api
    from sessions.study.labels import store_labels

    _, item = api.find_item(store, args.item)
    engine, _ = api.run_settings(store)
    names = {t.code: t.label for t in engine.taxonomy()}
    labels = store_labels(store)
    known = {**labels.names, **names}
    for code in args.codes:
        if code not in known and not any(code in v.auto for v in labels.items.values()):
            raise InputError(f"unknown tag code {code!r} (the engine's codes: {', '.join(names)})")
    log = store.annotations(resolve_annotator(args.annotator))
    log.add(item.id, "settle", codes={code: known.get(code, code) for code in args.codes})
    print(f"settled {item.id}: {', '.join(args.codes) or 'no tag'}")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from sessions.study.agreement import agreement_report

    store = RunStore.open(args.run)
    names = [n.strip() for n in args.annotators.split(",") if n.strip()]
    report = agreement_report(store, names or None, args.against)
    if args.json:
        print(json.dumps({"run": store.id, **report.to_json()}, ensure_ascii=False))
        return 0
    if args.format != "text":
        from n2f_tui.agreement_tables import agreement_tables
        from n2f_tui.table_formats import WRITERS

        sys.stdout.write(WRITERS[args.format](agreement_tables(report)))
        return 0
    sys.stdout.write(agreement_text(report))
    return 0


def write_out(text: str, path: str | None) -> None:
    if not path:
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def columns(rows: list[list[str]]) -> str:
    """Left-aligned columns as wide as their widest cell: nothing is ever cut."""
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n" for row in rows)


def agreement_text(report: Any) -> str:
    """The agreement report as plain text (the inspector's ``A`` shows the same figures)."""
    out = []
    method = "Cohen's kappa" if len(report.annotators) == 2 else "Fleiss' kappa"
    if len(report.annotators) < 2:
        out.append(f"annotators: {', '.join(report.annotators) or 'none'} (agreement needs two who reviewed)\n")
    else:
        out.append(f"annotators {', '.join(report.annotators)}: {report.n} item(s) reviewed by all; {method}, "
                   "95% bootstrap intervals\n")
        rows = [["code", "n", "agree %", "kappa"]]
        for row in report.tags + ([report.overall] if report.overall else []):
            rows.append([row.code if row.code != "*" else "all (pooled)", str(row.n),
                         figure(row.percent.value, row.percent.ci, True), figure(row.kappa.value, row.kappa.ci)])
        out.append(columns(rows))
        out.append(undefined_note(row.kappa for row in report.tags + ([report.overall] if report.overall else [])))
        out.append(f"identical label sets (% of {report.n}): {figure(report.identical.value, report.identical.ci, True)}\n")
        for pair in report.pairs:
            out.append(f"{pair.a} vs {pair.b}: n {pair.n}, kappa {figure(pair.kappa.value, pair.kappa.ci)}, "
                       f"disagree on {len(pair.disagreeing)}: {' '.join(pair.disagreeing)}\n")
    out.append(alpha_text(report))
    out.append(f"adjudication queue: {len(report.queue)} item(s) {' '.join(report.queue)}\n")
    out.append(f"tagger quality against {report.reference}: {report.quality_n} item(s)\n")
    rows = [["code", "tp", "fp", "fn", "precision", "recall", "F1"]]
    for q in report.quality:
        if q.tp + q.fp + q.fn:
            rows.append([q.code, str(q.tp), str(q.fp), str(q.fn), figure(q.precision, q.precision_ci),
                         figure(q.recall, q.recall_ci), figure(q.f1, q.f1_ci)])
    out.append(columns(rows))
    out.append("reviewed: " + ", ".join(f"{k} {v}" for k, v in report.progress.items()) + "\n")
    if report.study_size:
        out.append(f"study ({report.study_size} items): " + ", ".join(f"{k} {v}" for k, v in report.study.items()) + "\n")
    return "".join(out)


def alpha_text(report: Any) -> str:
    """Krippendorff's alpha per code and pooled, with the items and labels behind each."""
    if report.alpha_overall is None:
        return ""
    head = (f"Krippendorff's alpha (nominal) of {', '.join(report.annotators)} over every item two or more of them "
            "reviewed, 95% bootstrap intervals\n")
    rows = [["code", "items", "labels", "alpha"]]
    for a in report.alpha + [report.alpha_overall]:
        rows.append([a.code if a.code != "*" else "all (pooled)", str(a.items), str(a.values), figure(a.alpha, a.ci)])
    forced = f"{report.forced} label event(s) were imported with --force on other outputs\n" if report.forced else ""
    return head + columns(rows) + forced


COMMANDS = {"pack": cmd_pack, "unpack": cmd_unpack, "study": cmd_study, "annotations": cmd_annotations, "agreement": cmd_agreement}
