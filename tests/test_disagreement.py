"""Annotators who disagree: the disputed rule, the default annotators, identical sets, the tagger's reference.

Three people label six wrong items of one run (bob skips the sixth)::

    item   ada                   bob          cy
    w0     omission              omission     omission
    w1     omission              redundancy   omission      <- disputed (bob)
    w2     redundancy            redundancy   -             <- disputed (cy)
    w3     -                     -            -
    w4     omission redundancy   omission     omission redundancy   <- disputed (bob)
    w5     omission              (none)       omission

Hand computations (on ``omission``):
- Fleiss' kappa over the five items all three reviewed: yes-votes 3, 2, 0, 0, 3 of m = 3;
  P_i = 1, 1/3, 1, 1, 1 so P = 13/15; p = 8/15, P_e = (64 + 49)/225 = 113/225;
  kappa = (13/15 - 113/225) / (1 - 113/225) = 82/112 = 41/56.
- Krippendorff's alpha over all six items (w5 has two values): n = 17 values, 10 of them yes;
  only w1 disagrees, by 2*2*1/(3-1) = 2; alpha = 1 - (17-1) * 2 / (2*10*7) = 1 - 32/140 = 27/35.
- ada and bob alone (Cohen) on w0-w4: both 2, ada only 1, bob only 0, neither 2; p_o = 4/5,
  p_e = (3*2 + 2*3)/25 = 12/25; kappa = (20 - 12)/(25 - 12) = 8/13.
- identical label sets on w0-w4: w0 and w3 only, 2/5.
"""

from __future__ import annotations

import krippendorff
import pytest

from n2f_tui.cli import main
from sessions.study.agreement import agreement_report
from sessions.study.labels import store_labels
from sessions.store.runs import RunStore

LABELS = {
    "ada": [{"omission"}, {"omission"}, {"redundancy"}, set(), {"omission", "redundancy"}, {"omission"}],
    "bob": [{"omission"}, {"redundancy"}, {"redundancy"}, set(), {"omission"}, None],
    "cy": [{"omission"}, {"omission"}, set(), set(), {"omission", "redundancy"}, {"omission"}],
}


@pytest.fixture
def labelled(capsys) -> tuple[RunStore, list[str]]:
    assert main(["run", "dedc", "-m", "sim:error_rate=0.7", "-n", "30", "--name", "three", "-q"]) == 0
    capsys.readouterr()
    store = RunStore.open("three")
    ids = store.item_ids()
    wrong = [ids[i] for i, s in sorted(store.summaries().items()) if s["status"] == "wrong"][:6]
    assert len(wrong) == 6
    for name, sets in LABELS.items():
        log = store.annotations(name)
        for item_id, codes in zip(wrong, sets):
            if codes is None:
                continue
            for code in sorted(codes):
                log.add(item_id, "tag_add", code=code, label=code, blind=True)
            log.add(item_id, "reviewed", blind=True)
    return store, wrong


def test_any_two_different_sets_make_an_item_disputed_and_its_final_tags_automatic(labelled):
    store, wrong = labelled
    labels = store_labels(store)
    assert labels.queue() == [wrong[1], wrong[2], wrong[4]]
    assert labels.counts() == {"reviewed": 6, "settled": 0, "disputed": 3}
    assert all(labels.items[i].source == "disputed" for i in labels.queue())
    assert labels.items[wrong[5]].source == "reviewed" and labels.items[wrong[5]].final == {"omission"}
    assert labels.items[wrong[1]].final == labels.items[wrong[1]].auto  # unsettled: the automatic tags
    assert labels.items[wrong[0]].by_annotator == {name: frozenset({"omission"}) for name in LABELS}


def test_three_annotators_by_default_fleiss_alpha_and_identical_sets(labelled):
    store, wrong = labelled
    report = agreement_report(store, draws=200)
    assert report.annotators == ["ada", "bob", "cy"] and report.n == 5
    omission = next(t for t in report.tags if t.code == "omission")
    assert omission.method == "fleiss" and omission.kappa.value == pytest.approx(41 / 56)
    assert report.identical.value == pytest.approx(2 / 5)
    alpha = next(a for a in report.alpha if a.code == "omission")
    assert alpha.alpha == pytest.approx(27 / 35) and alpha.items == 6 and alpha.values == 17
    matrix = [[float("nan") if s is None else float("omission" in s) for s in sets] for sets in LABELS.values()]
    assert alpha.alpha == pytest.approx(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    assert report.queue == [wrong[1], wrong[2], wrong[4]]
    pairs = {(p.a, p.b): p for p in report.pairs}
    assert pairs[("ada", "bob")].disagreeing == [wrong[1], wrong[4]]
    assert pairs[("ada", "cy")].disagreeing == [wrong[2]]
    assert pairs[("bob", "cy")].n == 5 and pairs[("bob", "cy")].disagreeing == [wrong[1], wrong[2], wrong[4]]


def test_two_chosen_annotators_cohen_on_their_common_items(labelled):
    store, wrong = labelled
    report = agreement_report(store, ["ada", "bob"], draws=200)
    omission = next(t for t in report.tags if t.code == "omission")
    assert report.n == 5 and omission.method == "cohen" and omission.kappa.value == pytest.approx(8 / 13)
    assert report.identical.value == pytest.approx(3 / 5)  # w0, w2, w3
    assert report.pairs[0].by_code == {"omission": [wrong[1]], "redundancy": [wrong[1], wrong[4]]}


def test_the_tagger_is_measured_on_reviewed_items_that_are_not_disputed(labelled):
    store, wrong = labelled
    report = agreement_report(store, draws=200)
    reference = {wrong[0]: {"omission"}, wrong[3]: set(), wrong[5]: {"omission"}}  # disputed w1, w2, w4 left out
    ids = store.item_ids()
    auto = {ids[i]: set(s["tags"]) for i, s in store.summaries().items()}
    assert report.quality_n == 3
    for row in report.quality:
        assert row.tp == sum(row.code in auto[i] and row.code in ref for i, ref in reference.items())
        assert row.fp == sum(row.code in auto[i] and row.code not in ref for i, ref in reference.items())
        assert row.fn == sum(row.code not in auto[i] and row.code in ref for i, ref in reference.items())
    settled = store.annotations("lead")
    settled.add(wrong[1], "settle", codes={"omission": "omission"})
    assert agreement_report(store, draws=0).quality_n == 4  # a settled item joins the reference
