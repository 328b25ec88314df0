"""Tables as a paper takes them: Markdown, LaTeX (booktabs) or CSV, for ``report`` and ``agreement --format``.

Every table is an ``engines.core.Table`` (name, title, columns, rows, note), so a report's
tables and the agreement figures print the same way. Cells are written as they are
(floats with four decimals), escaped for the format: ``|`` in Markdown; LaTeX's special
characters; CSV quoting by the ``csv`` module. CSV holds several tables as blocks
separated by a blank line, each block a header row and its rows, with the table's name as
the first column so that a block read alone still says what it is.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Callable, Sequence

from engines.core import Table

FORMATS = ("text", "md", "latex", "csv")
LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def markdown(tables: Sequence[Table]) -> str:
    out = []
    for table in tables:
        def row(cells: Sequence[Any]) -> str:
            return "| " + " | ".join(cell(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

        lines = [f"**{_heading(table)}**", "", row(table.columns), "|" + "|".join("---" for _ in table.columns) + "|"]
        lines += [row(r) for r in table.rows]
        if table.note:
            lines += ["", f"*{table.note}*"]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex(tables: Sequence[Table]) -> str:
    out = []
    for table in tables:
        def row(cells: Sequence[Any]) -> str:
            return " & ".join(latex_escape(cell(c)) for c in cells) + r" \\"

        lines = [r"\begin{table}[ht]", r"\centering", rf"\caption{{{latex_escape(_heading(table))}}}",
                 rf"\begin{{tabular}}{{{'l' * len(table.columns)}}}", r"\toprule", row(table.columns), r"\midrule"]
        lines += [row(r) for r in table.rows]
        lines.append(r"\bottomrule")
        lines.append(r"\end{tabular}")
        if table.note:
            lines.append(rf"\par\footnotesize {latex_escape(table.note)}")
        lines.append(r"\end{table}")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def csv_text(tables: Sequence[Table]) -> str:
    blocks = []
    for table in tables:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["table", *table.columns])
        writer.writerows([table.name, *(cell(c) for c in r)] for r in table.rows)
        blocks.append(buffer.getvalue())
    return "\n".join(blocks)


def report_tables(report: Any, summary: dict[str, Any]) -> list[Table]:
    """A report's tables after one that names the run: engine, model, items, accuracy."""
    head = Table(name="Run", title=f"run {summary.get('name') or summary['run']}",
                 columns=["run", "engine", "model", "n", "accuracy"],
                 rows=[[summary.get("name") or summary["run"], summary["engine"], summary["model"], summary["n"],
                        summary["accuracy"]]])
    return [head, *report.tables]


WRITERS: dict[str, Callable[[Sequence[Table]], str]] = {"md": markdown, "latex": latex, "csv": csv_text}


def _heading(table: Table) -> str:
    return f"{table.name}: {table.title}" if table.name != table.title else table.title
