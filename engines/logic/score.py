"""One item's verdict (the solver is the judge) and a run's report (the paper's Figures 2 and 3).

Scores of every item:

* ``equivalent``: 1.0 iff Z3 proved the round-trip formula equivalent to the original;
* ``unknown``: 1.0 iff Z3 could not decide (its resource budget spent, Z3 giving up on
  quantifiers, or a formula beyond the solver's size cap). Such an item has status
  ``wrong`` (never ``correct``: nothing was proved) and carries no error tags (nothing
  was disproved either); it is also ``set_aside`` (``engines.reporting.SET_ASIDE``): as
  the paper threw out the items that hit the solver's timeout (section 3.2), no accuracy
  counts it, and the report counts these items apart;
* ``truth_table_agreement`` (propositional items only): the fraction of assignments over
  the union of both formulas' variables on which they agree; 0.0 when nothing could be
  parsed; left out when the round trip has quantifiers or more than 20 variables. It is
  not defined for first-order items (there is no finite set of assignments to count), so
  it is left out there.

The reply is read as the authors read it (``nlfs``): operator symbols mapped and the
whole reply lowercased before parsing, so ``X1 ∨ X2`` is ``x1 ∨ x2`` and ``X1 AND x2`` is
``x1 ∧ x2``; the original formula and the vocabulary are compared in lower case too.

Before judging, ``a = b`` in a propositional item is read as ``a ↔ b``: between
propositions, equality can only mean equal truth values.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from engines.core import LENIENT, Chart, DataError, Item, ItemResult, Report, RunResults, Table, TagType, Verdict
from engines.logic.formula import IFF, Arrow, Atom, Equal, Formula, map_atoms, walk
from engines.logic.parse import FormulaSyntaxError, parse_formula
from engines.logic.reading import Reading, read_formula
from engines.logic.settings import LogicSettings
from engines.logic.solver import EQUIVALENT, NOT_EQUIVALENT, UNKNOWN, Outcome, check_equivalence
from engines.logic.tags import copied_formula, error_tags, extra_operators, tag
from engines.logic.truth import Agreement, agreement
from engines.logic.vocabulary import Vocabulary, vocabulary_of
from engines.parsing import ParseFailure
from engines.reporting import (SET_ASIDE, correct, count, counted, grouped, joined, keep, scored, set_aside, tag_table, total,
                               wilson_interval)

DEFAULT_SETTINGS = LogicSettings()


@lru_cache(maxsize=8192)
def gold_formula(text: str) -> Formula:
    """The original formula of an item, parsed once per process."""
    try:
        return parse_formula(text)
    except FormulaSyntaxError as exc:
        raise DataError(f"malformed logic gold formula ({exc}): {text[:80]!r}") from None


def item_vocabulary(item: Item) -> Vocabulary:
    return vocabulary_of(item.inputs.get("vocabulary") or {})


def propositional_reading(f: Formula) -> Formula:
    """``a = b`` between propositions as ``a ↔ b`` (the only meaning it can have there)."""
    if not any(isinstance(n, Equal) for n in walk(f)):
        return f
    return map_atoms(f, lambda a: Arrow(IFF, Atom(a.left), Atom(a.right)) if isinstance(a, Equal) else a)


@dataclass(frozen=True)
class Judgement:
    """Everything scoring found out about one item; the views are drawn from it."""

    item: Item
    vocab: Vocabulary
    original: Formula
    description: str
    reply: str
    reading: Reading | ParseFailure
    outcome: Outcome | None
    agreement: Agreement | None
    identical: bool = False  # the round trip parsed to the original formula itself


def judge(item: Item, outputs: Sequence[str], settings: LogicSettings = DEFAULT_SETTINGS,
          explain: bool = True) -> Judgement:
    """Parse, decide and measure one item; ``explain=False`` skips what only the views need."""
    vocab = item_vocabulary(item).lowered()
    original = gold_formula(str(item.gold.get("formula", "")).lower())
    description = outputs[0] if outputs else ""
    reply = (outputs[1] if len(outputs) > 1 else "").lower()
    reading = read_formula(reply, vocab.known(), lenient=settings.extract == LENIENT)
    if not isinstance(reading, Reading):
        return Judgement(item, vocab, original, description, reply, reading, None, None)
    formula = reading.formula
    identical = formula == original
    if not identical and not vocab.is_fol:
        formula = propositional_reading(formula)
        reading = Reading(formula, reading.source, reading.removed)
    outcome = check_equivalence(original, formula, settings.rlimit, explain)
    found = None if vocab.is_fol else agreement(original, formula)
    return Judgement(item, vocab, original, description, reply, reading, outcome, found, identical)


def verdict_of(j: Judgement) -> Verdict:
    """Status, scores and tags (no views)."""
    tags = []
    copied = copied_formula(j.description, str(j.item.inputs.get("formula", "")))
    if copied:
        tags.append(copied)
    if not isinstance(j.reading, Reading):
        scores = {"equivalent": 0.0, "unknown": 0.0}
        if not j.vocab.is_fol:
            scores["truth_table_agreement"] = 0.0
        tags = [tag("unparseable", j.reading.describe())] + tags
        set_off = read_formula(j.reply, j.vocab.known(), lenient=True)
        if isinstance(set_off, Reading):  # prose around a formula: say so, though the reading fails
            tags.append(tag("format_violation", f"the formula `{set_off.source}` is set off from prose "
                                                f"(removed: {' | '.join(set_off.removed)}); the whole reply is read"))
        return Verdict("unparseable", scores, tags)
    assert j.outcome is not None
    verdict = j.outcome.verdict
    scores = {"equivalent": 1.0 if verdict == EQUIVALENT else 0.0, "unknown": 1.0 if verdict == UNKNOWN else 0.0}
    if verdict == UNKNOWN:
        scores[SET_ASIDE] = 1.0
    if j.agreement is not None:
        scores["truth_table_agreement"] = j.agreement.fraction
    if verdict == NOT_EQUIVALENT:
        tags = error_tags(j.original, j.reading.formula, j.vocab) + tags
    extra = None if j.identical else extra_operators(j.reading.formula, j.vocab)
    if extra:
        tags.append(extra)
    if j.reading.removed:
        tags.append(tag("format_violation", "removed: " + " | ".join(j.reading.removed)))
    return Verdict("correct" if verdict == EQUIVALENT else "wrong", scores, tags)


def score_item(item: Item, outputs: Sequence[str], settings: LogicSettings = DEFAULT_SETTINGS,
               with_views: bool = True) -> Verdict:
    j = judge(item, outputs, settings, explain=with_views)
    verdict = verdict_of(j)
    if with_views:
        from engines.logic.views import views

        verdict.views = views(j, verdict)
    return verdict


# ------------------------------------------------------------------- report


def _pct(x: float) -> float:
    return round(100 * x + 0.0, 2)


def _dataset(r: ItemResult) -> str:
    meta = r.item.meta
    name = str(meta.get("dataset", "?"))
    return f"fol ({meta['vocab']})" if name == "fol" and meta.get("vocab") else name


def _figure(label: str) -> str:
    if label.startswith("fol"):
        return "Figure 3 (bottom)" if "english" in label else "Figure 3 (top)"
    return "Figure 2"


def _by_operators(results: Sequence[ItemResult]) -> dict[int, Sequence[ItemResult]]:
    return dict(sorted(grouped(results, lambda r: int(r.item.meta.get("operators", 0))).items()))


def _mean_tt(results: Sequence[ItemResult]) -> float | None:
    agreeing = keep(results, lambda r: "truth_table_agreement" in r.scores)
    return total(agreeing, lambda r: r.scores["truth_table_agreement"]) / len(agreeing) if agreeing else None


def _unknown(results: Sequence[ItemResult]) -> int:
    return count(results, lambda r: r.scores.get("unknown", 0.0) >= 1.0)


def _figure_table(label: str, results: Sequence[ItemResult]) -> tuple[Table, list[Chart]]:
    """Accuracy and truth-table agreement by operator count: the paper's figure as a table.

    ``results`` include the items set aside (Z3 ``unknown``): they are counted in their
    column and left out of every other figure."""
    groups = _by_operators(results)
    propositional = _mean_tt(scored(results)) is not None
    rows = []
    accuracy_series: dict[str, float] = {}
    tt_series: dict[str, float] = {}
    for ops, everything in groups.items():
        group = scored(everything)
        if not group:
            rows.append([ops, 0, "-", "-"] + (["-"] if propositional else []) + [_unknown(everything), 0])
            continue
        ok = correct(group)
        lo, hi = wilson_interval(ok, len(group))
        row: list[Any] = [ops, len(group), _pct(ok / len(group)), f"{100 * lo:.1f}-{100 * hi:.1f}"]
        accuracy_series[str(ops)] = _pct(ok / len(group))
        if propositional:
            tt = _mean_tt(group)
            row.append(_pct(tt) if tt is not None else "-")
            if tt is not None:
                tt_series[str(ops)] = _pct(tt)
        row += [_unknown(everything), count(group, lambda r: r.status == "unparseable")]
        rows.append(row)
    columns = ["operators", "n", "accuracy %", "95% CI"] + (["truth-table agreement %"] if propositional else [])
    name = _figure(label)
    table = Table(name, f"Round-trip accuracy by number of operators ({label})",
                  columns + ["unknown", "unparseable"], rows,
                  note="operators: ∧/∨ for propositional formulas, ¬/∧/∨ for first-order ones (as the paper's "
                       "x-axes); n and accuracy leave out the unknown items (Z3 undecided), set aside as the "
                       "paper threw out its timeouts")
    charts = [Chart(f"{name} accuracy", f"Accuracy % by operators ({label})", accuracy_series, "%")]
    if propositional:
        charts.append(Chart(f"{name} truth table", f"Truth-table agreement % by operators ({label})", tt_series, "%"))
    return table, charts


def _ratio_table(results: Sequence[ItemResult]) -> Table | None:
    groups = grouped(keep(results, lambda r: "ratio" in r.item.meta), lambda r: float(r.item.meta["ratio"]))
    if not groups:
        return None
    rows = []
    for ratio, group in sorted(groups.items()):
        ok = correct(group)
        tt = _mean_tt(group)
        rows.append([ratio, group[0].item.meta.get("clauses", "-"), len(group), _pct(ok / len(group)),
                     _pct(tt) if tt is not None else "-"])
    return Table("by ratio", "Accuracy by clause ratio r = m/n",
                 ["r", "clauses m", "n", "accuracy %", "truth-table agreement %"], rows)


def _verdict_table(results: Sequence[ItemResult]) -> Table:
    counts: Counter[str] = Counter()
    for r, n in counted(results):
        if r.status == "correct":
            counts["equivalent"] += n
        elif r.status == "unparseable":
            counts["unparseable"] += n
        elif r.status == "wrong":
            counts["unknown (set aside)" if r.scores.get("unknown", 0.0) >= 1.0 else "not equivalent"] += n
        else:
            counts["error"] += n
    order = ["equivalent", "not equivalent", "unknown (set aside)", "unparseable", "error"]
    return Table("Verdicts", "Solver verdicts (unknown: Z3 undecided; set aside, in no accuracy)",
                 ["verdict", "items"], [[v, counts.get(v, 0)] for v in order])


def _comparison(label: str, runs: Sequence[RunResults]) -> Table:
    """One column per run: the paper's figures plot one series per model."""
    per_run = [(f"{run.model} ({run.name})", _by_operators(keep(scored(run.results), lambda r: _dataset(r) == label)))
               for run in runs]
    ops = sorted({o for _, groups in per_run for o in groups})
    rows = []
    for o in ops:
        row: list[Any] = [o]
        for _, groups in per_run:
            group = groups.get(o, [])
            row.append(_pct(correct(group) / len(group)) if group else "-")
        rows.append(row)
    return Table(f"{_figure(label)} (runs)", f"Accuracy % by operators, one column per run ({label})",
                 ["operators"] + [name for name, _ in per_run], rows)


#: what ``aggregate`` reads of an item (``EngineParts.report_keys``): the figure per dataset (vocabulary for
#: first-order), operators, and the ratio table's ratio and clauses
REPORT_KEYS = ("dataset", "vocab", "operators", "ratio", "clauses")


def aggregate(run: RunResults, against: Sequence[RunResults], taxonomy: Sequence[TagType]) -> Report:
    judged = scored(run.results)
    aside = set_aside(run.results)
    n = len(judged)
    ok = correct(judged)
    lo, hi = wilson_interval(ok, n)
    decided_or_not = n + len(aside)
    metrics: dict[str, float] = {"accuracy": ok / n if n else 0.0, "accuracy_ci_low": lo, "accuracy_ci_high": hi,
                                 "unknown": float(len(aside)),
                                 "unknown_rate": len(aside) / decided_or_not if decided_or_not else 0.0}
    tt = _mean_tt(judged)
    if tt is not None:
        metrics["mean_truth_table_agreement"] = tt
    notes = [f"unknown: {len(aside)} item(s) where Z3 spent its resource budget (rlimit) or a formula exceeded "
             "the size cap; set aside as the paper threw out its solver timeouts: no accuracy or agreement "
             "counts them (their status reads wrong, scores equivalent=0, unknown=1, no error tags)"]
    if any(_dataset(r).startswith("fol") for r, _ in counted(judged)):
        notes.append("truth-table agreement is not defined for first-order formulas and is left out")
    errors = count(run.results, lambda r: r.status == "error")
    if errors:
        notes.append(f"{errors} items in status error are excluded from accuracy")
    tables: list[Table] = []
    charts: list[Chart] = []
    decided_and_aside = joined(judged, aside)
    labels = sorted({_dataset(r) for r, _ in counted(decided_and_aside)})
    for label in labels:
        table, figure_charts = _figure_table(label, keep(decided_and_aside, lambda r: _dataset(r) == label))
        tables.append(table)
        charts += figure_charts
    ratio = _ratio_table(judged)
    if ratio is not None:
        tables.append(ratio)
    tables.append(_verdict_table(run.results))
    tables.append(tag_table("Errors", "Error types (items per tag)", judged, taxonomy))
    if against:
        for label in labels:
            tables.append(_comparison(label, [run, *against]))
    return Report(metrics=metrics, tables=tables, charts=charts, notes=notes)
