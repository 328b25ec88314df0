"""CompoST reply reading (the SPARQL grammar, the authors' extraction and prefixes), scoring, tags, views."""

from __future__ import annotations

import json
import random

import pytest

from engines.compost import ENGINE
from engines.compost.compare import SAME, align, structural_match
from engines.sparql.grammar import SparqlSyntaxError, parse_tree
from engines.compost.parse import QueryError, parse_query, parse_reply
from engines.compost.kg import KG_PATH
from engines.sparql.guard import forbidden_clauses
from engines.compost.settings import CompostSettings
from engines.compost.simulate import SIMULATED, inject
from engines.core import Item, ItemResult, RunResults, SimOptions, Step

DBO, DBR = "http://dbpedia.org/ontology/", "http://dbpedia.org/resource/"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
GOLD = [["?result", f"<{DBO}child>", "?v0"], ["?v0", f"<{DBO}spouse>", f"<{DBR}Michelle_Obama>"],
        ["?v0", RDF_TYPE, f"<{DBO}Politician>"]]
QUERY = "SELECT ?result WHERE { " + " ".join(" ".join(t) + " ." for t in GOLD) + " }"
LENIENT = CompostSettings(extract="lenient")


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


def codes(verdict) -> set[str]:
    return {t.code for t in verdict.tags}


def evidence(verdict, code: str) -> list[str]:
    return [t.evidence for t in verdict.tags if t.code == code]


# ------------------------------------------------------------------ the grammar


def read(query: str) -> tuple[str, list[tuple[str, str]]]:
    """The query form the parser found and the tokens it kept, in order, as (terminal, text)."""
    tree = parse_tree(query)
    form = next(t.data for t in tree.iter_subtrees() if t.data in ("select_query", "ask_query", "construct_query",
                                                                  "describe_query"))
    return form, [(token.type, str(token)) for token in tree.scan_values(lambda v: True)]


def in_order(expected: list[tuple[str, str]], tokens: list[tuple[str, str]]) -> bool:
    """Every expected token is among the tokens, in the same order (others may come between)."""
    rest = iter(tokens)
    return all(token in rest for token in expected)


@pytest.mark.parametrize("query, form, expected", [
    ("SELECT ?x WHERE { { ?x dbo:child ?y } UNION { { ?y dbo:parent ?x } UNION { ?x dbo:relative ?y } } }",
     "select_query", [("PNAME_LN", "dbo:child"), ("UNION", "UNION"), ("PNAME_LN", "dbo:parent"), ("UNION", "UNION"),
                      ("PNAME_LN", "dbo:relative")]),
    ("SELECT ?x WHERE { ?x ^dbo:child/dbo:spouse dbr:Michelle_Obama }",
     "select_query", [("INVERSE", "^"), ("PNAME_LN", "dbo:child"), ("PNAME_LN", "dbo:spouse"),
                      ("PNAME_LN", "dbr:Michelle_Obama")]),
    ("SELECT ?x WHERE { ?x dbo:team dbr:F.C._Porto:B . }",  # a colon inside a local name
     "select_query", [("PNAME_LN", "dbo:team"), ("PNAME_LN", "dbr:F.C._Porto:B")]),
    ("PREFIX : <http://e/> SELECT * WHERE { :a :b ?x OPTIONAL { ?x :c ?y } MINUS { ?x :d 1.5e3 } "
     "BIND(STR(?x) AS ?s) VALUES (?x ?y) { (:a UNDEF) } FILTER(?x != :z && -1 < +2) }",
     "select_query", [("PNAME_NS", ":"), ("IRIREF", "<http://e/>"), ("STAR", "*"), ("OPTIONAL", "OPTIONAL"),
                      ("MINUS", "MINUS"), ("DOUBLE", "1.5e3"), ("BIND", "BIND"), ("VALUES", "VALUES"),
                      ("UNDEF", "UNDEF"), ("FILTER", "FILTER"), ("NE", "!="), ("AND", "&&"),
                      ("INTEGER_NEGATIVE", "-1"), ("LT", "<"), ("INTEGER_POSITIVE", "+2")]),
    ("ASK { ?x a dbo:Person ; dbo:birthDate \"1900-01-01\"^^xsd:date , 'x'@en-GB . [] dbo:p ( 1 ?x ) }",
     "ask_query", [("A", "a"), ("STRING_LITERAL2", '"1900-01-01"'), ("PNAME_LN", "xsd:date"),
                   ("STRING_LITERAL1", "'x'"), ("LANGTAG", "@en-GB"), ("ANON", "[]"), ("INTEGER", "1")]),
    ("SELECT DISTINCT ?x (COUNT(*) AS ?n) WHERE { ?x dbo:p ?y } GROUP BY ?x HAVING (COUNT(*) > 1) "
     "ORDER BY DESC(?n) LIMIT 5 OFFSET 2",
     "select_query", [("DISTINCT", "DISTINCT"), ("COUNT", "COUNT"), ("GROUP", "GROUP"), ("HAVING", "HAVING"),
                      ("GT", ">"), ("INTEGER", "1"), ("DESC", "DESC"), ("LIMIT", "LIMIT"), ("INTEGER", "5"),
                      ("OFFSET", "OFFSET"), ("INTEGER", "2")]),
    ("select ?x where { ?x dbo:name \"\"\"a \"quoted\" name\"\"\" . FILTER regex(?x, \"^A\", \"i\") } # comment",
     "select_query", [("SELECT", "select"), ("STRING_LITERAL_LONG2", '"""a "quoted" name"""'), ("REGEX", "regex"),
                      ("STRING_LITERAL2", '"^A"'), ("STRING_LITERAL2", '"i"')]),
    ("SELECT ?y WHERE { BIND(REPLACE(?x, '\\\\(a\\\\\\\\', \"it\\'s\\\"\") AS ?y) }",  # ECHARs, escaped backslashes among them
     "select_query", [("REPLACE", "REPLACE"), ("STRING_LITERAL1", "'\\\\(a\\\\\\\\'"),
                      ("STRING_LITERAL2", '"it\\\'s\\""')]),
])
def test_the_grammar_reads_sparql_11_as_the_spec_writes_it(query, form, expected):
    found, tokens = read(query)
    assert found == form
    assert in_order(expected, tokens), tokens
    assert not any("comment" in text for _, text in tokens)  # a comment is no token


@pytest.mark.parametrize("query,line,column,found", [
    ("SELECT ?r WHERE { ?r dbo:parent dbr:Saw_Min_Hla . banana fruit salad }", 1, 51, "'banana'"),
    ("SELECT ?x WHERE {\n  ?x dbo:birthPlace dbr:Central_Region_(Ghana) .\n}", 2, 40, "'('"),
    ("SELECT ?x WHERE { ?x dbo:child", 1, 31, "end of query"),
    ('SELECT ?x WHERE { ?x dbo:name "K\\. Nash" }', 1, 31, "'\"K\\\\.'"),  # \. is not an ECHAR
])
def test_a_syntax_error_says_where_and_what_was_expected(query, line, column, found):
    with pytest.raises(SparqlSyntaxError) as caught:
        parse_tree(query)
    err = caught.value
    assert (err.line, err.column, err.found) == (line, column, found)
    assert err.expected and f"line {line}, column {column}" in str(err)


def test_paths_blank_nodes_and_literals_become_triples_that_mean_the_same():
    parsed = parse_query('SELECT ?x WHERE { ?x ^dbo:child/dbo:spouse dbr:X ; dbo:name "a\\"b"@EN . '
                         '[ dbo:p ?x ] dbo:age 5 . ?x dbo:q* ?z }')
    assert parsed.triples == [
        ("?_:path1", f"<{DBO}child>", "?x"), ("?_:path1", f"<{DBO}spouse>", f"<{DBR}X>"),
        ("?x", f"<{DBO}name>", '"a\\"b"@en'),
        ("?_:b2", f"<{DBO}p>", "?x"), ("?_:b2", f"<{DBO}age>", '"5"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        ("?x", "path(dbo:q *)", "?z")]
    assert parsed.features == {"PATH"}


# ------------------------------------------------------------- reading as the authors did


def test_only_a_sparql_fence_is_removed_and_bound_prefixes_need_no_declaration():
    parsed = parse_reply("```sparql\n" + "SELECT ?x WHERE { ?x dbo:child ?s . ?s dbo:spouse dbr:Michelle_Obama ; "
                                         "a dbo:Politician . ?s schema:name ?n }\n```")
    assert parsed.projection == ["?x"] and not parsed.prose and len(parsed.triples) == 4
    assert parsed.executable == ("PREFIX dbo: <http://dbpedia.org/ontology/>\n"
                                 "PREFIX dbr: <http://dbpedia.org/resource/>\n"
                                 "PREFIX schema: <https://schema.org/>\n" + parsed.text)


@pytest.mark.parametrize("reply,reason", [
    ("Here it is:\n```sparql\n" + QUERY + "\n```\nThis finds the child.", "format_violation"),
    ("```\n" + QUERY + "\n```", "format_violation"),  # a fence without "sparql" is not removed
    ("We select the child first. " + QUERY + " Done.", "format_violation"),
    (QUERY.replace(f"<{DBR}Michelle_Obama>", "dbpedia:Michelle_Obama"), "undeclared_prefix"),
])
def test_prose_or_an_unbound_prefix_is_unparseable_with_a_diagnosis(reply, reason):
    v = ENGINE.score(item(), [reply])
    assert v.status == "unparseable" and v.scores["f1"] == 0.0
    assert codes(v) == {"unparseable", reason}
    assert ENGINE.next_step(item(), CompostSettings(), [reply]) is None
    with pytest.raises(QueryError) as caught:
        parse_reply(reply)
    assert structural_match(caught.value.diagnosis, [tuple(t) for t in GOLD]) == SAME  # what it would have meant
    lenient = ENGINE.score(item(), [reply], LENIENT)  # the lenient reading rides along; the status stays strict
    assert lenient.status == "unparseable" and lenient.scores["lenient_correct"] == 1.0 and reason in codes(lenient)


def test_an_undeclared_prefix_nobody_binds_is_unparseable_either_way():
    for settings in (CompostSettings(), LENIENT):
        v = ENGINE.score(item(), ["SELECT ?x WHERE { ?x zz:p ?y }"], settings)
        assert v.status == "unparseable" and "undeclared prefix zz: at line 1, column 22" in v.tags[0].evidence


def test_tokens_the_old_reader_dropped_make_the_query_unparseable():
    v = ENGINE.score(item(), [QUERY.replace(" }", " banana fruit salad }")])
    assert v.status == "unparseable" and "unexpected 'banana'" in v.tags[0].evidence


def test_keywords_inside_strings_and_iris_are_not_refused():
    assert forbidden_clauses('SELECT ?x WHERE { ?x <http://x/SERVICE> "INSERT DATA" . } # DROP') == []
    assert forbidden_clauses("select * where { service <http://e> { ?s ?p ?o } }") == ["a federated SERVICE clause"]
    assert forbidden_clauses("INSERT DATA { <http://a> <http://b> <http://c> }") == ["an update (INSERT)"]


# ------------------------------------------------------------------------ scoring


def test_result_set_precision_recall_f1():
    it = item()
    v = ENGINE.score(it, [QUERY, tool(["<a>", "<b>"], ["<a>", "<b>"])])
    assert v.status == "correct" and v.scores["f1"] == 1.0 and not v.tags
    v = ENGINE.score(it, [QUERY.replace("?result", "?x", 1), tool(["<a>", "<b>"], ["<a>", "<c>", "<d>"])])
    assert v.status == "wrong"
    assert v.scores["precision"] == pytest.approx(1 / 3) and v.scores["recall"] == pytest.approx(0.5)
    assert v.scores["f1"] == pytest.approx(0.4)
    v = ENGINE.score(it, [QUERY, tool(["<a>"], None, error="timed out after 5 s")])
    assert v.scores["f1"] == 0.0 and "query_failed" in codes(v)


def test_next_step_executes_the_query_with_the_prefixes_it_uses():
    it, settings = item(), CompostSettings(timeout=2.0, row_cap=50)
    step = ENGINE.next_step(it, settings, [])
    assert step.kind == "model" and step.messages[0].role == "system"
    reply = QUERY.replace(f"<{DBO}child>", "dbo:child")
    step = ENGINE.next_step(it, settings, ["```sparql " + reply + "```"])
    assert step.kind == "tool" and step.tool == "sparql" and step.tool in ENGINE.tools
    assert step.payload == {"query": "PREFIX dbo: <http://dbpedia.org/ontology/>\n " + reply, "gold": QUERY,
                            "endpoint": "", "graph": str(KG_PATH), "timeout": 2.0, "row_cap": 50}
    v = ENGINE.score(it, ["no query here"])
    assert v.status == "unparseable" and v.tags[0].code == "unparseable" and "line 1, column 1" in v.tags[0].evidence


@pytest.mark.parametrize("code", SIMULATED)
def test_each_simulated_mistake_is_tagged(code):
    it = item()
    reply = inject(it, code, random.Random(1))
    v = ENGINE.score(it, [reply], LENIENT if code == "format_violation" else None)  # structural verdict
    assert code in codes(v), (reply, codes(v))
    if code != "format_violation":
        assert v.status != "correct"


def test_the_simulator_is_deterministic_and_the_oracle_is_gold():
    it, step = item(), Step("query")
    assert ENGINE.oracle(it, step, []) == QUERY
    assert ENGINE.simulate(it, step, [], SimOptions(error_rate=0.5), 7) == \
        ENGINE.simulate(it, step, [], SimOptions(error_rate=0.5), 7)


# ------------------------------------------------------------ alignment and evidence


def test_evidence_names_the_triple_that_really_differs():
    # Greedy pairing by predicate took the first gold triple for the output's child triple; the optimal
    # alignment pairs each output triple with the gold triple it plays and leaves the true one over.
    gold = [("?result", f"<{DBO}child>", "?v0"), ("?v0", f"<{DBO}child>", f"<{DBR}A>")]
    output = "SELECT ?r WHERE { ?r dbo:child ?m . ?m dbo:parent dbr:A . }"
    it = Item("i", "compost", {"question": "q"}, {"query": "", "triples": [list(t) for t in gold]}, {})
    v = ENGINE.score(it, [output])
    assert evidence(v, "wrong_property") == ["?m dbo:parent dbr:A where the gold has ?v0 dbo:child dbr:A"]
    assert codes(v) == {"wrong_property"}


def test_an_inverted_triple_and_an_inverse_property_paraphrase():
    inverted = ENGINE.score(item(), [QUERY.replace(f"?result <{DBO}child> ?v0", f"?v0 <{DBO}child> ?result")])
    assert evidence(inverted, "inverted_direction") == [
        "?v0 dbo:child ?result where the gold has ?result dbo:child ?v0: subject and object swapped"]
    assert codes(inverted) == {"inverted_direction"}
    # the same fact from its other end (engines/compost/data/ontology_facts.tsv): DBpedia holds it one way
    # round only in part, so without an endpoint the item is set aside, neither right nor wrong
    paraphrase = ENGINE.score(item(), [QUERY.replace(f"?result <{DBO}child> ?v0", f"?v0 <{DBO}parent> ?result")])
    assert paraphrase.scores["set_aside"] == 1.0 and paraphrase.scores["structural"] == 0.0
    assert codes(paraphrase) == {"turned_reading", "wrong_property"}
    assert "the same fact read the other way" in evidence(paraphrase, "wrong_property")[0]
    symmetric = ENGINE.score(item(), [QUERY.replace(f"?v0 <{DBO}spouse> <{DBR}Michelle_Obama>",
                                                    f"<{DBR}Michelle_Obama> <{DBO}spouse> ?v0")])
    assert symmetric.scores["set_aside"] == 1.0 and "turned_reading" in codes(symmetric)
    same = ENGINE.score(item(), [QUERY])
    assert same.status == "correct" and "set_aside" not in same.scores
    run = RunResults(ENGINE.name, "t", CompostSettings(),
                     [ItemResult(item(), v.status, v.scores, v.tags) for v in (paraphrase, same)])
    report = ENGINE.report(run)  # the set-aside item is in no figure: macro F1 over the correct one alone
    assert report.metrics["macro_f1"] == 1.0 and any("1 item(s) set aside" in note for note in report.notes)
    pair = next(p for p in align([(GOLD[0][2], f"<{DBO}parent>", GOLD[0][0])], [tuple(GOLD[0])]).pairs if p.output)
    assert pair.paraphrase and pair.inverted


def test_missing_extra_entity_type_and_projection_lines():
    query = (f"SELECT ?v0 WHERE {{ ?result <{DBO}child> ?v0 . ?v0 <{DBO}spouse> <{DBR}Barack_Obama> . "
             f"?v0 <{DBO}birthPlace> ?p . }}")
    v = ENGINE.score(item(), [query])
    assert evidence(v, "wrong_entity") == [
        "?v0 dbo:spouse dbr:Barack_Obama where the gold has ?v0 dbo:spouse dbr:Michelle_Obama: "
        "dbr:Barack_Obama instead of dbr:Michelle_Obama"]
    assert evidence(v, "missing_type_constraint") == ["no ?v0 a dbo:Politician"]
    assert evidence(v, "extra_triple") == ["?v0 dbo:birthPlace ?p has no counterpart in the gold"]
    assert evidence(v, "wrong_projection") == ["SELECT ?v0, which plays ?v0, not the answer ?result"]


def test_the_alignment_is_optimal_over_renamings():
    gold = [("?result", "<p>", "?a"), ("?a", "<q>", "?b"), ("?b", "<r>", "<C>"), ("?result", "<s>", "?c")]
    output = [("?y", "<s>", "?z"), ("?x", "<r>", "<C>"), ("?w", "<q>", "?x"), ("?y", "<p>", "?w")]
    found = align(output, gold, ["?y"])
    assert found.cost == 0 and found.exact
    assert found.renaming == {"?y": "?result", "?w": "?a", "?x": "?b", "?z": "?c"}


def test_views_show_the_parse_tree_aligned_triples_results_and_sub_patterns():
    v = ENGINE.score(item(), [QUERY, tool(["<a>"], ["<a>", "<b>"])], with_views=True)
    kinds = {view.title.split(" (")[0]: view for view in v.views}
    assert kinds["Question"].kind == "text" and kinds["Output query"].kind == "code"
    assert kinds["Parsed query"].kind == "tree" and kinds["Parsed query"].data["label"] == "start"
    assert kinds["Triples"].data["rows"][0][2] == "=" and kinds["Result sets"].kind == "table"
    tree = kinds["Sub-patterns"].data
    assert [c["label"] for c in tree["children"]] == ["2 edge(s)", "1 edge(s)"]
    diagnosis = ENGINE.score(item(), ["Sure: " + QUERY], with_views=True)
    assert any("as it would have been read" in view.title for view in diagnosis.views)


def test_a_control_character_the_grammar_does_not_skip_is_a_syntax_error_naming_it():
    v = ENGINE.score(item(), ["SELECT?0\x1f0"])  # found by hypothesis: U+001F is whitespace to Python, not to SPARQL
    assert v.status == "unparseable" and "'\\x1f'" in v.tags[0].evidence
