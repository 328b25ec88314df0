"""DEDC answer checking (paper section 2.3, appendix A.4) and run aggregation (Tables 1, 3, 4, 5).

Checking. The assignments are substituted in order into one expression: for each
``L := R``, every variable of ``R`` defined earlier is replaced by its expression, then
``L`` is bound to the result; the expression bound to ``result`` is the answer. Where the
paper's ``convert_to_one`` uses ``str.replace`` (so ``view_1`` also rewrites the prefix of
``view_10``, and a variable name occurring inside another token is replaced too), this
substitution works on parsed terms: only whole tokens that are variables are replaced.
It is therefore independent of intermediate variable names, of the topological order
and of whitespace. The commutative primitive (``add``, whatever symbol the naming gives
it: ``f8``, ``sub``, ``top_k``) may have its two arguments swapped: rather than
enumerating the 2^k variants of both sides, both are put in a canonical form (the
arguments of commutative calls sorted) and compared; an answer is correct iff its
canonical form equals that of the gold answer or of any official accepted string. The
2^k variants are still produced (``expansions``) to show the matched one and to check
ourselves against the official ``candi_outputs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from engines.core import LENIENT, DataError, Item, Report, RunResults, Status, Table, TagType, Verdict, settings_to_json
from engines.dedc.authors import AuthorsCheck, authors_check
from engines.dedc.settings import DedcSettings
from engines.dedc.substitution import TooLarge, canonical, expansions, substitute, substituted_form
from engines.dedc.parse import Parsed, parse_answer, parse_term
from engines.dedc.graph import build_graph, naming
from engines.dedc.tags import tag, tag_errors
from engines.papers import prompt_blind
from engines.parsing import ParseFailure
from engines.reporting import accuracy_by, correct, scored, status_counts, tag_table, wilson_interval

DEFAULT_SETTINGS = DedcSettings()
Condition = tuple[tuple[str, str], ...]  # a run's settings but ``primitives``, as sorted (name, repr) pairs


@lru_cache(maxsize=1024)  # items in flight, at -j up to about 1,000: a run's memory, not its size
def _gold(answer: str, names: str, accepted: tuple[str, ...]) -> tuple[Any, ...]:
    """(parsed gold, gold graph, expansions, canonical forms of every accepted string)."""
    parsed = parse_answer(answer)
    if isinstance(parsed, ParseFailure):
        raise DataError(f"malformed DEDC gold answer ({parsed.describe()}): {answer[:80]!r}")
    comm = naming(names).commutative
    shown = substituted_form(parsed.assignments, frozenset())
    if shown is None:
        raise DataError(f"malformed DEDC gold answer (no 'result := ...'): {answer[:80]!r}")
    if _calls_any(shown, comm) and (tree := substitute(parsed.assignments)) is not None:
        exps = expansions(tree, comm)
        forms = {canonical(tree, comm): exps[0]}
    else:  # the one expansion, its own canonical form
        exps = [shown]
        forms = {shown: shown}
    for text in accepted:
        t = parse_term(text)
        if t is not None:
            forms.setdefault(canonical(t, comm), text)
    return parsed, build_graph(parsed.assignments, names), exps, forms


def _calls_any(form: str, symbols: frozenset[str]) -> bool:
    """Whether a compact form may call one of ``symbols`` (a false yes only costs the longer way)."""
    return any(f"{symbol}(" in form for symbol in symbols)


def gold_dag(item: Item, names: str) -> Any:
    """The gold answer's DAG (tags.Graph), parsed once per item and shared with the simulator."""
    return _gold(str(item.gold.get("answer", "")), names, tuple(item.gold.get("accepted") or ()))[1]


def gold_expansions(answer: str, names: str = "opaque") -> set[str]:
    """The checker's own expansion of a gold answer (should equal the official candi_outputs)."""
    return set(_gold(answer, names, ())[2])


def item_names(item: Item, settings: DedcSettings = DEFAULT_SETTINGS) -> str:
    """The naming of the item's primitives: the item's own (official files), else the run's."""
    names = item.meta.get("names") or settings.names or "opaque"
    return names if names in ("opaque", "anomalous", "cross") else "opaque"


class Check:
    """The outcome of checking one parsed answer against an item's gold."""

    __slots__ = ("correct", "output_expr", "gold_expr", "matched", "note")

    def __init__(self, correct: bool, output_expr: str, gold_expr: str, matched: str, note: str = ""):
        self.correct, self.output_expr, self.gold_expr, self.matched, self.note = (
            correct, output_expr, gold_expr, matched, note)


def check(parsed: Parsed, item: Item, names: str) -> Check:
    gold = item.gold
    _, _, exps, forms = _gold(str(gold.get("answer", "")), names, tuple(gold.get("accepted") or ()))
    comm = naming(names).commutative
    try:
        shown = substituted_form(parsed.assignments, frozenset())
        form = substituted_form(parsed.assignments, comm) if shown is not None and _calls_any(shown, comm) else shown
    except TooLarge:
        return Check(False, "(expression too large)", exps[0], "", "substituted expression too large")
    if shown is None:
        return Check(False, "", exps[0], "", "no 'result := ...' statement")
    hit = forms.get(form)
    if hit is None:
        return Check(False, shown, exps[0], "")
    return Check(True, shown, hit, hit)


# --------------------------------------------------------------------- verdict


def score_item(item: Item, outputs: Sequence[str], settings: DedcSettings = DEFAULT_SETTINGS,
               with_views: bool = True) -> Verdict:
    """The verdict. Strict (the default): correct iff the authors' checker accepts the reply
    (``authors.authors_check``), unparseable when it finds no ``result`` to judge; the reading
    below explains the verdict (tags, views). Lenient: correct iff the assignments found among
    the prose substitute to an accepted answer."""
    names = item_names(item, settings)
    text = outputs[0] if outputs else ""
    parsed = parse_answer(text)
    _, gold_graph, exps, _ = _gold(str(item.gold.get("answer", "")), names,
                                   tuple(item.gold.get("accepted") or ()))
    authors = authors_check(text, item.gold.get("accepted") or exps) if settings.extract != LENIENT else None
    if isinstance(parsed, ParseFailure):
        return _unparseable(text, parsed, gold_graph, exps[0], authors, with_views, bool(outputs))
    result = check(parsed, item, names)
    correct = result.correct if authors is None else authors.correct
    unread = authors is not None and authors.expression is None  # the authors' checker has nothing to judge
    graph = None
    tags = []
    if not correct and not unread and not result.correct:  # error tags only for an answer judged wrong
        graph = build_graph(parsed.assignments, names)
        tags = tag_errors(graph, gold_graph)
    removed = ("removed: " + " | ".join(parsed.removed[:4])
               + (f" (+{len(parsed.removed) - 4} more)" if len(parsed.removed) > 4 else "")) if parsed.removed else ""
    if authors is not None and authors.correct != result.correct:
        removed = "; ".join(p for p in (authors.explain() + (
            "; read statement by statement the answer is right" if result.correct else
            "; read statement by statement it is wrong"), removed) if p)
    if removed:
        tags.append(tag("format_violation", removed))
    status: Status = "correct" if correct else "wrong"
    if unread and authors is not None:
        status = "unparseable"
        tags.insert(0, tag("unparseable", authors.explain()))
    vs = []
    if with_views:
        from engines.dedc import views

        if graph is None:
            graph = build_graph(parsed.assignments, names)
        shown = "" if authors is None else authors.expression or "(no result)"
        vs = views.verdict_views(status, parsed, graph, gold_graph, result, names, shown)
    return Verdict(status, {"correct": 1.0 if correct else 0.0}, tags, vs)


def _unparseable(text: str, failure: ParseFailure, gold_graph: Any, gold_expr: str, authors: AuthorsCheck | None,
                 with_views: bool, answered: bool) -> Verdict:
    """No assignment could be read; the authors' checker may still accept the text (then it is correct)."""
    from engines.dedc import views

    vs = views.unparseable_views(text, failure, gold_graph, gold_expr) if with_views else []
    if authors is not None and authors.correct:
        return Verdict("correct", {"correct": 1.0}, [tag("format_violation", authors.explain())], vs)
    tags = [tag("unparseable", failure.describe() + ("" if answered else " (no output)"))]
    return Verdict("unparseable", {"correct": 0.0}, tags, vs)


# -------------------------------------------------------------------- reporting

_GAP_LABEL = {"0": "0% gap", "100": "100% gap", "base": "base gap"}
_NAMES_LABEL = {"anomalous": "Anomalous", "cross": "Cross", "opaque": "opaque names"}


def effective_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings (as stored) that define a condition; an official file's name stands for its knobs."""
    data = dict(settings)
    dataset = str(data.get("dataset") or "")
    if dataset:
        stem = dataset.replace("\\", "/").rsplit("/", 1)[-1]
        for suffix in (".full.jsonl", ".jsonl"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
        data["primitives"] = "_show_primitive" in stem
        data["gap"] = "0" if "_no_sys_gap" in stem else "100" if "_complete_sys_gap" in stem else "base"
        data["names"] = "anomalous" if "_anom" in stem else "cross" if "_cross" in stem else "opaque"
        for token in ("_show_primitive", "_no_sys_gap", "_complete_sys_gap", "_anom", "_cross"):
            stem = stem.replace(token, "")
        data["dataset"] = stem
    data.setdefault("primitives", False)
    data.setdefault("gap", "base")
    data.setdefault("names", "opaque")
    return data


def _pct(run: RunResults) -> float | None:
    judged = scored(run.results)
    if not judged:
        return None
    return 100.0 * correct(judged) / len(judged)


def _round2(x: float) -> float:
    return round(x + 0.0, 2) or 0.0


def _condition_label(s: Mapping[str, Any]) -> str:
    parts = []
    if str(s.get("gap", "base")) != "base":
        parts.append(_GAP_LABEL.get(str(s["gap"]), f"gap={s['gap']}"))
    if s.get("names", "opaque") != "opaque":
        parts.append(_NAMES_LABEL.get(str(s["names"]), str(s["names"])))
    return " + ".join(parts) or "base"


@dataclass
class _Conditions:
    """This model's runs by condition (settings but ``primitives``): a P_dc run and a P_c run each."""

    pairs: dict[Condition, dict[bool, RunResults]]
    settings: dict[Condition, dict[str, Any]]  # condition -> its settings
    mine: dict[str, Any]  # this run's settings
    my_key: Condition


def _condition_key(settings: Mapping[str, Any]) -> Condition:
    return tuple(sorted((k, repr(v)) for k, v in settings.items() if k != "primitives"))


def _conditions(run: RunResults, against: Sequence[RunResults]) -> _Conditions:
    mine = effective_settings(settings_to_json(run.settings))
    pairs: dict[Condition, dict[bool, RunResults]] = {}
    by_key: dict[Condition, dict[str, Any]] = {}
    for r in [run, *against]:
        if r is not run and r.model != run.model:
            continue
        s = effective_settings(settings_to_json(r.settings))
        key = _condition_key(s)
        by_key[key] = {k: v for k, v in s.items() if k != "primitives"}
        pairs.setdefault(key, {}).setdefault(bool(s.get("primitives")), r)
    return _Conditions(pairs, by_key, mine, _condition_key(mine))


def _table1(run: RunResults, conditions: _Conditions, metrics: dict[str, float]) -> Table | None:
    """P_dc, P_c, D_c, D_d of this run's condition (into ``metrics``); the table when both runs are there."""
    pair = conditions.pairs.get(conditions.my_key, {})
    p_dc = _pct(pair[False]) if False in pair else None
    p_c = _pct(pair[True]) if True in pair else None
    if p_dc is not None:
        metrics["P_dc"] = _round2(p_dc)
    if p_c is not None:
        metrics["P_c"] = _round2(p_c)
        metrics["D_c"] = _round2(100 - p_c)
    if p_dc is None or p_c is None:
        return None
    metrics["D_d"] = _round2(p_c - p_dc)
    return Table("Table 1", "Decoupled decomposition and composition (P_dc, P_c, D_c, D_d)",
                 ["model", "P_dc", "P_c", "D_c", "D_d"],
                 [[run.model, _round2(p_dc), _round2(p_c), _round2(100 - p_c), _round2(p_c - p_dc)]],
                 note="D_c = 100 - P_c; D_d = P_c - P_dc (paper section 2.4)")


def _same_other_knobs(settings: Mapping[str, Any], mine: Mapping[str, Any]) -> bool:
    return all(settings.get(k) == mine.get(k) for k in settings if k not in ("gap", "names"))


def _tables_4_5(run: RunResults, conditions: _Conditions, metrics: dict[str, float]) -> list[Table]:
    """Effects of a gap or naming setting against the base pair (gap=base, names=opaque)."""
    base_key = None
    for key, s in conditions.settings.items():
        if str(s.get("gap", "base")) == "base" and s.get("names", "opaque") == "opaque" and \
                _same_other_knobs(s, conditions.mine):
            base_key = key
    base = conditions.pairs.get(base_key, {}) if base_key else {}
    if False not in base or True not in base:
        return []
    base_dc, base_c = _pct(base[False]), _pct(base[True])
    gap_rows: list[list[Any]] = []
    naming_rows: list[list[Any]] = []
    for key, pair in conditions.pairs.items():
        if key == base_key or False not in pair or True not in pair or base_dc is None or base_c is None:
            continue
        s = conditions.settings[key]
        if not _same_other_knobs(s, conditions.mine):
            continue
        s_dc, s_c = _pct(pair[False]), _pct(pair[True])
        if s_dc is None or s_c is None:
            continue
        delta_c = s_c - base_c
        delta_d = (s_dc - base_dc) - delta_c
        row = [_condition_label(s), run.model, _round2(s_dc), _round2(s_c), _round2(delta_c), _round2(delta_d)]
        (naming_rows if s.get("names", "opaque") != "opaque" else gap_rows).append(row)
        if key == conditions.my_key:
            metrics["Delta_c"] = _round2(delta_c)
            metrics["Delta_d"] = _round2(delta_d)
    cols = ["setting", "model", "P^s_dc", "P^s_c", "Delta^s_c", "Delta^s_d"]
    note = "Delta_c = P^s_c - P_c; Delta_d = (P^s_dc - P_dc) - Delta_c against the base pair (section 4)"
    tables = []
    if gap_rows:
        tables.append(Table("Table 4", "Compositional gap settings against the base evaluation", cols,
                            sorted(gap_rows), note=note))
    if naming_rows:
        tables.append(Table("Table 5", "Counter-intuitive symbolic names against the base evaluation", cols,
                            sorted(naming_rows), note=note))
    return tables


#: what ``aggregate`` reads of an item (``EngineParts.report_keys``): the groups of its accuracy tables
REPORT_KEYS = ("graph_type", "gap")


def aggregate(run: RunResults, against: Sequence[RunResults], taxonomy: Sequence[TagType]) -> Report:
    """Accuracy with its interval, Table 1 (with the P_c / P_dc run of the same condition among
    ``against``), Table 3, Tables 4 and 5 (with the base pair among ``against``), accuracy by group."""
    judged = scored(run.results)
    n = len(judged)
    ok = correct(judged)
    lo, hi = wilson_interval(ok, n)
    metrics: dict[str, float] = {"accuracy": ok / n if n else 0.0, "accuracy_ci_low": lo, "accuracy_ci_high": hi}
    notes: list[str] = []
    counts = status_counts(run.results)
    if counts.get("error"):
        notes.append(f"{counts['error']} items in status error are excluded from accuracy")
    tables = [Table("Accuracy", "Accuracy with a 95% Wilson interval",
                    ["n", "correct", "accuracy %", "95% CI low %", "95% CI high %"],
                    [[n, ok, _round2(100 * ok / n) if n else 0.0, _round2(100 * lo), _round2(100 * hi)]])]
    blind = prompt_blind(run.model)
    if blind:
        notes.append(f"{run.model} does not read the prompt ({blind}): its P_dc and P_c runs see the same "
                     "answers whatever the demonstrations, so D_d (and the Deltas of Tables 4 and 5) are 0 up "
                     "to noise by construction and say nothing about decomposition")
    conditions = _conditions(run, against)
    table1 = _table1(run, conditions, metrics)
    if table1 is not None:
        tables.append(table1)
    elif against:
        notes.append("Table 1 needs this run and one of the same model that differs only in primitives=")
    tables.append(tag_table("Table 3", "Error types (items per tag)", judged, taxonomy))
    tables += _tables_4_5(run, conditions, metrics)
    tables.append(accuracy_by(judged, "graph_type"))
    tables.append(accuracy_by(judged, "gap"))
    return Report(metrics=metrics, tables=tables, notes=notes)
