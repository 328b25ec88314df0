"""SPARQL 1.1 endpoints over HTTP, as a service like the model server: one client, retries, no blame.

One ``aiohttp.ClientSession`` per event loop (a run is one loop), with keep-alive and no
cap of its own on connections: the run's ``-j`` bounds the queries in flight. An
``Authorization`` header for endpoints behind a login comes from the environment
(``N2F_SPARQL_AUTHORIZATION``) or the config (``[sparql] authorization``), never from
the run's settings, which are written to disk.

What an answer means:

- 200 with SPARQL JSON: the rows.
- 408, 429 and 5xx, a dropped or refused connection: the endpoint's trouble, never the
  model's. Retried ``RETRIES`` times with backoff (``Retry-After`` honoured up to
  ``MAX_WAIT``), then a BackendError: the item ends in status ``error`` and ``resume``
  runs it again.
- Any other status (400 for a query the endpoint cannot parse, say) or a body that is
  not SPARQL JSON: ``Refused``, the query's own error, scored as the model's answer.
- No answer within the query's timeout: ``asyncio.TimeoutError``, the query's error too
  (a query too costly to answer), as for the embedded graph.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from typing import TYPE_CHECKING, Any

from sessions.backends.base import BackendError
from sessions.backends.rate_headers import retry_after

if TYPE_CHECKING:
    import aiohttp  # imported where a query is sent: a run that never queries an endpoint does not pay ~0.15 s for it

INFRASTRUCTURE = frozenset({408, 429})  # and every 5xx
RETRIES = 4
MAX_WAIT = 10.0  # seconds of Retry-After waited for inside a run
AUTH_VARIABLE = "N2F_SPARQL_AUTHORIZATION"

_sessions: dict[int, tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession]] = {}


class Refused(Exception):
    """The query is not allowed to run, or the endpoint rejected it; the message says why."""


def authorization() -> str:
    value = os.environ.get(AUTH_VARIABLE)
    if value is None:
        from sessions.config import load_config

        value = load_config().sparql_authorization
    return value


def session() -> aiohttp.ClientSession:
    """The running loop's client, made at its first query."""
    import aiohttp

    loop = asyncio.get_running_loop()
    held = _sessions.get(id(loop))
    if held is None or held[0] is not loop or held[1].closed:
        auth = authorization()
        client = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
            headers={"Accept": "application/sparql-results+json", **({"Authorization": auth} if auth else {})})
        _sessions[id(loop)] = (loop, client)
        return client
    return held[1]


async def close_sessions() -> None:
    """Close the running loop's client (the end of a run)."""
    held = _sessions.pop(id(asyncio.get_running_loop()), None)
    if held is not None:
        await held[1].close()


def _is_infrastructure(status: int) -> bool:
    return status in INFRASTRUCTURE or status >= 500


async def _post_once(url: str, query: str, timeout: float) -> tuple[int, Any, float | None, str]:
    """One POST: status, parsed JSON (or None), the Retry-After asked for, and the start of the body."""
    import aiohttp

    async with session().post(url, data={"query": query}, timeout=aiohttp.ClientTimeout(total=timeout)) as reply:
        text = await reply.text(errors="replace")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        return reply.status, data, retry_after(reply.headers), text[:300]


async def post(url: str, query: str, timeout: float, retries: int | None = None) -> dict[str, Any]:
    """The endpoint's SPARQL JSON answer; Refused, BackendError or asyncio.TimeoutError as the module says
    (``retries`` after the first try: ``RETRIES`` unless given)."""
    import aiohttp

    retries = RETRIES if retries is None else retries
    attempt = -1
    while True:
        attempt += 1
        try:
            status, data, wait, head = await _post_once(url, query, timeout)
        except aiohttp.ClientConnectionError as exc:  # refused, reset, DNS: no HTTP answer at all
            if attempt == retries:
                reason = str(exc) or type(exc).__name__
                raise BackendError(f"SPARQL endpoint {url} is unreachable: {reason}") from None
            await asyncio.sleep(_backoff(attempt))
            continue
        if status == 200:
            if not isinstance(data, dict):
                raise Refused(f"endpoint {url} did not return SPARQL JSON results: {head[:120]}")
            return data
        if not _is_infrastructure(status):
            raise Refused(f"endpoint {url} answered HTTP {status}: {head}")
        if attempt == retries or (wait is not None and wait > MAX_WAIT):
            raise BackendError(f"SPARQL endpoint {url} answered HTTP {status} {attempt + 1} time(s): {head[:120]}")
        await asyncio.sleep(wait if wait is not None else _backoff(attempt))


def _backoff(attempt: int) -> float:
    return min(4.0, 0.25 * 2.0 ** attempt) * (1 - 0.25 * random.random())
