"""``n2f report``, ``runs`` and ``show`` through the real entry point, stdout a pipe (as ``| cat``):
every cell whole, the head labelled with one unit per number, ``show`` folded unless ``--full``."""

from __future__ import annotations

import io
import json
import math
import re

import pytest
from rich.console import Console
from rich.table import Table

from n2f_tui.plain import print_whole
from n2f_tui.render import _fmt
from test_cli import n2f

LONG_NAME = "robogrid-instruct-block-alien-depth-ten"


def test_report_piped_prints_every_cell_of_every_table_whole():
    n2f("run", "robogrid", "-n", "12", "-q", "--name", LONG_NAME)
    text = n2f("report", LONG_NAME).stdout
    report = json.loads(n2f("report", LONG_NAME, "--json").stdout)
    assert "…" not in text
    lines = text.splitlines()
    for table in report["tables"]:
        for row in table["rows"]:
            cells = [_fmt(cell) for cell in row]
            assert any(all(cell in line for cell in cells) for line in lines), (table["name"], cells)
    head = text.split("Table")[0]
    assert re.search(r"accuracy +\d+\.\d%", head) and re.search(r"\bSVR +\d+\.\d%", head)
    assert "instruct_svr" not in head and "_ci_low" not in head  # labels, not raw metric names


def test_report_head_puts_an_interval_in_its_figure_s_unit():
    n2f("run", "dedc", "-n", "30", "-q", "--name", "tabular")
    head = n2f("report", "tabular").stdout.split("Accuracy:")[0]
    assert re.search(r"accuracy +\d+\.\d% \(95% CI \d+\.\d-\d+\.\d\)", head)
    assert re.search(r"P_dc +\d+\.\d%", head) and not re.search(r"\b0\.\d{3}\b", head)  # no bare fractions


@pytest.mark.parametrize("engine", ["dedc", "logic", "compost", "robogrid", "rgp"])
def test_every_engine_prints_accuracy_as_one_percent_with_its_wilson_interval(engine):
    n2f("run", engine, "-n", "12", "-q", "--name", f"acc-{engine}")
    report = json.loads(n2f("report", f"acc-{engine}", "--json").stdout)
    correct, judged = report["counts"]["correct"], sum(report["counts"][k] for k in ("correct", "wrong", "unparseable"))
    p, z = correct / judged, 1.959964  # Wilson (1927), written out here rather than taken from the code under test
    centre, half = (p + z * z / (2 * judged)), z * math.sqrt(p * (1 - p) / judged + z * z / (4 * judged ** 2))
    low, high = (max(0.0, (centre - half) / (1 + z * z / judged)), min(1.0, (centre + half) / (1 + z * z / judged)))
    head = n2f("report", f"acc-{engine}").stdout.split("\n\n")[0]
    expected = f"{100 * correct / judged:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f})"
    assert re.search(r"accuracy +" + re.escape(expected), head), (expected, head)


def test_runs_piped_prints_ids_names_and_figures_whole():
    n2f("run", "dedc", "-n", "3", "-q", "--name", LONG_NAME + "-one")
    n2f("run", "dedc", "-n", "3", "-q", "--name", LONG_NAME + "-two", "-m", "oracle")
    text = n2f("runs").stdout
    runs = json.loads(n2f("runs", "--json").stdout)
    assert "…" not in text
    for run in runs:
        line = next(line for line in text.splitlines() if run["id"] in line)
        assert run["name"] in line and f"{100 * run['accuracy']:.1f}%" in line and run["created"] in line


def test_a_table_wider_than_the_terminal_prints_plain_and_whole():
    table = Table(title="wide")
    for column in ("identifier", "value"):
        table.add_column(column)
    table.add_row("x" * 70, "96.123456")
    buffer = io.StringIO()
    console = Console(file=buffer, width=40, force_terminal=True, color_system=None)
    print_whole(console, table)
    assert "x" * 70 in buffer.getvalue() and "96.123456" in buffer.getvalue()
    assert "│" not in buffer.getvalue() and console.width == 40
    fits = io.StringIO()
    print_whole(Console(file=fits, width=120, force_terminal=True, color_system=None), table)
    assert "│" in fits.getvalue()  # a table that fits a terminal keeps its box


def test_show_is_compact_by_default_and_full_prints_everything():
    n2f("run", "compost", "-n", "8", "-q", "--name", "kg")
    folded = n2f("show", "kg", "7").stdout
    full = n2f("show", "kg", "7", "--full").stdout
    assert len(folded.splitlines()) < 200 < 2000 < len(full.splitlines())
    assert "Tool result: sparql (step execute)" in folded and "output 2" not in folded.lower()
    assert "more rows (n2f show --full prints all)" in folded
    assert '"rows": [["' not in " ".join(folded.split()) and '"rows": [["' in " ".join(full.split())
    assert "more rows" not in full
    shown = json.loads(n2f("show", "kg", "7", "--json").stdout)
    assert len(shown["record"]["outputs"][1]) > 100_000  # --json keeps everything as it was
