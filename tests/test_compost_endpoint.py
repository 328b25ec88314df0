"""compost on a SPARQL 1.1 endpoint: the ASK {} preflight, and a run through the real ``n2f``.

The endpoint is a loopback HTTP server in this process. In ``sparql`` mode it answers
each query from a pyoxigraph store loaded with the bundled graph, as a real endpoint
would; the other modes are the ways a wrong URL goes wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pyoxigraph
import pytest

from engines.compost.kg import KG_PATH
from sessions.errors import InputError
from sessions.tools.sparql import preflight
from cli_support import n2f

HTML = b"<html><body><h1>Welcome</h1></body></html>"


@pytest.fixture(scope="module")
def graph() -> pyoxigraph.Store:
    store = pyoxigraph.Store()
    store.load(gzip.decompress(KG_PATH.read_bytes()), pyoxigraph.RdfFormat.N_TRIPLES)
    return store


class Endpoint(ThreadingHTTPServer):
    """``mode``: ``sparql`` (answers from ``store``), ``html`` (200 with a web page), ``500``, or
    ``no_boolean`` (SPARQL JSON, but a SELECT result for the ASK)."""

    daemon_threads = True

    def __init__(self, mode: str, store: pyoxigraph.Store | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode, self.store = mode, store
        self.queries: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/sparql"


class _Handler(BaseHTTPRequestHandler):
    server: Endpoint

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        query = form["query"][0]
        self.server.queries.append(query)
        mode = self.server.mode
        if mode == "sparql":
            body = self.server.store.query(query).serialize(format=pyoxigraph.QueryResultsFormat.JSON)
            self._answer(200, "application/sparql-results+json", body)
        elif mode == "no_boolean":
            self._answer(200, "application/sparql-results+json", b'{"head": {"vars": []}, "results": {"bindings": []}}')
        else:
            self._answer(200 if mode == "html" else 500, "text/html", HTML)

    def _answer(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(mode: str, store: pyoxigraph.Store | None = None) -> Iterator[Endpoint]:
    server = Endpoint(mode, store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_preflight_accepts_an_endpoint_answering_ask(graph):
    with serving("sparql", graph) as server:
        asyncio.run(preflight(server.url))
    assert server.queries == ["ASK {}"]


@pytest.mark.parametrize("mode, needle", [
    ("html", "did not return SPARQL JSON results"),
    ("500", "answered HTTP 500"),
    ("no_boolean", "did not answer ASK {} with a SPARQL boolean result"),
])
def test_preflight_refuses_what_is_not_a_sparql_endpoint(mode, needle):
    with serving(mode) as server, pytest.raises(InputError, match=needle.replace("{", r"\{").replace("}", r"\}")):
        asyncio.run(preflight(server.url))


def test_preflight_refuses_an_unreachable_or_malformed_url():
    with pytest.raises(InputError, match="unreachable"):
        asyncio.run(preflight(f"http://127.0.0.1:{unused_port()}/sparql", timeout=1))
    with pytest.raises(InputError, match="not an http"):
        asyncio.run(preflight("localhost:8890/sparql"))


@pytest.mark.slow
@pytest.mark.parametrize("mode, needle", [
    ("html", "did not return SPARQL JSON results"),
    ("500", "answered HTTP 500"),
    ("unused", "is unreachable"),
])
def test_a_run_on_a_bad_endpoint_fails_before_it_starts(mode, needle):
    with contextlib.ExitStack() as stack:
        url = (f"http://127.0.0.1:{unused_port()}/sparql" if mode == "unused"
               else stack.enter_context(serving(mode)).url)
        result = n2f("run", "compost", "-m", "oracle", "-n", "2", "-s", f"endpoint={url}", "--json", "-q")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("n2f: error: ") and "Traceback" not in result.stderr
    assert url in lines[0] and needle in lines[0]
    runs = n2f("runs", "--json")
    assert runs.returncode == 0 and json.loads(runs.stdout) == []


@pytest.mark.slow
def test_a_run_on_an_endpoint_scores_from_its_answers_and_resume_checks_it_again(graph):
    with serving("sparql", graph) as server:
        result = n2f("run", "compost", "-m", "oracle", "-n", "3", "-s", f"endpoint={server.url}", "--json", "-q")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        exported = n2f("export", report["run"], "--format", "jsonl")
    assert report["n"] == 3 and report["counts"]["correct"] == 3 and report["metrics"]["macro_f1"] == 1.0
    assert server.queries[0] == "ASK {}"
    assert len(server.queries) >= 1 + 3  # the preflight, then at least each item's gold (the oracle's equals it)
    for line in exported.stdout.splitlines():
        executed = json.loads(json.loads(line)["outputs"][1])
        assert executed["backend"] == server.url
        assert executed["gold"]["rows"] and executed["output"]["rows"] == executed["gold"]["rows"]
    resumed = n2f("resume", report["run"])  # the endpoint is gone now
    assert resumed.returncode == 2 and "is unreachable" in resumed.stderr, resumed.stderr
