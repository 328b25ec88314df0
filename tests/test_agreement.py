"""Agreement of manual review with the automatic tagger, per tag code."""

from __future__ import annotations

import pytest

from engines import get_engine
from engines.core import parse_settings
from sessions.study.agreement import agreement_report
from sessions.study.statistics import cohen_kappa
from sessions.api import prepare_run
from sessions.store.runs import RunStore
from sessions.study.labels import run_labels, store_labels


def test_kappa_matches_the_textbook_example():
    # Wikipedia, "Cohen's kappa": 50 grant proposals; both yes 20, A yes/B no 5,
    # A no/B yes 10, both no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4.
    assert cohen_kappa(tp=20, fp=5, fn=10, tn=15) == pytest.approx(0.4)
    # Its second example: 45/15/25/15 -> p_o = 0.6, p_e = 0.54, kappa = 0.1304.
    assert cohen_kappa(tp=45, fp=15, fn=25, tn=15) == pytest.approx(0.1304, abs=1e-4)


def test_kappa_edge_cases():
    assert cohen_kappa(0, 0, 0, 0) is None
    assert cohen_kappa(0, 0, 0, 7) is None  # both raters always say no: p_e = 1, 0/0
    assert cohen_kappa(7, 0, 0, 0) is None
    assert cohen_kappa(3, 0, 0, 1) == 1.0  # perfect agreement with both answers used
    assert cohen_kappa(0, 3, 3, 0) == pytest.approx(-1.0)
    assert cohen_kappa(0, 1, 0, 3) == 0.0  # one rater constant: no agreement beyond chance


def annotated_run(unannotated: int = 0):
    """Six items annotated by hand, then ``unannotated`` results nobody looked at."""
    engine = get_engine("dedc")
    settings = parse_settings(engine.settings_type, [])
    items = engine.items(settings, 0)[:6 + unannotated]
    store = RunStore.create(engine="dedc", settings={}, seed=0, model="sim", backend={}, items=items,
                            templates=engine.templates(settings), concurrency=1)
    store.acquire()
    auto = [["omission"], ["omission", "redundancy"], [], ["primitive_confusion"], ["omission"], []] + [[]] * unannotated
    for index, codes in enumerate(auto):
        status = "error" if index == 5 else "wrong" if codes or index > 5 else "correct"
        store.add_result(index, {"id": items[index].id, "index": index, "status": status,
                                 "scores": {"correct": float(status == "correct")},
                                 "tags": [{"code": c, "label": c, "evidence": "", "source": "auto"} for c in codes],
                                 "outputs": ["x"], "attempt": 0})
    store.flush()
    notes = store.annotations()
    ids = [item.id for item in items]
    notes.add(ids[0], "reviewed")  # agrees with the tagger
    notes.add(ids[1], "tag_remove", code="redundancy")
    notes.add(ids[2], "tag_add", code="variable_misuse", label="Variable misuse")
    notes.add(ids[3], "note", text="a note alone is not a review")
    notes.add(ids[4], "tag_add", code="my_code", label="My own code")
    notes.add(ids[4], "tag_remove", code="omission")
    notes.add(ids[4], "tag_add", code="omission")  # changed their mind: omission stays
    notes.add(ids[5], "reviewed")  # infrastructure error: no automatic judgement to agree with
    notes.close()
    return store, ids


class CountedSummaries(dict):
    """A run's summaries that count the ones read: a whole walk over them would read every one."""

    def __init__(self, summaries):
        super().__init__(summaries)
        self.read = 0

    def get(self, key, default=None):
        self.read += key in self
        return super().get(key, default)

    def __getitem__(self, key):
        self.read += 1
        return super().__getitem__(key)

    def items(self):
        self.read += len(self)
        return super().items()

    def values(self):
        self.read += len(self)
        return super().values()

    def __iter__(self):
        self.read += len(self)
        return super().__iter__()


def test_labels_read_the_summaries_of_the_annotated_items_alone():
    store, ids = annotated_run(unannotated=30)
    summaries = store.summaries()
    counted = CountedSummaries(summaries)
    labels = store_labels(store, counted)
    assert counted.read == 6  # of 36 results
    every = {ids[index]: summary.get("tags", []) for index, summary in summaries.items()}
    log = store.annotations()
    assert labels == run_labels(log, every, ids)  # what reading every summary gives
    log.close()
    assert list(labels.items) == ids[:6] and labels.items[ids[1]].auto == {"omission", "redundancy"}
    assert store_labels(store).items == labels.items  # the summaries read by the call itself


def test_agreement_on_a_hand_annotated_run():
    store, ids = annotated_run()
    report = agreement_report(RunStore.open(store.id))
    rows, reviewed = report.quality, report.quality_n
    assert reviewed == 4  # items 0, 1, 2, 4
    taxonomy = [t.code for t in get_engine("dedc").taxonomy()]
    assert [r.code for r in rows] == taxonomy + ["my_code"]
    by = {r.code: r for r in rows}

    omission = by["omission"]
    assert (omission.tp, omission.fp, omission.fn, omission.tn) == (3, 0, 0, 1)
    assert omission.precision == omission.recall == omission.kappa == 1.0 and omission.disagreeing == []

    redundancy = by["redundancy"]
    assert (redundancy.tp, redundancy.fp, redundancy.fn, redundancy.tn) == (0, 1, 0, 3)
    assert redundancy.precision == 0.0 and redundancy.recall is None and redundancy.kappa == 0.0
    assert redundancy.disagreeing == [ids[1]]

    misuse = by["variable_misuse"]
    assert (misuse.tp, misuse.fp, misuse.fn, misuse.tn) == (0, 0, 1, 3)
    assert misuse.precision is None and misuse.recall == 0.0 and misuse.disagreeing == [ids[2]]
    assert misuse.label == "Variable misuse"

    confusion = by["primitive_confusion"]  # only on item 3, which has just a note
    assert (confusion.tp, confusion.fp, confusion.fn, confusion.tn) == (0, 0, 0, 4) and confusion.kappa is None

    mine = by["my_code"]
    assert mine.label == "My own code" and (mine.fn, mine.tn) == (1, 3) and mine.disagreeing == [ids[4]]


async def test_a_sim_run_without_review_has_no_agreement():
    prepared = await prepare_run("dedc", model="sim:error_rate=0.6", limit=5)
    await prepared.runner.run()
    prepared.store.close()
    report = agreement_report(RunStore.open(prepared.store.id))
    rows, reviewed = report.quality, report.quality_n
    assert reviewed == 0
    assert rows and all(r.kappa is None and r.precision is None and r.tp + r.fp + r.fn + r.tn == 0 for r in rows)


def test_a_code_everyone_gave_on_every_item_has_no_kappa_and_says_why():
    """p_e = 1 (both said yes throughout): kappa is 0/0, so "—" with the reason, not 1.00."""
    from n2f_tui.commands.study import agreement_text
    from sessions.study.agreement import AgreementReport, group_figures
    from sessions.study.statistics import KAPPA_UNDEFINED

    sets = [[frozenset({"omission"}), frozenset({"omission"})] for _ in range(4)]
    sets[0][1] = frozenset({"omission", "redundancy"})
    rows, overall, identical = group_figures(sets, ["omission", "redundancy"], {}, draws=200)
    by = {row.code: row for row in rows}
    assert by["omission"].percent.value == 1.0
    assert by["omission"].kappa.value is None and by["omission"].kappa.reason == KAPPA_UNDEFINED
    # redundancy: (both, first only, second only, neither) = (0, 0, 1, 3): p_o 3/4, p_e 3/4 -> kappa 0
    assert by["redundancy"].kappa.value == 0.0 and by["redundancy"].kappa.reason == ""
    report = AgreementReport(["ada", "bob"], 4, rows, overall, identical, [], [], "final tags", [], 0, {})
    text = agreement_text(report)
    omission_line = next(line for line in text.splitlines() if line.startswith("omission"))
    assert omission_line.split()[-1] == "—" and "1.00" not in omission_line
    assert f"— {KAPPA_UNDEFINED}" in text.splitlines()
