"""DEDC's strict verdict is the authors' checker: replies with prose, fences, separators and line breaks.

The reference is ``released-code-notes.md`` section 1 ("Answer checking"): ``convert_to_one``
splits on ``;`` and ``:=`` (a segment without ``:=`` is skipped), replaces earlier variable
names with ``str.replace`` in insertion order, takes ``result`` and removes spaces; correct iff
the text is one of ``candi_outputs``; the batch path first strips backticks and "plaintext".
``notes_checker`` below is that text re-typed, and every case also carries the verdict
written down by hand from those rules (``expected``), so neither is our code's output.
"""

from __future__ import annotations

import json

import pytest

from engines.core import Item
from engines.dedc import ENGINE
from engines.dedc.settings import DedcSettings
from official_data import DATA_ROOT

BASE = DATA_ROOT / "dedc" / "4_to_4_shot3.full.jsonl"


def notes_checker(reply: str, candi_outputs: list[str]) -> bool:
    """released-code-notes.md section 1, re-typed: the batch path, then convert_to_one."""
    pred = reply.replace("`", "").replace("plaintext", "")
    assigned: dict[str, str] = {}
    for segment in pred.split(";"):
        pieces = segment.split(":=")
        if len(pieces) < 2:
            continue
        left, right = pieces[0].strip(), pieces[1].strip()
        for name in assigned:
            right = right.replace(name, assigned[name])
        assigned[left] = right
    return "result" in assigned and assigned["result"].replace(" ", "") in candi_outputs


# (name, how the reply is made from the gold G, the verdict the notes' rules give, and why)
CASES = [
    ("gold", lambda g: g, True, "the gold itself"),
    ("trailing sentence", lambda g: g + "\nThis uses the minimum number of steps.", True,
     "the final segment after the last ';' has no ':=' and is skipped"),
    ("plaintext fence and thanks", lambda g: f"```plaintext\n{g}\n```\nHope this helps.", True,
     "backticks and 'plaintext' are stripped; the prose is a segment without ':='"),
    ("bare fence", lambda g: f"```\n{g}\n```", True, "backticks stripped, newlines stripped by strip()"),
    ("plaintext fence", lambda g: f"```plaintext\n{g}\n```", True, "the batch path's clean-up"),
    ("line break after each ';'", lambda g: g.replace("; ", ";\n"), True, "strip() removes the line breaks"),
    ("CRLF after each ';'", lambda g: g.replace("; ", ";\r\n"), True, "strip() removes \\r\\n"),
    ("blank lines between", lambda g: g.replace("; ", ";\n\n"), True, "strip()"),
    ("one per line, no ';'", lambda g: g.replace("; ", "\n").rstrip(";"), False,
     "one segment: 'result' is never a left side"),
    ("no final ';'", lambda g: g.rstrip(";"), True, "the last segment still has ':='"),
    ("no final ';' then prose", lambda g: g.rstrip(";") + "\nThis uses the minimum number of steps.", False,
     "the sentence stays in result's right-hand side"),
    ("no final ';' then prose after a blank line", lambda g: g.rstrip(";") + "\n\nDone.", False,
     "the sentence stays in result's right-hand side"),
    ("Answer: prefix", lambda g: "Answer: " + g, False, "the first variable is named 'Answer: view_1'"),
    ("prose line before", lambda g: "Here is the answer:\n" + g, False,
     "the first left side is 'Here is the answer:\\nview_1'"),
    ("prose before, closed by ';'", lambda g: "Here is the answer;\n" + g, True,
     "the prose is a segment of its own without ':='"),
    ("note with ':=' after", lambda g: g + " Note: view_1 := is the filter.", True,
     "the note defines 'Note: view_1', which nothing uses"),
    ("explanation in two sentences", lambda g: g + "\n\nExplanation: first filter; then take the top items.",
     True, "two segments without ':='"),
    ("result redefined after", lambda g: g + "\nresult := all;", False, "the last 'result' wins"),
    ("extra spaces", lambda g: g.replace(", ", " ,  ").replace(" (", "   ( "), True, "spaces are removed"),
    ("tabs after commas", lambda g: g.replace(", ", ",\t"), False, "only spaces are removed, not tabs"),
    ("line break inside a call", lambda g: g.replace(", ", ",\n", 1), False,
     "the line break stays in the expression"),
    ("bold", lambda g: f"**{g}**", False, "'**' becomes part of the first variable's name"),
    ("python fence", lambda g: f"```python\n{g}\n```", False, "'python' is not stripped: it joins 'view_1'"),
    ("doubled separators", lambda g: g.replace(";", ";;"), True, "empty segments are skipped"),
    ("answer written twice", lambda g: f"```\n{g}\n```\n\n```\n{g}\n```", True,
     "the second copy redefines the same names with the same expressions"),
    ("draft line before", lambda g: "Draft: view_1 := f0 (all, attr_1, 1);\n" + g, True,
     "the draft defines 'Draft: view_1', which nothing uses"),
    ("'=' for ':='", lambda g: g.replace(":=", "="), False, "no segment has ':='"),
    ("upper-case RESULT", lambda g: g.replace("result", "RESULT"), False, "no left side is 'result'"),
    ("empty reply", lambda g: "", False, "nothing assigned"),
    ("renamed variables", lambda g: g.replace("view_", "v"), True, "names are substituted, whatever they are"),
    ("prefix collision", lambda g: g.replace("view_2", "view_12"), False,
     "str.replace of view_1 also rewrites the head of view_12"),
]


def _items() -> list[tuple[Item, list[str]]]:
    rows = [json.loads(line) for line in BASE.read_text(encoding="utf-8").splitlines()]
    # the first item (a chain of four steps) and the first item whose answer uses add (f8)
    picked = [rows[0], next(r for r in rows if len(r["candi_outputs"]) == 2)]
    return [(Item(f"base-{k}", "dedc", {"question": r["question"], "demonstrations": [], "n_primitive_demos": 0},
                  {"answer": r["output_steps"], "accepted": r["candi_outputs"]}, {"names": "opaque"}),
             r["candi_outputs"]) for k, r in enumerate(picked)]


@pytest.mark.needs_data
@pytest.mark.parametrize("name, make, expected, why", CASES, ids=[c[0] for c in CASES])
def test_strict_verdict_is_the_authors_checker(name, make, expected, why):
    assert len(CASES) >= 30
    for item, candi in _items():
        reply = make(item.gold["answer"])
        assert notes_checker(reply, candi) is expected, (name, why)
        verdict = ENGINE.score(item, [reply], DedcSettings())
        assert (verdict.status == "correct") is expected, (name, why, verdict.status, verdict.tags)


@pytest.mark.needs_data
def test_single_expression_and_swapped_add_as_the_checker_reads_them():
    item, candi = _items()[1]
    assert len(candi) == 2
    for reply, expected in [
        (f"result := {candi[0]}", True),
        (f"result := {candi[1]}", True),  # f8's arguments the other way round
        (f"result := {candi[0]} This is it.", False),  # the sentence is in the expression
        (f"result := {candi[0]}; This is it.", True),
    ]:
        assert notes_checker(reply, candi) is expected
        assert (ENGINE.score(item, [reply], DedcSettings()).status == "correct") is expected, reply


@pytest.mark.needs_data
def test_a_reply_the_authors_cannot_read_but_statements_read_right_says_why():
    item, _ = _items()[0]
    reply = item.gold["answer"].replace("; ", "\n").rstrip(";")
    verdict = ENGINE.score(item, [reply], DedcSettings())
    assert verdict.status == "unparseable"  # their checker finds no result to judge
    evidence = {t.code: t.evidence for t in verdict.tags}
    assert "finds no 'result'" in evidence["unparseable"]
    assert "read statement by statement the answer is right" in evidence["format_violation"]
    assert not set(evidence) - {"format_violation", "unparseable"}  # the steps themselves are right: no error tag
    lenient = ENGINE.score(item, [reply], DedcSettings(extract="lenient"))
    assert lenient.scores["lenient_correct"] == 1.0


@pytest.mark.needs_data
def test_the_summary_shows_what_the_authors_checker_read():
    item, candi = _items()[0]
    verdict = ENGINE.score(item, [item.gold["answer"] + "\nThis uses the minimum number of steps."], DedcSettings())
    summary = dict(next(v for v in verdict.views if v.kind == "key-value").data)
    assert summary["authors' checker reads"] == candi[0] and summary["status"] == "correct"
