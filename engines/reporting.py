"""Report pieces every engine needs: accuracy with an interval, counts by status and tag.

They count a run's results whether each is an item's own or they come as ``Rows`` (equal results
once, with how many items each stands for): a report of 50,000 dedc results is then some 450
rows, and what these pieces count costs what they show.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from itertools import accumulate, chain, repeat
from typing import Callable, Hashable, Iterable, Iterator, Sequence, TypeVar

from engines.core import STATUSES, UNJUDGED, ItemResult, OnDemand, Table, TagType

K = TypeVar("K", bound=Hashable)


class Rows(OnDemand[ItemResult]):
    """A run's results as distinct ``ItemResult`` objects, each with the number of items it stands for: as a
    sequence, each object that many times over (rows in turn); ``counted`` gives the pairs themselves."""

    __slots__ = ("_pairs", "_ends")

    def __init__(self, pairs: Iterable[tuple[ItemResult, int]]):
        self._pairs = [(row, n) for row, n in pairs if n > 0]
        self._ends = list(accumulate(n for _, n in self._pairs))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __iter__(self) -> Iterator[ItemResult]:
        return chain.from_iterable(repeat(row, n) for row, n in self._pairs)

    def element(self, index: int) -> ItemResult:
        return self._pairs[bisect_right(self._ends, index)][0]

    def pairs(self) -> list[tuple[ItemResult, int]]:
        return self._pairs


def counted(results: Iterable[ItemResult]) -> Iterable[tuple[ItemResult, int]]:
    """Each distinct result with the number of items it stands for (one each, for an item's own results)."""
    return results.pairs() if isinstance(results, Rows) else zip(results, repeat(1))


def keep(results: Sequence[ItemResult], wanted: Callable[[ItemResult], bool]) -> Sequence[ItemResult]:
    """The results ``wanted`` holds for, as ``Rows`` when they are rows (a list otherwise)."""
    if isinstance(results, Rows):
        return Rows((row, n) for row, n in results.pairs() if wanted(row))
    return [r for r in results if wanted(r)]


def count(results: Iterable[ItemResult], wanted: Callable[[ItemResult], bool]) -> int:
    """How many of the results ``wanted`` holds for."""
    return sum(n for r, n in counted(results) if wanted(r))


def correct(results: Iterable[ItemResult]) -> int:
    """How many of the results are correct."""
    return count(results, lambda r: r.status == "correct")


def total(results: Iterable[ItemResult], value: Callable[[ItemResult], float]) -> float:
    """The sum of ``value`` over the results, a row's times its items: the same sum as item by item for the
    scores the engines average (0 or 1, and truth-table fractions of a power of two: exact in a float)."""
    return sum(n * value(r) for r, n in counted(results))


def grouped(results: Iterable[ItemResult], key: Callable[[ItemResult], K]) -> dict[K, Sequence[ItemResult]]:
    """The results by ``key``, in the order each key first comes; ``Rows`` stay rows."""
    groups: dict[K, list[tuple[ItemResult, int]]] = {}
    for r, n in counted(results):
        groups.setdefault(key(r), []).append((r, n))
    if isinstance(results, Rows):
        return {k: Rows(pairs) for k, pairs in groups.items()}
    return {k: [r for r, _ in pairs] for k, pairs in groups.items()}


def joined(*parts: Iterable[ItemResult]) -> Rows:
    """The results of every part in turn, as rows (an item's own result is a row of one)."""
    return Rows(chain.from_iterable(map(counted, parts)))


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval for a proportion; (0, 0) when there is no data.

    Wilson rather than the normal approximation because per-setting item counts are
    small (323) and accuracies sit near 0 or 1 where the normal interval leaves [0, 1].
    """
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def status_counts(results: Iterable[ItemResult]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for r, n in counted(results):
        counts[r.status] += n
    return {s: counts.get(s, 0) for s in STATUSES}


#: A score of 1 under this key sets the item aside: the judge could not decide it (a Z3
#: ``unknown``), so, as the paper threw such items out, no figure counts it; reports count it apart.
SET_ASIDE = "set_aside"


def scored(results: Sequence[ItemResult]) -> Sequence[ItemResult]:
    """Items judged by the scorer: infrastructure errors and scorer failures are not model mistakes, and
    items the judge set aside (``SET_ASIDE``) are neither right nor wrong."""
    return keep(results, lambda r: r.status not in UNJUDGED and r.scores.get(SET_ASIDE, 0.0) < 1.0)


def set_aside(results: Sequence[ItemResult]) -> Sequence[ItemResult]:
    """The items the judge could not decide (counted apart from every figure)."""
    return keep(results, lambda r: r.status not in UNJUDGED and r.scores.get(SET_ASIDE, 0.0) >= 1.0)


def accuracy(results: Sequence[ItemResult]) -> float:
    judged = scored(results)
    return correct(judged) / len(judged) if judged else 0.0


def accuracy_interval(results: Sequence[ItemResult]) -> tuple[float, float] | None:
    """The 95% Wilson interval of ``accuracy(results)``; None when no item is judged."""
    judged = scored(results)
    return wilson_interval(correct(judged), len(judged)) if judged else None


def tag_counts(results: Iterable[ItemResult]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for r, n in counted(results):
        for code in {t.code for t in r.tags}:
            counts[code] += n
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def tag_table(name: str, title: str, results: Sequence[ItemResult], taxonomy: Sequence[TagType]) -> Table:
    """Items per tag, in taxonomy order, with a dash for tags that never occur (as the papers print).

    Only items not judged correct are counted: an error-type table counts the model's
    errors, and a tag on a correct item (a ``format_violation`` remark) is not one.
    """
    counts = tag_counts(keep(results, lambda r: r.status != "correct"))
    rows = [[t.label, t.code, counts.get(t.code, 0) or "-"] for t in taxonomy]
    extra = sorted(set(counts) - {t.code for t in taxonomy})
    rows += [[code, code, counts[code]] for code in extra]
    return Table(name=name, title=title, columns=["error type", "code", "items"], rows=rows)


def accuracy_by(results: Sequence[ItemResult], key: str) -> Table:
    """Accuracy grouped by one ``meta`` key (graph type, depth, operator count...)."""
    groups: dict[str, list[int]] = {}  # value -> items, correct ones
    for r, items in counted(scored(results)):
        group = groups.setdefault(str(r.item.meta.get(key, "?")), [0, 0])
        group[0] += items
        group[1] += items * (r.status == "correct")
    rows = []
    for value in sorted(groups, key=_natural_key):
        n, ok = groups[value]
        lo, hi = wilson_interval(ok, n)
        rows.append([value, n, round(100 * ok / n, 2), f"{100 * lo:.1f}-{100 * hi:.1f}"])
    return Table(name=f"by {key}", title=f"Accuracy by {key}", columns=[key, "n", "accuracy %", "95% CI"], rows=rows)


def _natural_key(text: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in text.replace(":", " ").replace(",", " ").split())
