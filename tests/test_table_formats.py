"""``--format md|latex|csv`` of a report and of an agreement, through the real entry point."""

from __future__ import annotations

import csv
import io
import json

import pytest

from sessions.store.runs import RunStore
from cli_support import n2f as cli_n2f


def n2f(*args: str) -> str:
    return cli_n2f(*args, check=True).stdout


def markdown_tables(text: str) -> dict[str, list[list[str]]]:
    """Bold heading -> the table's rows (header first), read back from the Markdown."""
    tables, name = {}, None
    for line in text.splitlines():
        if line.startswith("**") and line.endswith("**"):
            name = line.strip("*")
            tables[name] = []
        elif line.startswith("|") and not set(line) <= set("|-"):
            tables[name].append([cell.strip() for cell in line.strip("|").split(" | ")])
    return tables


@pytest.fixture
def two_annotators():
    n2f("run", "dedc", "-m", "sim:error_rate=0.7", "-n", "30", "--name", "fmt", "-q")
    store = RunStore.open("fmt")
    ids = store.item_ids()
    wrong = [ids[i] for i, s in sorted(store.summaries().items()) if s["status"] == "wrong"][:8]
    for name in ("ada", "bob"):
        log = store.annotations(name)
        for position, item_id in enumerate(wrong):
            code = "variable_misuse" if name == "bob" and position % 3 == 0 else "omission"
            log.add(item_id, "tag_add", code=code, label=code, blind=True)
            log.add(item_id, "reviewed", blind=True)
    return store


def test_report_tables_as_markdown_latex_and_csv(two_annotators):
    summary = json.loads(n2f("report", "fmt", "--json"))
    md = markdown_tables(n2f("report", "fmt", "--format", "md"))
    assert md["Run: run fmt"][1] == ["fmt", "dedc", "sim:error_rate=0.7", "30", f"{summary['accuracy']:.4f}"]
    table3 = next(t for t in summary["tables"] if t["name"] == "Table 3")
    rows = md[f"Table 3: {table3['title']}"]
    assert rows[0] == table3["columns"] and len(rows) == len(table3["rows"]) + 1
    assert [r[1] for r in rows[1:]] == [str(r[1]) for r in table3["rows"]]

    latex = n2f("report", "fmt", "--format", "latex")
    assert latex.count(r"\begin{tabular}") == len(summary["tables"]) + 1 == latex.count(r"\bottomrule")
    assert r"\caption{Table 3: " in latex and r"variable\_misuse" in latex and "variable_misuse" not in latex
    assert " & ".join(c.replace("_", r"\_").replace("%", r"\%") for c in table3["columns"]) + r" \\" in latex

    blocks = [list(csv.reader(io.StringIO(b))) for b in n2f("report", "fmt", "--format", "csv").split("\n\n")]
    by_name = {b[1][0]: b for b in blocks if len(b) > 1}
    assert by_name["Table 3"][0] == ["table", *table3["columns"]] and len(by_name["Table 3"]) == len(table3["rows"]) + 1


def test_agreement_tables_as_markdown_and_latex(two_annotators):
    report = json.loads(n2f("agreement", "fmt", "--json"))
    md = markdown_tables(n2f("agreement", "fmt", "--format", "md"))
    alpha = md["Krippendorff's alpha: Krippendorff's alpha (nominal) of ada, bob"]
    assert alpha[0] == ["code", "items", "labels", "alpha", "95% CI"]
    expected = {a["code"]: a for a in report["alpha"]}
    for row in alpha[1:-1]:
        assert float(row[3]) == pytest.approx(expected[row[0]]["alpha"], abs=5e-5) and row[1] == "8" and row[2] == "16"
    assert alpha[-1][0] == "all (pooled)"
    assert float(alpha[-1][3]) == pytest.approx(report["alpha_overall"]["alpha"], abs=5e-5)
    kappa = next(rows for name, rows in md.items() if name.startswith("Agreement: Cohen's kappa"))
    assert [r[0] for r in kappa[1:]] == [t["code"] for t in report["tags"]] + ["all (pooled)"]

    latex = n2f("agreement", "fmt", "--format", "latex")
    assert latex.count(r"\begin{table}") == 3 and r"\caption{Krippendorff's alpha: " in latex
    assert r"variable\_misuse &" in latex and r"\toprule" in latex
    csv_text = n2f("agreement", "fmt", "--format", "csv")
    first = list(csv.reader(io.StringIO(csv_text.split("\n\n")[0])))
    assert first[0] == ["table", "code", "items", "labels", "alpha", "95% CI"] and first[1][0] == "Krippendorff's alpha"
