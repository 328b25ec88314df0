"""Krippendorff's alpha for nominal labels: any number of annotators, labels missing where people did not review.

Fleiss' and Cohen's kappa need every annotator on every item, so over partly overlapping
assignments they drop most items. Alpha uses every item at least two people labelled
(Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011): with ``m_u`` values
in unit ``u``, ``n_uc`` of them the value ``c``, ``n = sum m_u`` over pairable units
(``m_u >= 2``) and ``n_c`` the value's total,

    alpha = 1 - (n - 1) * sum_u (m_u^2 - sum_c n_uc^2) / (m_u - 1)  /  (n^2 - sum_c n_c^2)

which is ``1 - D_o / D_e`` with the nominal metric. Alpha is undefined (None) when only
one value occurs at all (``D_e = 0``); exact fractions make the degenerate cases exact.

For labels, each code is a yes/no variable per item (the code is in a person's label
set or not) and "pooled" takes every (item, code) pair as a unit. Per item that is three
integers (the scaled disagreement, the yes-votes and the values), so the bootstrap over
items (``sessions.study.statistics.Resampler``) sums columns as the kappa figures do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Hashable, Sequence

from sessions.study.statistics import Resampler

Units = Sequence[Sequence[Hashable]]  # each unit: the values given to it (missing ones left out)


def alpha_nominal(units: Units) -> float | None:
    """Krippendorff's alpha (nominal) of units given as the values each received."""
    observed = Fraction(0)
    totals: Counter[Hashable] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        totals.update(counts)
        observed += Fraction(m * m - sum(c * c for c in counts.values()), m - 1)
    n = sum(totals.values())
    expected = n * n - sum(c * c for c in totals.values())
    if expected == 0:
        return None
    return float(1 - (n - 1) * observed / expected)


def binary_alpha(sums: Sequence[int], scale: int) -> float | None:
    """Alpha of yes/no units from column sums: scaled disagreement, yes-votes, values (see ``binary_columns``)."""
    disagreement, yes, n = sums
    expected = 2 * yes * (n - yes)
    if expected == 0:
        return None
    return float(1 - Fraction((n - 1) * disagreement, scale * expected))


def binary_columns(votes: Sequence[Sequence[bool]]) -> tuple[list[list[int]], int]:
    """Per unit, the three integer columns of ``binary_alpha`` and their common scale.

    A unit with ``m`` values of which ``y`` say yes disagrees by ``2 y (m - y) / (m - 1)``;
    scaling by the least common multiple of the ``m - 1`` keeps it an integer."""
    sizes = [len(v) for v in votes]
    scale = lcm(*(m - 1 for m in sizes if m >= 2)) if any(m >= 2 for m in sizes) else 1
    yes = [sum(v) if len(v) >= 2 else 0 for v in votes]
    disagreement = [2 * y * (m - y) * scale // (m - 1) if m >= 2 else 0 for y, m in zip(yes, sizes)]
    return [disagreement, yes, [m if m >= 2 else 0 for m in sizes]], scale


@dataclass
class AlphaFigure:
    """Alpha on one code (``*``: every code pooled) over ``items`` items holding ``values`` labels."""

    code: str
    label: str
    items: int
    values: int
    alpha: float | None
    ci: tuple[float, float] | None


def label_alphas(sets: Sequence[Sequence[frozenset[str]]], codes: Sequence[str], names: dict[str, str],
                 draws: int) -> tuple[list[AlphaFigure], AlphaFigure | None]:
    """Per code and pooled alpha of items given as the label sets of the people who labelled each (two or more)."""
    sets = [item for item in sets if len(item) >= 2]
    if not sets or not codes:
        return [], None
    sampler = Resampler(len(sets), draws)
    rows, pooled = [], None
    for code in codes:
        columns, scale = binary_columns([[code in s for s in item] for item in sets])
        pooled = columns if pooled is None else [[x + y for x, y in zip(p, c)] for p, c in zip(pooled, columns)]
        rows.append(_figure(code, names.get(code, code), columns, scale, sampler))
    assert pooled is not None, "codes is not empty"
    return rows, _figure("*", "all codes pooled", pooled, scale, sampler)


def _figure(code: str, label: str, columns: list[list[int]], scale: int, sampler: Resampler) -> AlphaFigure:
    def stat(sums: Sequence[int], _n: int) -> tuple[float | None]:
        return (binary_alpha(sums, scale),)

    value = stat([sum(c) for c in columns], sampler.n)[0]
    ci = sampler.intervals(columns, stat)[0] if value is not None and sampler.draws else None
    return AlphaFigure(code, label, sum(1 for m in columns[2] if m), sum(columns[2]), value, ci)
