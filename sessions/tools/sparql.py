"""The ``sparql`` tool: run a model's query and the gold query, read-only, with limits.

compost's second step is ``Step(kind="tool", tool="sparql")``; this executes it. By
default queries run on the graph file the step names (``graph``: compost's bundled
knowledge graph), loaded into an in-memory pyoxigraph store in a child process; with an ``endpoint`` URL they go to a
SPARQL 1.1 endpoint over HTTP instead (``sessions.tools.sparql_endpoint``: one client per
run, an endpoint's 408/429/5xx and dropped connections retried, then status ``error``,
never the model's fault). Either way the output is JSON
``{"gold": {...}, "output": {...}, "backend": ...}`` where each side is
``{"vars", "rows", "truncated"}`` or ``{"error"}``, so scoring stays a pure function
of stored outputs.

Safety. Only queries are run, never updates: ``SERVICE``, ``FROM`` and update
keywords are refused by looking at keyword tokens (text inside IRIs, strings and
comments does not count), and pyoxigraph's ``Store.query`` itself rejects updates. A
basic graph pattern that falls apart into more than ``MAX_COMPONENTS`` unconnected
parts (a cross product) is refused up front. pyoxigraph cannot cancel a query, so the
embedded graph is queried in a child process (``sessions.tools.sparql_worker``) that is
killed when a query overruns its timeout: the work really stops, and the next query
gets a fresh child. Before a run on an endpoint starts, ``preflight`` asks it
``ASK {}`` so that a wrong URL fails at once instead of as an error on every item.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Mapping

from sessions.backends.base import BackendError
from sessions.errors import InputError
from sessions.tools.sparql_endpoint import Refused, close_sessions, post
from sessions.tools.sparql_worker import QueryWorker, WorkerError

SPARQL = "sparql"
MAX_COMPONENTS = 3
DEFAULT_TIMEOUT = 5.0
DEFAULT_ROW_CAP = 10_000
GOLD_CACHE_SIZE = 4096
PREFLIGHT_TIMEOUT = 3.0

_workers: dict[str, QueryWorker] = {}
_worker_lock = threading.Lock()
_gold_cache: dict[tuple[str, str, int], dict[str, Any]] = {}


def embedded_worker(graph: str) -> QueryWorker:
    """The process's query child for one graph file (started at its first query, stopped at exit)."""
    with _worker_lock:
        worker = _workers.get(graph)
        if worker is None:
            worker = _workers[graph] = QueryWorker(Path(graph))
            atexit.register(worker.close)
    return worker


def check(query: str) -> None:
    """Raise Refused for anything but a bounded read-only query (``engines.sparql.guard``)."""
    from engines.sparql.guard import forbidden_clauses, pattern_parts  # lark's SPARQL grammar: loaded by a run that queries

    found = forbidden_clauses(query)
    if found:
        raise Refused("refused: read-only endpoint, the query contains " + ", ".join(found))
    parts = pattern_parts(query)
    if parts is not None and parts > MAX_COMPONENTS:
        raise Refused(f"refused: the graph pattern is a cross product of {parts} unconnected parts "
                      f"(at most {MAX_COMPONENTS})")


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


async def _run_endpoint(url: str, query: str, row_cap: int, timeout: float) -> dict[str, Any]:
    data = await post(url, query, timeout)
    if "boolean" in data:
        return {"vars": [], "rows": [[str(bool(data["boolean"])).lower()]], "truncated": False}
    variables = list(data.get("head", {}).get("vars", []))
    bindings = data.get("results", {}).get("bindings", [])
    rows = [[_term(b[v]) if v in b else None for v in variables] for b in bindings[:row_cap]]
    return {"vars": variables, "rows": rows, "truncated": len(bindings) > row_cap}


async def preflight(url: str, timeout: float = PREFLIGHT_TIMEOUT) -> None:
    """Fail with InputError unless the endpoint answers ``ASK {}`` with SPARQL JSON within ``timeout``
    (one try: an endpoint that fails it now would fail every item)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"SPARQL endpoint {url!r} is not an http(s) URL")
    try:
        data = await post(url, "ASK {}", timeout, retries=0)
    except (Refused, BackendError) as exc:
        raise InputError(f"{exc} (checked with ASK {{}} before the run)") from None
    except asyncio.TimeoutError:
        raise InputError(f"SPARQL endpoint {url} did not answer ASK {{}} within {timeout:g} s") from None
    finally:
        await close_sessions()
    if not isinstance(data.get("boolean"), bool):
        raise InputError(f"SPARQL endpoint {url} did not answer ASK {{}} with a SPARQL boolean result")


async def execute(query: str, endpoint: str, graph: str, timeout: float, row_cap: int) -> dict[str, Any]:
    """One side of the comparison: rows or an error the model is to blame for.

    An endpoint query is bounded by its client's timeout; its infrastructure failures are
    BackendErrors (``sessions.tools.sparql_endpoint``); an embedded query by killing the query process.
    """
    try:
        check(query)
        if endpoint:
            return await _run_endpoint(endpoint, query, row_cap, timeout)
        return await asyncio.wrap_future(embedded_worker(graph).submit(query, row_cap, timeout))
    except Refused as exc:
        return {"error": str(exc)}
    except (asyncio.TimeoutError, TimeoutError):
        return {"error": f"timed out after {timeout:g} s"}
    except WorkerError as exc:
        raise BackendError(f"{SPARQL}: {exc}") from None


async def sparql(payload: Mapping[str, Any]) -> str:
    """The tool: the gold query's result (cached per process) and the model query's result."""
    try:
        query = str(payload.get("query") or "")
        gold = str(payload["gold"])
        endpoint = str(payload.get("endpoint") or "")
        graph = "" if endpoint else str(payload["graph"])
        timeout = float(payload.get("timeout") or DEFAULT_TIMEOUT)
        row_cap = int(payload.get("row_cap") or DEFAULT_ROW_CAP)
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"{SPARQL}: malformed payload ({exc})", transient=False) from None
    key = (endpoint or graph, gold, row_cap)
    gold_result = _gold_cache.get(key)
    if gold_result is None:
        gold_result = await execute(gold, endpoint, graph, max(timeout, 30.0), row_cap)
        if "error" in gold_result:
            raise BackendError(f"{SPARQL}: the gold query failed: {gold_result['error']}")
        if len(_gold_cache) >= GOLD_CACHE_SIZE:
            _gold_cache.clear()  # it serves retries and repeated runs in one process; keep it bounded
        _gold_cache[key] = gold_result
    output = await execute(query, endpoint, graph, timeout, row_cap) if query else {"error": "no query"}
    return json.dumps({"gold": gold_result, "output": output, "backend": endpoint or "embedded"},
                      ensure_ascii=False)
