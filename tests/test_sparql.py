"""The ``sparql`` tool: embedded execution, read-only refusals, limits, endpoints."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from sessions.backends.base import BackendError
from sessions.sparql import MAX_COMPONENTS, components, sparql
from sessions.tools import TOOLS

GOLD = ("SELECT ?result WHERE { ?result <http://dbpedia.org/ontology/deathPlace> "
        "<http://dbpedia.org/resource/Baghdad> . }")


def run(query: str, **payload) -> dict:
    return json.loads(asyncio.run(sparql({"query": query, "gold": GOLD, **payload})))


def test_registered_as_a_tool():
    assert TOOLS["sparql"] is sparql


def test_gold_and_output_rows_from_the_embedded_graph():
    result = run(GOLD.replace("?result", "?x"))
    assert result["backend"] == "embedded"
    assert result["gold"]["rows"] and result["output"]["rows"] == result["gold"]["rows"]


@pytest.mark.parametrize("query,why", [
    ("SELECT ?x WHERE { SERVICE <http://dbpedia.org/sparql> { ?x ?p ?o } }", "SERVICE"),
    ("INSERT DATA { <http://a> <http://b> <http://c> }", "INSERT"),
    ("PREFIX x: <http://x/> DELETE WHERE { ?s ?p ?o }", "DELETE"),
    ("SELECT ?x FROM <http://example.org/g> WHERE { ?x ?p ?o }", "FROM"),
    ("SELECT * WHERE { ?a ?p1 ?b . ?c ?p2 ?d . ?e ?p3 ?f . ?g ?p4 ?h . ?i ?p5 ?j . }", "cross product"),
])
def test_unsafe_queries_are_refused_and_the_gold_still_runs(query, why):
    result = run(query)
    assert why in result["output"]["error"]
    assert result["gold"]["rows"]


def test_row_cap_and_syntax_errors():
    result = run("SELECT ?s WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l . }", row_cap=5)
    assert len(result["output"]["rows"]) == 5 and result["output"]["truncated"]
    assert "syntax error" in run("SELECT ?x WHERE { ?x ")["output"]["error"]


def test_a_slow_query_is_stopped_by_its_timeout():
    """In a child process: pyoxigraph cannot cancel, so the abandoned query thread runs on until exit."""
    code = (
        "import asyncio, json\n"
        "from sessions.sparql import sparql\n"
        "slow = 'SELECT ?a WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f . FILTER(STR(?a) = CONCAT(STR(?d), STR(?f))) }'\n"
        f"out = json.loads(asyncio.run(sparql({{'query': slow, 'gold': {GOLD!r}, 'timeout': 0.3}})))\n"
        "print(out['output']['error'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[1])
    assert "timed out after 0.3 s" in done.stdout, done.stderr


def test_components_counts_unconnected_parts():
    assert components([("?a", "<p>", "?b"), ("?b", "<p>", "<c>"), ("?x", "<p>", "?y")]) == 2
    assert MAX_COMPONENTS < 5


class _Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"head": {"vars": ["result"]}, "results": {"bindings": [
            {"result": {"type": "uri", "value": "http://dbpedia.org/resource/X"}}]}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_endpoint_answers_over_http():
    server = HTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/sparql"
        result = run(GOLD, endpoint=url)
        assert result["backend"] == url
        assert result["output"]["rows"] == [["<http://dbpedia.org/resource/X>"]]
    finally:
        server.shutdown()


def test_an_unreachable_endpoint_is_a_clear_error():
    with pytest.raises(BackendError, match="unreachable"):
        run(GOLD, endpoint="http://127.0.0.1:9/sparql", timeout=1)
