"""The agreement report (``sessions.study.agreement``) as tables, for ``n2f agreement --format md|latex|csv``."""

from __future__ import annotations

from typing import Any

from engines.core import Table
from sessions.reports.figures import figure, undefined_note


def _interval(ci: Any) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def alpha_table(report: Any) -> Table | None:
    rows = [[a.code if a.code != "*" else "all (pooled)", a.items, a.values, a.alpha, _interval(a.ci)]
            for a in report.alpha + ([report.alpha_overall] if report.alpha_overall else [])]
    if not rows:
        return None
    return Table(name="Krippendorff's alpha", title=f"Krippendorff's alpha (nominal) of {', '.join(report.annotators)}",
                 columns=["code", "items", "labels", "alpha", "95% CI"], rows=rows,
                 note="every item two or more of them labelled; 95% bootstrap intervals over items")


def kappa_table(report: Any) -> Table | None:
    if len(report.annotators) < 2 or not report.tags:
        return None
    method = "Cohen's kappa" if len(report.annotators) == 2 else "Fleiss' kappa"
    shown = report.tags + ([report.overall] if report.overall else [])
    rows = [[row.code if row.code != "*" else "all (pooled)", row.n, figure(row.percent.value, row.percent.ci, True),
             figure(row.kappa.value, row.kappa.ci)] for row in shown]
    return Table(name="Agreement", title=f"{method} of {', '.join(report.annotators)} on the {report.n} item(s) all reviewed",
                 columns=["code", "n", "agree %", "kappa (95% CI)"], rows=rows,
                 note=undefined_note(row.kappa for row in shown)
                 + f"identical label sets: {figure(report.identical.value, report.identical.ci, True)} %")


def quality_table(report: Any) -> Table:
    rows = [[q.code, q.tp, q.fp, q.fn, figure(q.precision, q.precision_ci), figure(q.recall, q.recall_ci),
             figure(q.f1, q.f1_ci)] for q in report.quality if q.tp + q.fp + q.fn]
    return Table(name="Tagger quality", title=f"Automatic tags against {report.reference} ({report.quality_n} item(s))",
                 columns=["code", "tp", "fp", "fn", "precision", "recall", "F1"], rows=rows,
                 note=f"adjudication queue: {len(report.queue)} item(s)")


def agreement_tables(report: Any) -> list[Table]:
    return [t for t in (alpha_table(report), kappa_table(report), quality_table(report)) if t is not None]
