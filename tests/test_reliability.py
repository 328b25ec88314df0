"""Krippendorff's alpha against Krippendorff's own worked example and the ``krippendorff`` package."""

from __future__ import annotations

import math
import random

import krippendorff
import pytest

from sessions.study.reliability import alpha_nominal, binary_alpha, binary_columns, label_alphas

NA = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: nominal data, 4 observers,
# 12 units, missing values; the paper works it out to alpha = 0.743.
EXAMPLE = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    "C": [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
}


def units_of(matrix: list[list]) -> list[list]:
    """Coder-by-unit rows -> per unit, the values given (missing ones left out)."""
    return [[row[u] for row in matrix if row[u] is not None] for u in range(len(matrix[0]))]


def package_alpha(matrix: list[list]) -> float:
    data = [[math.nan if v is None else v for v in row] for row in matrix]
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def test_the_worked_example_of_krippendorff_2011_gives_0_743():
    matrix = list(EXAMPLE.values())
    alpha = alpha_nominal(units_of(matrix))
    assert round(alpha, 3) == 0.743
    assert alpha == pytest.approx(package_alpha(matrix), abs=1e-12)


def random_design(rng: random.Random, coders: int, units: int, values: int, missing: float) -> list[list]:
    return [[rng.randrange(values) if rng.random() > missing else None for _ in range(units)] for _ in range(coders)]


@pytest.mark.parametrize("seed", range(30))
def test_alpha_equals_the_package_on_random_incomplete_designs(seed):
    rng = random.Random(seed)
    matrix = random_design(rng, rng.randint(2, 6), rng.randint(5, 60), rng.randint(2, 5), rng.uniform(0, 0.6))
    ours = alpha_nominal(units_of(matrix))
    pairable = [u for u in units_of(matrix) if len(u) >= 2]
    if len({v for u in pairable for v in u}) < 2:  # one value throughout: undefined (the package refuses)
        assert ours is None
        return
    assert ours == pytest.approx(package_alpha(matrix), abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_the_binary_column_form_equals_the_general_one(seed):
    rng = random.Random(100 + seed)
    matrix = random_design(rng, rng.randint(2, 7), rng.randint(3, 40), 2, rng.uniform(0, 0.5))
    votes = [[bool(v) for v in unit] for unit in units_of(matrix)]
    columns, scale = binary_columns(votes)
    assert binary_alpha([sum(c) for c in columns], scale) == pytest.approx(alpha_nominal(units_of(matrix)))


def test_label_alphas_per_code_and_pooled_with_intervals_and_counts():
    rng = random.Random(7)
    codes = ["omission", "redundancy", "variable_misuse"]
    people = 3
    sets, matrices = [], {code: [[None] * 50 for _ in range(people)] for code in codes}
    for item in range(50):
        who = [p for p in range(people) if rng.random() < 0.7]
        given = []
        for p in who:
            labels = frozenset(c for c in codes if rng.random() < 0.35)
            given.append(labels)
            for code in codes:
                matrices[code][p][item] = int(code in labels)
        sets.append(given)
    rows, pooled = label_alphas(sets, codes, {}, draws=300)
    pairable = [s for s in sets if len(s) >= 2]
    for row in rows:
        assert row.alpha == pytest.approx(package_alpha(matrices[row.code]), abs=1e-9)
        assert row.items == len(pairable) and row.values == sum(len(s) for s in pairable)
        assert row.ci[0] <= row.alpha <= row.ci[1]
    # pooled: every (item, code) pair a unit
    stacked = [sum((m[p] for m in matrices.values()), []) for p in range(people)]
    assert pooled.alpha == pytest.approx(package_alpha(stacked), abs=1e-9)
    assert pooled.values == len(codes) * rows[0].values
