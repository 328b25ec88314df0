"""CompoST reply parsing, scoring from the tool's JSON, tags, simulator and views."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from engines.compost import ENGINE
from engines.compost.compare import isomorphic
from engines.compost.official import load_official
from engines.compost.parse import QueryError, forbidden_clauses, parse_reply
from engines.compost.settings import CompostSettings
from engines.compost.simulate import SIMULATED, inject
from engines.core import Item, SimOptions, Step

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "compost"
DBO, DBR = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/"
GOLD = [["?result", f"<{DBO}child>", "?v0"], ["?v0", f"<{DBO}spouse>", f"<{DBR}Michelle_Obama>"],
        ["?v0", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{DBO}Politician>"]]
QUERY = "SELECT ?result WHERE { " + " ".join(" ".join(t) + " ." for t in GOLD) + " }"


def item() -> Item:
    return Item("easy-b000-g5", "compost", {"question": "Who is the child of the spouse, that is a politician, "
                                                         "of Michelle Obama?", "shots": []},
                {"query": QUERY, "triples": GOLD},
                {"split": "test", "base": "b000", "gid": 5, "edges": ["0.1", "0.2"], "depth": 2, "breadth": 1,
                 "base_depth": 2, "base_breadth": 2, "source": "generated"})


def tool(gold: list[str], output: list[str] | None, error: str = "") -> str:
    side = {"error": error} if error else {"vars": ["x"], "rows": [[v] for v in output or []], "truncated": False}
    return json.dumps({"gold": {"vars": ["result"], "rows": [[v] for v in gold]}, "output": side,
                       "backend": "embedded"})


def test_prefixes_fences_prose_and_abbreviations_are_read():
    reply = ("Here it is:\n```sparql\nPREFIX dbo: <http://dbpedia.org/ontology/>\n"
             "SELECT DISTINCT ?x WHERE { ?x dbo:child ?s . ?s dbo:spouse dbr:Michelle_Obama ; a dbo:Politician . }\n"
             "```\nThis finds the child.")
    parsed = parse_reply(reply)
    assert parsed.prose and parsed.projection == ["?x"]
    assert isomorphic(parsed, [tuple(t) for t in GOLD])


@pytest.mark.parametrize("reply", ["I don't know.", "SELECT ?x WHERE { ?x dbo:child ", "SELECT ?x WHERE { ?x zz:p ?y }"])
def test_unreadable_replies_say_why(reply):
    with pytest.raises(QueryError):
        parse_reply(reply)


def test_keywords_inside_strings_and_iris_are_not_refused():
    assert forbidden_clauses('SELECT ?x WHERE { ?x <http://x/SERVICE> "INSERT DATA" . } # DROP') == []
    assert forbidden_clauses("select * where { service <http://e> { ?s ?p ?o } }") == ["a federated SERVICE clause"]


def test_result_set_precision_recall_f1():
    it = item()
    v = ENGINE.score(it, [QUERY, tool(["<a>", "<b>"], ["<a>", "<b>"])])
    assert v.status == "correct" and v.scores["f1"] == 1.0 and not v.tags
    v = ENGINE.score(it, [QUERY.replace("?result", "?x", 1), tool(["<a>", "<b>"], ["<a>", "<c>", "<d>"])])
    assert v.status == "wrong"
    assert v.scores["precision"] == pytest.approx(1 / 3) and v.scores["recall"] == pytest.approx(0.5)
    assert v.scores["f1"] == pytest.approx(0.4)
    v = ENGINE.score(it, [QUERY, tool(["<a>"], None, error="timed out after 5 s")])
    assert v.scores["f1"] == 0.0 and "query_failed" in {t.code for t in v.tags}


def test_next_step_executes_readable_queries_only():
    it, settings = item(), CompostSettings(timeout=2.0, row_cap=50)
    step = ENGINE.next_step(it, settings, [])
    assert step.kind == "model" and step.messages[0].role == "system"
    step = ENGINE.next_step(it, settings, ["```sparql\n" + QUERY + "\n```"])
    assert step.kind == "tool" and step.tool == "sparql" and step.tool in ENGINE.tools
    assert step.payload == {"query": QUERY, "gold": QUERY, "endpoint": "", "timeout": 2.0, "row_cap": 50}
    assert ENGINE.next_step(it, settings, ["no query here"]) is None
    v = ENGINE.score(it, ["no query here"])
    assert v.status == "unparseable" and v.tags[0].code == "unparseable" and v.tags[0].evidence


@pytest.mark.parametrize("code", SIMULATED)
def test_each_simulated_mistake_is_tagged(code):
    import random

    it = item()
    reply = inject(it, code, random.Random(1))
    v = ENGINE.score(it, [reply])  # structural verdict: no execution
    codes = {t.code for t in v.tags}
    assert code in codes, (reply, codes)
    if code != "format_violation":
        assert v.status != "correct"


def test_simulator_is_deterministic_and_oracle_is_gold():
    it, step = item(), Step("query")
    assert ENGINE.oracle(it, step, []) == QUERY
    a = ENGINE.simulate(it, step, [], SimOptions(error_rate=0.5), 7)
    assert a == ENGINE.simulate(it, step, [], SimOptions(error_rate=0.5), 7)


def test_views_show_queries_triples_results_and_sub_patterns():
    v = ENGINE.score(item(), [QUERY, tool(["<a>"], ["<a>", "<b>"])], with_views=True)
    kinds = {view.title.split(" (")[0]: view.kind for view in v.views}
    assert kinds["Question"] == "text" and kinds["Output query"] == "code" and kinds["Gold query"] == "code"
    assert kinds["Triples"] == "table" and kinds["Result sets"] == "table" and kinds["Sub-patterns"] == "tree"
    tree = next(view for view in v.views if view.title == "Sub-patterns").data
    assert [c["label"] for c in tree["children"]] == ["2 edge(s)", "1 edge(s)"]


@pytest.mark.parametrize("level,file", [("easy", "easy"), ("medium", "medium"), ("hard", "max")])
def test_official_items_and_released_outputs_never_crash_the_scorer(level, file):
    settings = CompostSettings(dataset=str(DATA / f"compositionality_subgraph_{file}.json"))
    items = {i.id: i for i in load_official(settings)}
    assert len(items) == 2803
    assert sum(i.meta["edges"] is not None for i in items.values()) > 2700
    path = next((DATA / "results").glob(f"{level}__*.csv"))
    agree = total = 0
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            it = items[f"{level}-o{row['id']}-{row['base_depth']}x{row['base_breadth']}-g{row['subid']}"]
            assert ENGINE.next_step(it, settings, [row["generated_sparql"]]) is None
            v = ENGINE.score(it, [row["generated_sparql"]], settings, with_views=False)
            assert v.status in ("correct", "wrong", "unparseable")
            if v.status == "unparseable":
                assert v.tags[0].evidence
            if v.status == "correct":  # structurally right -> the authors' execution agrees
                total += 1
                agree += float(row["F1"]) == 1.0
    assert total and agree / total > 0.7  # the rest: undeclared dbpprop:/dbpedia: the authors' store rejected


def test_a_keyword_in_the_prose_does_not_hide_the_query():
    parsed = parse_reply("We select the child first. " + QUERY + " Done.")
    assert parsed.prose and len(parsed.triples) == 3
