"""Agreement statistics against hand computations; bootstrap intervals that are seeded and bracket the figure."""

from __future__ import annotations

import pytest

from sessions.study.statistics import (Resampler, cohen_kappa, fleiss_kappa, fleiss_from_sums, pair_figures,
                                 percentile_interval, quality_figures)


def test_fleiss_kappa_of_a_small_table_worked_by_hand():
    # 4 items, 3 raters, yes-votes 3, 0, 2, 1.
    # P_i = (y(y-1) + (3-y)(2-y)) / 6: 1, 1, 1/3, 1/3 -> P = 2/3; p = 6/12 = 1/2 -> P_e = 1/2;
    # kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    assert fleiss_kappa([3, 0, 2, 1], 3) == pytest.approx(1 / 3)
    assert fleiss_kappa([3, 3, 0], 3) == 1.0  # unanimous on every item, both answers used
    assert fleiss_kappa([0, 0, 0], 3) is None  # nobody said yes: P_e = 1, 0/0
    assert fleiss_kappa([], 3) is None


def test_fleiss_with_two_raters_is_scotts_pi_on_the_pooled_margins():
    # two raters, 2x2 table both 20 / first only 5 / second only 10 / neither 15 (Cohen 0.4):
    # pooled yes share p = (25 + 30) / 100 = 0.55, P_e = 0.55^2 + 0.45^2 = 0.505, P = 0.7,
    # pi = (0.7 - 0.505) / 0.495 = 0.3939...
    yes = [2] * 20 + [1] * 15 + [0] * 15
    assert fleiss_kappa(yes, 2) == pytest.approx(0.195 / 0.495)


def test_pair_and_quality_figures_from_column_sums():
    percent, kappa = pair_figures([20, 5, 10], 50)
    assert percent == pytest.approx(0.7) and kappa == pytest.approx(cohen_kappa(20, 5, 10, 15))
    precision, recall, f1 = quality_figures([6, 2, 4], 20)  # tp 6, fp 2, fn 4
    assert precision == pytest.approx(0.75) and recall == pytest.approx(0.6) and f1 == pytest.approx(12 / 18)
    assert quality_figures([0, 0, 0], 5) == (None, None, None)
    observed, kappa = fleiss_from_sums(yes=6, agreeing_pairs=16, items=4, raters=3)  # the 4-item table above
    assert observed == pytest.approx(2 / 3) and kappa == pytest.approx(1 / 3)


def test_bootstrap_intervals_are_seeded_and_bracket_the_figure():
    both = [1] * 20 + [0] * 30
    first = [0] * 20 + [1] * 5 + [0] * 25
    second = [0] * 25 + [1] * 10 + [0] * 15
    stat = lambda sums, n: pair_figures(sums, n)  # noqa: E731
    (percent_ci, kappa_ci) = Resampler(50, draws=400, seed=3).intervals([both, first, second], stat)
    assert Resampler(50, draws=400, seed=3).intervals([both, first, second], stat) == [percent_ci, kappa_ci]
    assert percent_ci[0] < 0.7 < percent_ci[1] and kappa_ci[0] < 0.4 < kappa_ci[1]
    assert percent_ci == (0.56, 0.82)  # seed 3's 400 draws, their 2.5th and 97.5th percentiles
    assert kappa_ci == pytest.approx((0.15254237288135594, 0.6293245469522241), abs=1e-12)
    assert Resampler(0).intervals([[]], lambda sums, n: (None,)) == [None]


def test_percentile_interval():
    assert percentile_interval([]) is None
    assert percentile_interval([float(v) for v in range(1001)]) == (25.0, 975.0)
