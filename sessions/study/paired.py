"""Two runs on the same items, compared pairwise: is B really better than A, or is it noise?

Items are matched by id and only those judged in both runs count (neither pending nor in
infrastructure ``error``). Two figures answer the question:

- **McNemar's exact test** on correct/wrong. Only the discordant items carry information:
  ``b`` items correct in A only, ``c`` in B only. Under "the runs are equally good" each
  discordant item goes either way with probability 1/2, so the two-sided p-value is
  ``min(1, 2 * P[X <= min(b, c)])`` for ``X ~ Binomial(b + c, 1/2)``, computed exactly
  with integers (1.0 when there is no discordant item).
- **A paired bootstrap interval** for the difference (A - B) of every metric of the
  engine's report: each draw resamples the matched items with replacement (seeded), the
  same draw for both runs, and recomputes the report on either side; the interval is the
  2.5th and 97.5th percentile of the differences. Pairing keeps what the two runs share
  (an item hard for both) out of the interval's width.

A metric that is an interval bound itself (``*_ci_low``, ``*_ci_high``) is left out, and
so is any metric a run's report gives only beside other runs (dedc's Table 1 pair).
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, replace
from math import comb
from typing import Any, Callable, Mapping, Sequence

from engines.contract import Engine
from engines.core import ItemResult, RunResults, Table
from sessions.study.statistics import Interval, percentile_interval

DRAWS = 1000
UNJUDGED = ("pending", "error")


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (see the module docstring)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2.0 ** n)


def paired_intervals(n: int, differences: Callable[[Sequence[int]], Mapping[str, float]], draws: int = DRAWS,
                     seed: int = 0) -> dict[str, Interval | None]:
    """Metric -> 95% interval of ``differences(indices)`` over ``draws`` resamples of ``range(n)``."""
    rng = random.Random(seed)
    values: dict[str, list[float]] = {}
    population = range(n)
    for _ in range(draws if n else 0):
        for metric, value in differences(rng.choices(population, k=n)).items():
            values.setdefault(metric, []).append(value)
    return {metric: percentile_interval(bucket) for metric, bucket in values.items()}


@dataclass
class MetricDifference:
    metric: str
    a: float
    b: float
    difference: float  # a - b
    ci: Interval | None


@dataclass
class PairedComparison:
    a: str
    b: str
    items: int  # matched items judged in both runs
    only_a: int  # correct in A only
    only_b: int  # correct in B only
    p_value: float
    metrics: list[MetricDifference] = field(default_factory=list)
    draws: int = DRAWS

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def table(self) -> Table:
        rows = [[m.metric, round(m.a, 4), round(m.b, 4), round(m.difference, 4),
                 "-" if m.ci is None else f"[{m.ci[0]:.4f}, {m.ci[1]:.4f}]"] for m in self.metrics]
        note = (f"{self.items} matched item(s) judged in both runs; correct in A only {self.only_a}, in B only "
                f"{self.only_b}: McNemar's exact test p = {self.p_value:.4g}; intervals: paired bootstrap, "
                f"{self.draws:,} draws over the matched items")
        return Table(name="Paired comparison", title=f"A = {self.a} against B = {self.b} on matched items",
                     columns=["metric", "A", "B", "A - B", "95% CI of A - B"], rows=rows, note=note)


def _metrics(engine: Engine[Any], run: RunResults, results: list[ItemResult]) -> dict[str, float]:
    report = engine.report(replace(run, results=results), [])
    return {k: float(v) for k, v in report.metrics.items()
            if isinstance(v, (int, float)) and not k.endswith(("_ci_low", "_ci_high"))}


def paired_comparison(engine: Engine[Any], run_a: RunResults, run_b: RunResults, draws: int = DRAWS,
                      seed: int = 0) -> PairedComparison:
    """McNemar's test and the paired bootstrap intervals of the two runs on their matched, judged items."""
    by_id = {r.item.id: r for r in run_b.results if r.status not in UNJUDGED}
    pairs = [(r, by_id[r.item.id]) for r in run_a.results if r.status not in UNJUDGED and r.item.id in by_id]
    side_a, side_b = [a for a, _ in pairs], [b for _, b in pairs]
    only_a = sum(a.status == "correct" and b.status != "correct" for a, b in pairs)
    only_b = sum(b.status == "correct" and a.status != "correct" for a, b in pairs)
    point_a, point_b = _metrics(engine, run_a, side_a), _metrics(engine, run_b, side_b)
    shared = [k for k in point_a if k in point_b]

    def differences(indices: Sequence[int]) -> dict[str, float]:
        got_a = _metrics(engine, run_a, [side_a[i] for i in indices])
        got_b = _metrics(engine, run_b, [side_b[i] for i in indices])
        return {k: got_a[k] - got_b[k] for k in shared if k in got_a and k in got_b}

    intervals = paired_intervals(len(pairs), differences, draws, seed) if pairs else {}
    metrics = [MetricDifference(k, point_a[k], point_b[k], point_a[k] - point_b[k], intervals.get(k)) for k in shared]
    return PairedComparison(run_a.name, run_b.name, len(pairs), only_a, only_b, mcnemar_exact(only_a, only_b),
                            metrics, draws)
