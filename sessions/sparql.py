"""The ``sparql`` tool: run a model's query and the gold query, read-only, with limits.

compost's second step is ``Step(kind="tool", tool="sparql")``; this executes it. By
default queries run on the knowledge graph bundled with the engine, loaded once per
process into an in-memory pyoxigraph store; with an ``endpoint`` URL they go to a
SPARQL 1.1 endpoint over HTTP instead. Either way the output is JSON
``{"gold": {...}, "output": {...}, "backend": ...}`` where each side is
``{"vars", "rows", "truncated"}`` or ``{"error"}``, so scoring stays a pure function
of stored outputs.

Safety. Only queries are run, never updates: ``SERVICE``, ``FROM`` and update
keywords are refused by looking at keyword tokens (text inside IRIs, strings and
comments does not count), and pyoxigraph's ``Store.query`` itself rejects updates.
pyoxigraph cannot cancel a query, so each one runs in a daemon thread that stops at
the row cap or the deadline between rows; a basic graph pattern that falls apart into
more than ``MAX_COMPONENTS`` unconnected parts (a cross product that could block
inside a single row) is refused up front.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import Future
from typing import Any, Mapping

from engines.compost.kg import KG_PATH
from engines.compost.parse import QueryError, forbidden_clauses, parse_query
from sessions.backends.base import BackendError

SPARQL = "sparql"
MAX_COMPONENTS = 3
DEFAULT_TIMEOUT = 5.0
DEFAULT_ROW_CAP = 10_000
GOLD_CACHE_SIZE = 4096

_store: Any = None
_store_lock = threading.Lock()
_gold_cache: dict[tuple[str, str, int], dict[str, Any]] = {}


class Refused(Exception):
    """The query is not allowed to run; the message says why."""


def embedded_store() -> Any:
    """The bundled graph in an in-memory pyoxigraph store, loaded on first use (about 1 s)."""
    global _store
    with _store_lock:
        if _store is None:
            import pyoxigraph

            store = pyoxigraph.Store()
            with gzip.open(KG_PATH, "rb") as fh:
                store.load(fh.read(), pyoxigraph.RdfFormat.N_TRIPLES)
            _store = store
    return _store


def check(query: str) -> None:
    """Raise Refused for anything but a bounded read-only query."""
    found = forbidden_clauses(query)
    if found:
        raise Refused("refused: read-only endpoint, the query contains " + ", ".join(found))
    try:
        parsed = parse_query(query)
    except QueryError:
        return  # the store's own parser reports the syntax error
    parts = components(parsed.triples)
    if parts > MAX_COMPONENTS:
        raise Refused(f"refused: the graph pattern is a cross product of {parts} unconnected parts "
                      f"(at most {MAX_COMPONENTS})")


def components(triples: list[tuple[str, str, str]]) -> int:
    """Connected parts of a basic graph pattern, joined by shared variables (union-find)."""
    parent = list(range(len(triples)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: dict[str, int] = {}
    for i, triple in enumerate(triples):
        for term in triple:
            if term.startswith("?"):
                if term in seen:
                    parent[find(i)] = find(seen[term])
                else:
                    seen[term] = i
    return len({find(i) for i in range(len(triples))})


def _run_embedded(query: str, row_cap: int, deadline: float) -> dict[str, Any]:
    results = embedded_store().query(query)
    if isinstance(results, bool) or type(results).__name__ == "QueryBoolean":
        return {"vars": [], "rows": [[str(bool(results)).lower()]], "truncated": False}
    variables = [v.value for v in getattr(results, "variables", [])]
    if not variables:
        raise Refused("only SELECT and ASK queries are evaluated")
    rows: list[list[str | None]] = []
    truncated = False
    for solution in results:
        if len(rows) >= row_cap:
            truncated = True
            break
        if time.monotonic() > deadline:
            raise TimeoutError
        rows.append([None if solution[v] is None else str(solution[v]) for v in variables])
    return {"vars": variables, "rows": rows, "truncated": truncated}


def _term(binding: Mapping[str, str]) -> str:
    """An endpoint's JSON binding in the N-Triples form pyoxigraph prints."""
    value, kind = binding.get("value", ""), binding.get("type")
    if kind == "uri":
        return f"<{value}>"
    if kind == "bnode":
        return f"_:{value}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    if "xml:lang" in binding:
        return f'"{escaped}"@{binding["xml:lang"]}'
    datatype = binding.get("datatype")
    if datatype and datatype != "http://www.w3.org/2001/XMLSchema#string":
        return f'"{escaped}"^^<{datatype}>'
    return f'"{escaped}"'


def _run_endpoint(url: str, query: str, row_cap: int, timeout: float) -> dict[str, Any]:
    body = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Accept": "application/sparql-results+json",
        "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise Refused(f"endpoint {url} answered HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BackendError(f"SPARQL endpoint {url} is unreachable: {reason}") from None
    except ValueError as exc:
        raise Refused(f"endpoint {url} did not return SPARQL JSON results: {exc}") from None
    if "boolean" in data:
        return {"vars": [], "rows": [[str(bool(data["boolean"])).lower()]], "truncated": False}
    variables = list(data.get("head", {}).get("vars", []))
    bindings = data.get("results", {}).get("bindings", [])
    rows = [[_term(b[v]) if v in b else None for v in variables] for b in bindings[:row_cap]]
    return {"vars": variables, "rows": rows, "truncated": len(bindings) > row_cap}


class _Worker:
    """A daemon thread running queries one at a time (an abandoned query never blocks exit).

    Reused across queries because most take well under a millisecond and starting a
    thread for each would cost more than the query. A worker whose query overran its
    deadline may still be inside pyoxigraph, so it is retired and a fresh one started.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, daemon=True, name="sparql-query").start()

    def _loop(self) -> None:
        while True:
            fn, future = self.jobs.get()
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the awaiting side
                future.set_exception(exc)


_idle: list[_Worker] = []


async def _in_thread(fn: Any, timeout: float) -> Any:
    """Run ``fn`` on an idle worker with a deadline; a worker still busy afterwards is not reused."""
    worker = _idle.pop() if _idle else _Worker()
    future: Future = Future()
    worker.jobs.put((fn, future))
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    finally:
        if future.done():  # otherwise the worker is still inside a query: retire it
            _idle.append(worker)


async def execute(query: str, endpoint: str, timeout: float, row_cap: int) -> dict[str, Any]:
    """One side of the comparison: rows or an error the model is to blame for."""
    try:
        check(query)
        if endpoint:
            return await _in_thread(lambda: _run_endpoint(endpoint, query, row_cap, timeout), timeout + 1)
        deadline = time.monotonic() + timeout
        return await _in_thread(lambda: _run_embedded(query, row_cap, deadline), timeout)
    except Refused as exc:
        return {"error": str(exc)}
    except (asyncio.TimeoutError, TimeoutError):
        return {"error": f"timed out after {timeout:g} s"}
    except SyntaxError as exc:
        return {"error": f"syntax error: {exc}"}
    except OSError as exc:
        return {"error": f"query failed: {exc}"}


async def sparql(payload: Mapping[str, Any]) -> str:
    """The tool: the gold query's result (cached per process) and the model query's result."""
    try:
        query = str(payload.get("query") or "")
        gold = str(payload["gold"])
        endpoint = str(payload.get("endpoint") or "")
        timeout = float(payload.get("timeout") or DEFAULT_TIMEOUT)
        row_cap = int(payload.get("row_cap") or DEFAULT_ROW_CAP)
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"{SPARQL}: malformed payload ({exc})", transient=False) from None
    key = (endpoint, gold, row_cap)
    gold_result = _gold_cache.get(key)
    if gold_result is None:
        gold_result = await execute(gold, endpoint, max(timeout, 30.0), row_cap)
        if "error" in gold_result:
            raise BackendError(f"{SPARQL}: the gold query failed: {gold_result['error']}")
        if len(_gold_cache) >= GOLD_CACHE_SIZE:
            _gold_cache.clear()  # it serves retries and repeated runs in one process; keep it bounded
        _gold_cache[key] = gold_result
    output = await execute(query, endpoint, timeout, row_cap) if query else {"error": "no query"}
    return json.dumps({"gold": gold_result, "output": output, "backend": endpoint or "embedded"},
                      ensure_ascii=False)
