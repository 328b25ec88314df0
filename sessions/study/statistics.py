"""Agreement and tagger-quality figures, and their 95% bootstrap intervals, from per-item counts.

Every figure here is a function of a few column sums over items (cells of a 2x2 table,
yes-votes per item), so one bootstrap draw is "sum each column over a resample of the
items". The resamples are drawn once per item-set size (``Resampler``) and shared by
every figure, and a column sum over a resample is a C-level gather of the resample's
weights at the column's non-zero entries: a thousand draws over 500 items cost a few
milliseconds per figure instead of a Python loop per item.

Conventions (the same in the point figure and in every draw):

- Cohen's kappa is ``(p_o - p_e) / (1 - p_e)``; when ``p_e = 1`` (both raters gave one
  same answer throughout, so ``p_o = 1``: typically a code nobody used) it is undefined
  (None, printed "—" with ``KAPPA_UNDEFINED`` as the reason), not 1: 0/0 says nothing
  about agreement, and a 1.00 there would read as perfect agreement on a code never seen.
- Fleiss' kappa for one yes/no label over items each judged by ``m`` people, with
  ``y_i`` of them saying yes: ``P_i = (y_i(y_i-1) + (m-y_i)(m-y_i-1)) / (m(m-1))``,
  ``P = mean P_i``, ``p = sum y_i / (n m)``, ``P_e = p^2 + (1-p)^2``,
  ``kappa = (P - P_e) / (1 - P_e)`` (undefined when ``P_e = 1``, as Cohen's). ``P`` is also the percent
  agreement for more than two people (the share of agreeing pairs of judgements).
- The interval is the 2.5th and 97.5th percentile of the figure over the draws in
  which it is defined; None when it is defined in none.
"""

from __future__ import annotations

import random
from array import array
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from operator import itemgetter, mul
from typing import Callable, Sequence

DRAWS = 1000
Interval = tuple[float, float]
KAPPA_UNDEFINED = "kappa undefined: everyone gave one same answer on every item (chance agreement 1, 0/0)"
Stat = Callable[[Sequence[int], int], tuple[float | None, ...]]  # (column sums, item count) -> figures


def ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of a 2x2 table (rater 1 yes/no by rater 2 yes/no); None when the table is empty
    or both raters gave one same answer throughout (p_e = 1: 0/0).

    Computed on integer counts scaled by n^2, so the degenerate case p_e = 1 is detected exactly.
    """
    n = tp + fp + fn + tn
    if n == 0:
        return None
    chance = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)  # p_e * n^2
    if chance == n * n:
        return None
    return (n * (tp + tn) - chance) / (n * n - chance)


def fleiss_from_sums(yes: int, agreeing_pairs: int, items: int, raters: int) -> tuple[float | None, float | None]:
    """(percent agreement P, Fleiss' kappa) from the sums over items of ``y_i`` and ``y_i(y_i-1) + (m-y_i)(m-y_i-1)``."""
    if items == 0 or raters < 2:
        return None, None
    observed = agreeing_pairs / (items * raters * (raters - 1))
    p = yes / (items * raters)
    chance = p * p + (1 - p) * (1 - p)
    if chance >= 1.0:
        return observed, None
    return observed, (observed - chance) / (1 - chance)


def fleiss_kappa(yes_votes: Sequence[int], raters: int) -> float | None:
    """Fleiss' kappa of one yes/no label: ``yes_votes[i]`` of ``raters`` people said yes on item i."""
    pairs = sum(agreeing_pairs(y, raters) for y in yes_votes)
    return fleiss_from_sums(sum(yes_votes), pairs, len(yes_votes), raters)[1]


def agreeing_pairs(yes: int, raters: int) -> int:
    """Ordered pairs of people who gave an item the same answer, when ``yes`` of ``raters`` said yes."""
    no = raters - yes
    return yes * (yes - 1) + no * (no - 1)


def disagreeing_pairs(yes: int, raters: int) -> int:
    """Ordered pairs of people who gave an item different answers: zero on a unanimous item."""
    return 2 * yes * (raters - yes)


def pair_figures(sums: Sequence[int], items: int, decisions_per_item: int = 1) -> tuple[float | None, float | None]:
    """(percent agreement, Cohen's kappa) from the sums of the both-yes, first-only and second-only columns."""
    both, first, second = sums
    n = items * decisions_per_item
    neither = n - both - first - second
    return ratio(both + neither, n), cohen_kappa(both, first, second, neither)


def quality_figures(sums: Sequence[int], items: int) -> tuple[float | None, float | None, float | None]:
    """(precision, recall, F1) of a tagger from the sums of its tp, fp and fn columns."""
    tp, fp, fn = sums
    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)


@dataclass
class Resampler:
    """``draws`` resamples (with replacement, seeded) of ``n`` items, shared by every figure over them.

    A resample is kept as how many times it picked each item (a weight per item), so a
    column's sum over it is the sum of the weights at the column's non-zero entries: one
    C-level gather per column and draw, whose cost follows the non-zero entries (labels
    are sparse; columns are built so that the common case, agreement, is zero).
    """

    n: int
    draws: int = DRAWS
    seed: int = 0
    _weights: list[list[int]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._weights = _weights(self.n, self.draws, self.seed)

    def intervals(self, columns: Sequence[Sequence[int]], stat: Stat) -> list[Interval | None]:
        """The 95% interval of each figure ``stat`` returns, over the draws."""
        values: list[list[float]] = [[] for _ in stat([sum(column) for column in columns], self.n)]
        gathers = [_gather(column) for column in columns]
        for weights in self._weights:
            figures = stat([gather(weights) for gather in gathers], self.n)
            for bucket, value in zip(values, figures):
                if value is not None:
                    bucket.append(value)
        return [percentile_interval(bucket) for bucket in values]


def _gather(column: Sequence[int]) -> Callable[[list[int]], int]:
    """weights -> sum of weight * value over the column's non-zero entries."""
    entries = [(i, int(v)) for i, v in enumerate(column) if v]
    if not entries:
        return lambda weights: 0
    positions = [i for i, _ in entries]
    values = [v for _, v in entries]
    if len(positions) == 1:
        (position,), (value,) = positions, values
        return lambda weights: weights[position] * value
    pick = itemgetter(*positions)
    if all(v == 1 for v in values):
        return lambda weights: sum(pick(weights))
    return lambda weights: sum(map(mul, values, pick(weights)))


@lru_cache(maxsize=8)
def _weights(n: int, draws: int, seed: int) -> list[list[int]]:
    """``draws`` resamples of ``n`` positions as weights per position, the same for the same arguments
    (figures over item sets of one size share them).

    Positions are 32-bit random words modulo ``n``, made and counted in C (``randbytes``,
    ``array``, ``map``, ``Counter``): a Python call per position would cost half a second for a
    thousand draws of 500. The modulo favours some positions by at most n / 2^32, far below the
    bootstrap's own noise.
    """
    rng = random.Random(seed)
    out = []
    for _ in range(draws if n else 0):
        words = array("I")
        words.frombytes(rng.randbytes(words.itemsize * n))
        counts = Counter(map(n.__rmod__, words))
        out.append(list(map(counts.get, range(n), repeat(0))))
    return out


def percentile_interval(values: list[float]) -> Interval | None:
    if not values:
        return None
    values.sort()
    last = len(values) - 1
    return values[int(0.025 * last)], values[int(round(0.975 * last))]
