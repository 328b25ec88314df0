"""How people's labels agree with each other, and how the automatic tagger fares against them.

**Agreement between annotators.** Over the items every chosen annotator reviewed (each
person's label set as ``sessions.study.labels`` defines it), per tag code and overall:
percent agreement and, for two people, Cohen's kappa; for more, Fleiss' kappa (the
percent agreement is then the share of agreeing pairs of judgements). The codes are
those somebody gave on those items, in taxonomy order; "overall" pools every
(item, code) decision over them. ``identical`` is the share of items on which everyone
gave exactly the same set. Each pair of people gets its own figures over the items
both reviewed, with the items they disagree on (any code, and per code).

**Krippendorff's alpha** (``sessions.study.reliability``), per code and pooled, over every
item at least two of the chosen annotators reviewed: unlike the kappas it needs no
complete design, so three people on partly overlapping items all count.

**Tagger quality.** Per code, the automatic tags against a reference: the final tags of
reviewed items (settled labels where settled; disputed items, still unsettled, are left
out) or one chosen annotator's labels. Items without a scored result, or in
infrastructure ``error``, carry no automatic judgement and are left out.

Intervals are 95% bootstrap intervals over items (``sessions.study.statistics``); every figure
carries the number of items behind it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any, Callable, Mapping, Sequence

from engines.core import UNJUDGED, Status
from sessions.store.results import run_settings
from sessions.errors import InputError
from sessions.study.labels import RunLabels, labels_and_summaries
from sessions.store.fingerprint import forced_events
from sessions.study.reliability import AlphaFigure, label_alphas
from sessions.study.statistics import (DRAWS, KAPPA_UNDEFINED, Interval, Resampler, cohen_kappa, disagreeing_pairs,
                                 Stat, fleiss_from_sums, pair_figures, quality_figures)
from sessions.store.runs import RunStore
from sessions.study.sample import load as load_study

Sets = list[frozenset[str]]  # one label set per annotator, for one item


@dataclass
class Figure:
    value: float | None
    ci: Interval | None = None
    reason: str = ""  # why the figure is undefined (value None), printed beside its "—"


@dataclass
class TagFigures:
    """Agreement on one code (or ``*`` overall) over ``n`` items."""

    code: str
    label: str
    n: int
    percent: Figure
    kappa: Figure
    method: str  # "cohen" (two annotators) or "fleiss" (more)


@dataclass
class PairFigures:
    a: str
    b: str
    n: int
    percent: Figure
    kappa: Figure
    disagreeing: list[str]  # items where the two label sets differ
    by_code: dict[str, list[str]] = field(default_factory=dict)  # code -> items where they differ on it


@dataclass
class TagAgreement:
    """The automatic tagger on one code against the reference, over the reference's items."""

    code: str
    label: str
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None  # None when the tagger never used the code
    recall: float | None  # None when the reference never has the code
    f1: float | None
    kappa: float | None
    disagreeing: list[str]  # items where tagger and reference differ on this code
    precision_ci: Interval | None = None
    recall_ci: Interval | None = None
    f1_ci: Interval | None = None


@dataclass
class AgreementReport:
    annotators: list[str]
    n: int  # items every annotator reviewed
    tags: list[TagFigures]
    overall: TagFigures | None
    identical: Figure
    pairs: list[PairFigures]
    queue: list[str]  # disputed items (the adjudication queue), run order
    reference: str  # what the tagger is measured against
    quality: list[TagAgreement]
    quality_n: int
    progress: dict[str, int]  # annotator -> items reviewed
    study: dict[str, int] = field(default_factory=dict)  # annotator -> study items reviewed (no study: empty)
    study_size: int = 0
    alpha: list[AlphaFigure] = field(default_factory=list)  # Krippendorff's alpha per code
    alpha_overall: AlphaFigure | None = None
    forced: int = 0  # label events imported with --force although made on other outputs

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _codes(taxonomy: dict[str, str], used: set[str]) -> list[str]:
    return [c for c in taxonomy if c in used] + sorted(used - set(taxonomy))


def _figures(sampler: Resampler, columns: Sequence[Sequence[int]], stat: Stat) -> tuple[Figure, Figure]:
    point = stat([sum(c) for c in columns], sampler.n)
    if any(map(any, columns)):
        intervals = sampler.intervals(columns, stat)
    else:  # every column zero: every draw gives the point figure
        intervals = [None if v is None else (v, v) for v in point]
    kappa_reason = KAPPA_UNDEFINED if point[1] is None and point[0] is not None else ""
    return Figure(point[0], intervals[0]), Figure(point[1], intervals[1], kappa_reason)


def _code_columns(sets: Sequence[Sets], code: str) -> list[list[int]]:
    """Two people: both / first only / second only per item; more: yes-votes and disagreeing pairs per item.

    (Columns that are zero where people agree, so that bootstrap draws cost what the labels hold.)"""
    votes = [[code in s for s in item] for item in sets]
    if votes and len(votes[0]) == 2:
        return [[int(a and b) for a, b in votes], [int(a and not b) for a, b in votes],
                [int(b and not a) for a, b in votes]]
    m = len(votes[0]) if votes else 0
    yes = [sum(v) for v in votes]
    return [yes, [disagreeing_pairs(y, m) for y in yes]]


def _stat(raters: int, codes: int) -> Callable[[Sequence[int], int], tuple[float | None, float | None]]:
    if raters == 2:
        return lambda sums, n: pair_figures(sums, n, codes)
    pairs = raters * (raters - 1)
    return lambda sums, n: fleiss_from_sums(sums[0], n * codes * pairs - sums[1], n * codes, raters)


def group_figures(sets: Sequence[Sets], codes: list[str], labels: dict[str, str], draws: int,
                  per_code: bool = True) -> tuple[list[TagFigures], TagFigures | None, Figure]:
    """Per-code (unless not ``per_code``) and overall agreement of the people whose label sets ``sets`` holds."""
    if not sets or not codes:
        return [], None, Figure(None)
    raters = len(sets[0])
    sampler = Resampler(len(sets), draws)
    method = "cohen" if raters == 2 else "fleiss"
    rows: list[TagFigures] = []
    pooled: list[list[int]] = []
    for code in codes:
        columns = _code_columns(sets, code)
        pooled = columns if not pooled else [[x + y for x, y in zip(p, c)] for p, c in zip(pooled, columns)]
        if per_code:
            percent, kappa = _figures(sampler, columns, _stat(raters, 1))
            rows.append(TagFigures(code, labels.get(code, code), len(sets), percent, kappa, method))
    percent, kappa = _figures(sampler, pooled, _stat(raters, len(codes)))
    overall = TagFigures("*", "all codes pooled", len(sets), percent, kappa, method)
    if not per_code:
        return rows, overall, Figure(None)
    differs = [int(len(set(item)) > 1) for item in sets]
    identical, _ = _figures(sampler, [differs], lambda sums, n: ((n - sums[0]) / n if n else None, None))
    return rows, overall, identical


def pair_of(labels: RunLabels, a: str, b: str, codes: list[str], draws: int) -> PairFigures:
    """Two people over the items both reviewed: pooled figures (``draws`` 0: none) and where they differ."""
    items = [i for i, v in labels.items.items() if a in v.by_annotator and b in v.by_annotator]
    sets = [[labels.items[i].by_annotator[a], labels.items[i].by_annotator[b]] for i in items]
    by_code = {code: [i for i, (x, y) in zip(items, sets) if (code in x) != (code in y)] for code in codes}
    pair = PairFigures(a, b, len(items), Figure(None), Figure(None), [i for i, (x, y) in zip(items, sets) if x != y],
                       {c: v for c, v in by_code.items() if v})
    if items and codes and draws:
        _, overall, _ = group_figures(sets, codes, {}, draws, per_code=False)
        if overall is not None:
            pair.percent, pair.kappa = overall.percent, overall.kappa
    return pair


def tagger_quality(labels: RunLabels, statuses: Mapping[str, Status], taxonomy: dict[str, str],
                   against: str | None = None, draws: int = DRAWS) -> tuple[list[TagAgreement], int, str]:
    """Per code, the automatic tags against the reference (see the module docstring); rows, items, reference."""
    pairs: list[tuple[str, frozenset[str], frozenset[str]]] = []
    for item_id, item in labels.items.items():
        if statuses.get(item_id, "error") in UNJUDGED:
            continue
        if against is not None:
            if against in item.by_annotator:
                pairs.append((item_id, item.auto, item.by_annotator[against]))
        elif item.reviewed and not item.disputed:
            pairs.append((item_id, item.auto, item.final))
    seen = set().union(*(auto | ref for _, auto, ref in pairs)) if pairs else set()
    names = {**labels.names, **taxonomy}
    sampler = Resampler(len(pairs), draws)
    rows = []
    for code in list(taxonomy) + sorted(seen - set(taxonomy)):
        columns = [[int(code in auto and code in ref) for _, auto, ref in pairs],
                   [int(code in auto and code not in ref) for _, auto, ref in pairs],
                   [int(code not in auto and code in ref) for _, auto, ref in pairs]]
        tp, fp, fn = map(sum, columns)
        precision, recall, f1 = quality_figures((tp, fp, fn), len(pairs))
        cis = sampler.intervals(columns, quality_figures) if tp + fp + fn else [None, None, None]
        rows.append(TagAgreement(code, names.get(code, code), tp, fp, fn, len(pairs) - tp - fp - fn, precision, recall,
                                 f1, cohen_kappa(tp, fp, fn, len(pairs) - tp - fp - fn),
                                 [i for i, auto, ref in pairs if (code in auto) != (code in ref)], *cis))
    reference = f"annotator {against}" if against is not None else "final tags of reviewed items (settled where settled)"
    return rows, len(pairs), reference


def agreement_report(store: RunStore, annotators: Sequence[str] | None = None, against: str | None = None,
                     draws: int = DRAWS) -> AgreementReport:
    """Everything ``A`` and ``n2f agreement`` show, read from the store once."""
    engine, _ = run_settings(store)
    taxonomy = {t.code: t.label for t in engine.taxonomy()}
    labels, annotated = labels_and_summaries(store)
    statuses = {item_id: summary.get("status", "error") for item_id, summary in annotated.items()}
    chosen = list(annotators) if annotators else labels.annotators
    for name in chosen + ([against] if against else []):
        if name not in labels.annotators:
            raise InputError(f"nobody named {name!r} reviewed an item of run {store.label} "
                             f"(annotators: {', '.join(labels.annotators) or 'none yet'})")
    common = [v for v in labels.items.values() if all(name in v.by_annotator for name in chosen)] if len(chosen) > 1 else []
    sets = [[v.by_annotator[name] for name in chosen] for v in common]
    codes = _codes(taxonomy, set().union(*(s for item in sets for s in item)) if sets else set())
    names = {**labels.names, **taxonomy}
    rows, overall, identical = group_figures(sets, codes, names, draws)
    pairs = [pair_of(labels, a, b, codes, draws if len(chosen) > 2 else 0) for a, b in combinations(chosen, 2)]
    if len(pairs) == 1 and overall is not None:  # two people: the pair's items are the ones above
        pairs[0].percent, pairs[0].kappa = overall.percent, overall.kappa
    quality, quality_n, reference = tagger_quality(labels, statuses, taxonomy, against, draws)
    progress = {name: sum(name in v.by_annotator for v in labels.items.values()) for name in labels.annotators}
    study = load_study(store)
    alpha, alpha_overall = alphas(labels, chosen, taxonomy, names, draws)
    return AgreementReport(chosen, len(sets), rows, overall, identical, pairs, labels.queue(), reference, quality,
                           quality_n, progress, study.progress(labels) if study else {}, len(study.items) if study else 0,
                           alpha, alpha_overall, forced_events(store.annotations().events()))


def alphas(labels: RunLabels, chosen: Sequence[str], taxonomy: dict[str, str], names: dict[str, str],
           draws: int) -> tuple[list[AlphaFigure], AlphaFigure | None]:
    """Krippendorff's alpha of the chosen annotators over every item two or more of them reviewed."""
    sets = [[v.by_annotator[name] for name in chosen if name in v.by_annotator] for v in labels.items.values()]
    sets = [item for item in sets if len(item) >= 2]
    codes = _codes(taxonomy, set().union(*(s for item in sets for s in item)) if sets else set())
    return label_alphas(sets, codes, names, draws)
