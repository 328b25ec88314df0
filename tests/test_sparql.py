"""The ``sparql`` tool: embedded execution, read-only refusals, limits, endpoints."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from engines.compost.kg import KG_PATH
from engines.sparql.guard import components
from sessions.backends.base import BackendError
from sessions.tools import sparql_endpoint
from sessions.tools.sparql import MAX_COMPONENTS, embedded_worker, sparql
from sessions.tools.sparql_worker import QueryWorker, WorkerError
from sessions.tools.dispatch import TOOLS

GOLD = ("SELECT ?result WHERE { ?result <http://dbpedia.org/ontology/deathPlace> "
        "<http://dbpedia.org/resource/Baghdad> . }")


def run(query: str, **payload) -> dict:
    """The tool's answer, its endpoint client closed at the end as a run's end closes it."""
    async def answer() -> str:
        try:
            return await sparql({"query": query, "gold": GOLD, "graph": str(KG_PATH), **payload})
        finally:
            await sparql_endpoint.close_sessions()

    return json.loads(asyncio.run(answer()))


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


# Three unconnected parts pass the component check; the FILTER makes pyoxigraph walk the
# whole product (~10^15 rows): minutes at least, unless the query process is killed.
SLOW = "SELECT ?a WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f . FILTER(STR(?a) = CONCAT(STR(?d), STR(?f))) }"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_slow_query_is_stopped_by_its_timeout_and_its_process_is_gone():
    worker = embedded_worker(str(KG_PATH))
    run(GOLD)  # the gold is now cached, the query process started
    pid = worker.pid
    assert run(SLOW, timeout=0.3)["output"] == {"error": "timed out after 0.3 s"}
    assert worker.pid is None and not alive(pid)  # a query left running would still hold its process
    cpu = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - cpu < 0.1, "nothing in this process may still be running the query"
    # the next query gets a fresh process; loading the graph is not charged to its 0.3 s
    assert run(GOLD.replace("?result", "?x"), timeout=0.3)["output"]["rows"] == run(GOLD)["gold"]["rows"]
    assert worker.pid not in (None, pid)


def test_queries_queued_behind_a_timed_out_one_go_to_a_fresh_process():
    async def together() -> list[dict]:
        graph = str(KG_PATH)
        payloads = [{"query": SLOW, "gold": GOLD, "timeout": 0.3, "graph": graph}] + [
            {"query": GOLD.replace("?result", f"?v{i}"), "gold": GOLD, "timeout": 0.3, "graph": graph} for i in range(3)]
        return [json.loads(out)["output"] for out in await asyncio.gather(*(sparql(p) for p in payloads))]

    slow, *fast = asyncio.run(together())
    assert slow == {"error": "timed out after 0.3 s"}
    assert all(out["rows"] == run(GOLD)["gold"]["rows"] for out in fast)


def test_a_query_pyoxigraph_cannot_take_is_its_error_and_the_process_lives_on():
    worker = embedded_worker(str(KG_PATH))
    pid = worker.start()
    assert "query failed" in run('SELECT ?x WHERE { ?x ?p "\ud800" }')["output"]["error"]
    assert worker.pid == pid


def test_a_query_process_killed_between_queries_is_replaced():
    worker = embedded_worker(str(KG_PATH))
    pid = worker.start()
    os.kill(pid, signal.SIGKILL)
    assert run(GOLD.replace("?result", "?y"))["output"]["rows"]
    assert worker.pid != pid


def test_the_query_process_exits_with_its_parent_even_mid_query():
    code = (
        "import threading, time\n"
        "from engines.compost.kg import KG_PATH\n"
        "from sessions.tools.sparql import embedded_worker\n"
        "worker = embedded_worker(str(KG_PATH))\n"
        "print(worker.start(), flush=True)\n"
        f"threading.Thread(target=worker.query, args=({SLOW!r}, 10, 600.0), daemon=True).start()\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1])
    try:
        pid = int(parent.stdout.readline())
        time.sleep(0.5)  # the child is inside the slow query now
        assert alive(pid)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)


def test_a_query_process_that_cannot_load_the_graph_is_an_infrastructure_error(tmp_path):
    broken = tmp_path / "kg.nt.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(WorkerError, match="cannot load kg.nt.gz"):
        QueryWorker(broken).query(GOLD, 10, 1.0)
    with pytest.raises(BackendError, match="cannot load"):
        run(GOLD, gold=GOLD.replace("Baghdad", "Basra"), graph=str(broken))


def test_a_query_process_that_cannot_start_fails_its_queries_and_the_next_try_starts_again(monkeypatch):
    worker = QueryWorker(KG_PATH)
    with monkeypatch.context() as patch, pytest.raises(WorkerError, match="cannot start the query process"):
        patch.setattr(sys, "executable", "/nonexistent/python")
        worker.query(GOLD, 10, 1.0)
    try:
        assert worker.query(GOLD, 10, 5.0)["rows"] == run(GOLD)["gold"]["rows"]
    finally:
        worker.close()
    assert worker.pid is None


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


def test_an_unreachable_endpoint_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(sparql_endpoint, "RETRIES", 1)  # the message is the point, not the backoff's length
    with pytest.raises(BackendError, match="unreachable"):
        run(GOLD, endpoint="http://127.0.0.1:9/sparql", timeout=1)
