"""Report pieces every engine needs: accuracy with an interval, counts by status and tag."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

from engines.core import STATUSES, UNJUDGED, ItemResult, Table, TagType


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
    counts = Counter(r.status for r in results)
    return {s: counts.get(s, 0) for s in STATUSES}


#: A score of 1 under this key sets the item aside: the judge could not decide it (a Z3
#: ``unknown``), so, as the paper threw such items out, no figure counts it; reports count it apart.
SET_ASIDE = "set_aside"


def scored(results: Sequence[ItemResult]) -> list[ItemResult]:
    """Items judged by the scorer: infrastructure errors and scorer failures are not model mistakes, and
    items the judge set aside (``SET_ASIDE``) are neither right nor wrong."""
    return [r for r in results if r.status not in UNJUDGED and r.scores.get(SET_ASIDE, 0.0) < 1.0]


def set_aside(results: Sequence[ItemResult]) -> list[ItemResult]:
    """The items the judge could not decide (counted apart from every figure)."""
    return [r for r in results if r.status not in UNJUDGED and r.scores.get(SET_ASIDE, 0.0) >= 1.0]


def accuracy(results: Sequence[ItemResult]) -> float:
    judged = scored(results)
    return sum(r.status == "correct" for r in judged) / len(judged) if judged else 0.0


def accuracy_interval(results: Sequence[ItemResult]) -> tuple[float, float] | None:
    """The 95% Wilson interval of ``accuracy(results)``; None when no item is judged."""
    judged = scored(results)
    return wilson_interval(sum(r.status == "correct" for r in judged), len(judged)) if judged else None


def tag_counts(results: Iterable[ItemResult]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for r in results:
        for code in {t.code for t in r.tags}:
            counts[code] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def tag_table(name: str, title: str, results: Sequence[ItemResult], taxonomy: Sequence[TagType]) -> Table:
    """Items per tag, in taxonomy order, with a dash for tags that never occur (as the papers print).

    Only items not judged correct are counted: an error-type table counts the model's
    errors, and a tag on a correct item (a ``format_violation`` remark) is not one.
    """
    counts = tag_counts(r for r in results if r.status != "correct")
    rows = [[t.label, t.code, counts.get(t.code, 0) or "-"] for t in taxonomy]
    extra = sorted(set(counts) - {t.code for t in taxonomy})
    rows += [[code, code, counts[code]] for code in extra]
    return Table(name=name, title=title, columns=["error type", "code", "items"], rows=rows)


def accuracy_by(results: Sequence[ItemResult], key: str) -> Table:
    """Accuracy grouped by one ``meta`` key (graph type, depth, operator count...)."""
    groups: dict[str, list[int]] = {}  # value -> items, correct ones
    for r in scored(results):
        group = groups.setdefault(str(r.item.meta.get(key, "?")), [0, 0])
        group[0] += 1
        group[1] += r.status == "correct"
    rows = []
    for value in sorted(groups, key=_natural_key):
        n, ok = groups[value]
        lo, hi = wilson_interval(ok, n)
        rows.append([value, n, round(100 * ok / n, 2), f"{100 * lo:.1f}-{100 * hi:.1f}"])
    return Table(name=f"by {key}", title=f"Accuracy by {key}", columns=[key, "n", "accuracy %", "95% CI"], rows=rows)


def _natural_key(text: str) -> tuple[int | str, ...]:
    return tuple(int(p) if p.isdigit() else p for p in text.replace(":", " ").replace(",", " ").split())
