"""Agreement: between annotators, and of the automatic tagger against the reference labels.

The figures are ``sessions.study.agreement``'s (the same as ``n2f agreement``). The upper table
is the tagger's quality per code (precision, recall, F1 with 95% intervals); with two or
more annotators the next are Krippendorff's alpha per code over every item two or more
of them reviewed, and their agreement per code on the items all reviewed (percent,
Cohen's or Fleiss' kappa). The list under them names the items behind the highlighted row's
disagreements: Enter opens one in the run, ``d`` opens the adjudication queue.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from sessions.reports.figures import figure, undefined_note
from n2f_tui.render import safe_text
from sessions.study.agreement import AgreementReport, Figure, agreement_report
from sessions.study.statistics import KAPPA_UNDEFINED
from sessions.store.runs import RunStore

QUALITY = ("code", "label", "tp", "fp", "fn", "tn", "precision", "recall", "F1", "kappa", "disagree")
AGREE = ("code", "n", "agree %", "kappa", "disagree")
ALPHA = ("code", "items", "labels", "Krippendorff's alpha (95% CI)")


def head_text(report: AgreementReport) -> Text:
    text = Text(f"automatic tags against {report.reference} · {report.quality_n} reviewed item(s)", style="bold")
    if report.progress:
        text.append("\nreviewed: " + ", ".join(f"{k} {v}" for k, v in report.progress.items()), style="dim")
    if report.study_size:
        text.append(f" · study of {report.study_size}: " + ", ".join(f"{k} {v}" for k, v in report.study.items()),
                    style="dim")
    if len(report.annotators) > 1:
        method = "Cohen's kappa" if len(report.annotators) == 2 else "Fleiss' kappa"
        identical = figure(report.identical.value, report.identical.ci, True)
        text.append(f"\n{len(report.annotators)} annotators on {report.n} common item(s), {method}; identical label "
                    f"sets % {identical}; adjudication queue {len(report.queue)} (d)")
    undefined = [row.kappa for row in report.tags + ([report.overall] if report.overall else [])]
    undefined += [Figure(row.kappa, None, KAPPA_UNDEFINED) for row in report.quality if row.tp + row.fp + row.fn + row.tn]
    note = undefined_note(undefined)
    if note:
        text.append("\n" + note.rstrip("\n"), style="dim")
    if not report.quality_n:
        text.append("\nno item reviewed yet: in the run, a accepts an item's tags, t/x correct them, d marks done",
                    style="dim")
    return text


class AgreementScreen(Screen[str | None]):
    DEFAULT_CSS = """
    AgreementScreen #agree-head { height: auto; padding: 0 1; background: $panel; }
    AgreementScreen DataTable { height: auto; max-height: 2fr; }
    AgreementScreen #disagree-title { height: 1; padding: 0 1; text-style: bold; }
    AgreementScreen OptionList { height: 1fr; min-height: 3; }
    """
    BINDINGS = [Binding("escape", "close", "Back"), Binding("tab", "app.focus_next", "Switch pane", show=False),
                Binding("d", "adjudicate", "Adjudicate"), Binding("r", "reference", "Tagger against…")]

    def __init__(self, store: RunStore, annotator: str = "") -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.report: AgreementReport | None = None
        self.against: str | None = None  # the tagger's reference: None, the final tags; else an annotator
        self.rows: list[Any] = []  # tagger-quality rows
        self.reviewed = 0

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="agree-head", markup=False)
            yield DataTable(cursor_type="row", id="quality")
            yield DataTable(cursor_type="row", id="alpha")
            yield DataTable(cursor_type="row", id="agree")
            yield Static("", id="disagree-title", markup=False)
            yield OptionList(id="disagree")
        yield Footer()

    def on_mount(self) -> None:
        self.load()
        self.query_one("#quality", DataTable).focus()

    def load(self) -> None:
        self.report = report = agreement_report(self.store, against=self.against)
        self.rows, self.reviewed = report.quality, report.quality_n
        quality = self.query_one("#quality", DataTable)
        quality.clear(columns=True)
        quality.add_columns(*QUALITY)
        for row in self.rows:
            cells = [row.code, row.label, row.tp, row.fp, row.fn, row.tn, figure(row.precision, row.precision_ci),
                     figure(row.recall, row.recall_ci), figure(row.f1, row.f1_ci), figure(row.kappa, None), len(row.disagreeing)]
            quality.add_row(*(safe_text(str(c)) for c in cells), key=row.code)
        self.fill_alpha(report)
        agree = self.query_one("#agree", DataTable)
        agree.clear(columns=True)
        agree.display = len(report.annotators) > 1
        agree.add_columns(*AGREE)
        for tag in report.tags + ([report.overall] if report.overall else []):
            cells = [tag.code if tag.code != "*" else "all (pooled)", tag.n, figure(tag.percent.value, tag.percent.ci, True),
                     figure(tag.kappa.value, tag.kappa.ci), len(self.pair_disagreements(tag.code))]
            agree.add_row(*(safe_text(str(c)) for c in cells), key=tag.code)
        self.query_one("#agree-head", Static).update(head_text(report))
        self.show_items("quality", 0)

    def fill_alpha(self, report: AgreementReport) -> None:
        """Krippendorff's alpha per code and pooled, over every item two or more annotators reviewed."""
        table = self.query_one("#alpha", DataTable)
        table.clear(columns=True)
        table.add_columns(*ALPHA)
        rows = report.alpha + ([report.alpha_overall] if report.alpha_overall else [])
        table.display = bool(rows)
        for row in rows:
            cells = [row.code if row.code != "*" else "all (pooled)", row.items, row.values, figure(row.alpha, row.ci)]
            table.add_row(*(safe_text(str(c)) for c in cells), key=f"alpha:{row.code}")

    def pair_disagreements(self, code: str) -> list[str]:
        """Items some pair of annotators disagrees on (on ``code``; ``*``: on any code), in run order."""
        assert self.report is not None
        seen: set[str] = set()
        for pair in self.report.pairs:
            seen.update(pair.disagreeing if code == "*" else pair.by_code.get(code, []))
        return [i for i in self.store.item_ids() if i in seen] if seen else []

    def show_items(self, table: str, row_index: int) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        title = self.query_one("#disagree-title", Static)
        if table == "quality":
            if not 0 <= row_index < len(self.rows):
                title.update("")
                return
            row = self.rows[row_index]
            items, what = row.disagreeing, f"tagger and reference disagree on {row.code}"
        else:
            assert self.report is not None
            rows = self.report.tags + ([self.report.overall] if self.report.overall else [])
            if not 0 <= row_index < len(rows):
                return
            code = rows[row_index].code
            items = self.pair_disagreements(code)
            what = "annotators disagree" + ("" if code == "*" else f" on {code}")
        title.update(safe_text(f"{len(items)} item(s) where {what} (Enter opens)"))
        options.add_options([Option(safe_text(item_id), id=item_id) for item_id in items])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        table = event.data_table.id or "quality"
        self.show_items("agree" if table == "alpha" else table, event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            options.focus()
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_adjudicate(self) -> None:
        from n2f_tui.screens.adjudication import AdjudicationScreen

        self.app.push_screen(AdjudicationScreen(self.store, self.annotator), lambda _: self.load())

    def action_reference(self) -> None:
        """Measure the tagger against the final tags, then each annotator in turn."""
        assert self.report is not None
        choices: list[str | None] = [None, *self.report.progress]
        self.against = choices[(choices.index(self.against) + 1) % len(choices)]
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)
