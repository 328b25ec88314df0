"""Two runs compared on matched items: McNemar's exact test by hand, the paired bootstrap's coverage, the report."""

from __future__ import annotations

import json
import random

import pytest

from n2f_tui.cli import main
from sessions.study.paired import mcnemar_exact, paired_intervals


def test_mcnemar_exact_equals_the_hand_computation():
    # 2x2 table of 40 matched items:      B correct  B wrong
    #                         A correct       21        7
    #                         A wrong          2       10
    # Only the discordant 7 + 2 = 9 items count. Under H0 each goes A's way with probability 1/2:
    # P[X <= 2] for X ~ Bin(9, 1/2) = (C(9,0) + C(9,1) + C(9,2)) / 2^9 = (1 + 9 + 36) / 512 = 46/512;
    # two-sided p = 2 * 46/512 = 92/512 = 0.1796875.
    assert mcnemar_exact(7, 2) == 92 / 512
    assert mcnemar_exact(2, 7) == 92 / 512
    # b = c = 3: P[X <= 3] for Bin(6, 1/2) = (1 + 6 + 15 + 20) / 64 = 42/64 > 1/2, so p is capped at 1.
    assert mcnemar_exact(3, 3) == 1.0
    # 10 discordant items all one way: p = 2 / 2^10.
    assert mcnemar_exact(10, 0) == 2 / 1024
    assert mcnemar_exact(0, 0) == 1.0


def test_the_paired_bootstrap_interval_covers_the_true_difference_in_a_simulation():
    """Items of varying difficulty, both runs see the same items; A is right with p_i + 0.1, B with p_i.

    Over 200 simulated studies the 95% interval of the accuracy difference should hold the true 0.1 in
    about 95% of them; we ask for at least 88% (the binomial's 99.9% lower bound for 200 trials at 0.95
    is about 0.90; percentile intervals on 80 items run a little narrow)."""
    rng = random.Random(2026)
    covered = 0
    trials, n, truth = 200, 80, 0.1
    for trial in range(trials):
        difficulty = [rng.uniform(0.2, 0.8) for _ in range(n)]
        shared = [rng.random() for _ in range(n)]  # the same draw for both runs: paired, correlated outcomes
        a = [int(u < p + truth) for u, p in zip(shared, difficulty)]
        b = [int(u < p) for u, p in zip(shared, difficulty)]

        def difference(indices, a=a, b=b):
            return {"accuracy": (sum(a[i] for i in indices) - sum(b[i] for i in indices)) / len(indices)}

        low, high = paired_intervals(n, difference, draws=400, seed=trial)["accuracy"]
        covered += low <= truth <= high
    assert covered / trials >= 0.88


def test_report_against_another_run_has_mcnemar_and_paired_intervals(capsys):
    for model, name in (("sim:error_rate=0.5", "a"), ("oracle", "b")):
        assert main(["run", "dedc", "-m", model, "-n", "30", "--name", name, "-q"]) == 0
    capsys.readouterr()
    assert main(["report", "a", "--against", "b", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    paired = summary["paired"][0]
    wrong = summary["counts"].get("wrong", 0) + summary["counts"].get("unparseable", 0)
    assert paired["a"] == "a" and paired["b"] == "b" and paired["items"] == 30
    assert paired["only_a"] == 0 and paired["only_b"] == wrong > 0  # the oracle is right everywhere
    assert paired["p_value"] == pytest.approx(mcnemar_exact(0, wrong))
    accuracy = next(m for m in paired["metrics"] if m["metric"] == "accuracy")
    assert accuracy["difference"] == pytest.approx(summary["accuracy"] - 1.0)
    low, high = accuracy["ci"]
    assert low <= accuracy["difference"] <= high <= 0
    table = next(t for t in summary["tables"] if t["name"] == "Paired comparison")
    assert "McNemar's exact test" in table["note"] and table["rows"][0][0] == "accuracy"
