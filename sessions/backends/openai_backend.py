"""The OpenAI-compatible backend: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio...

One ``POST {base_url}/chat/completions`` per engine step, spoken directly with aiohttp.
Not through the ``openai`` SDK: measured with ``n2f bench`` (``-j 64`` against a
200 ms loopback server, the whole pipeline), the SDK even on its own aiohttp
transport spent ~1.0 ms of CPU per call and reached 86% of the ideal throughput;
this module spends ~0.45 ms and reaches 93%. At that concurrency every microsecond
on the event loop between a reply and the next request delays a whole round of
calls. The protocol used is small and stable: a JSON body with ``model``,
``messages`` and sampling parameters, ``Authorization: Bearer``, a JSON reply whose
``choices[0].message.content`` is the answer and whose ``error`` object explains a
failure. This module retries itself, so the policy is explicit and testable.

- Retried: 429 (waiting as long as ``retry-after-ms`` / ``Retry-After`` ask, capped),
  408, 5xx, timeouts and connection errors, with exponential backoff and jitter, at most
  ``max_attempts`` attempts.
- Not retried: every other 4xx (400, 401, 403, 404, 409, 422...) -> BackendError with
  ``transient=False`` and the server's own message; a malformed reply -> BackendError
  ("malformed reply: ..."), since asking again rarely mends a broken server.
- Each attempt has a wall-clock timeout (``attempt_timeout``, never beyond what is left
  of the deadline) and the whole call an overall ``deadline``. The deadline clock
  starts when the call first gets a slot from the adaptive limiter: time spent queued
  behind our own throttling is not the server's fault.
- Adaptive concurrency (AIMD): the limiter halves on a 429 and grows back by one after
  a run of successes. The connection pool itself is unbounded: the limiter is the one
  limit, so there is never a second queue hidden in the HTTP client.
- The API key lives only in the session's headers: it is never in ``describe()``, in an
  error message, in the cache key or in anything written to disk.
- Proxies: ``HTTP(S)_PROXY`` / ``NO_PROXY`` from the environment are honoured, as the
  SDK would, looked up once per backend (aiohttp's ``trust_env`` looks them up again
  for every request: ~0.5 ms of CPU, more than the whole HTTP exchange).
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import ipaddress
import json
import os
import random
import time
import urllib.request
from typing import Any, Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from sessions.backends.base import Backend, BackendError, CallRequest, Completion, ModelSpec
from sessions.cache import ResponseCache
from sessions.errors import InputError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_KEY = "not-needed"
RETRY_AFTER_CAP = 60.0  # seconds; never wait longer than this on a server's say-so
BACKOFF_BASE = 0.5
BACKOFF_CAP = 20.0
PREFLIGHT_TIMEOUT = 2.0
RETRY_STATUSES = {408, 429}  # plus every 5xx

Sleep = Callable[[float], Awaitable[Any]]


# ----------------------------------------------------------------------- helpers


def is_local_url(url: str) -> bool:
    """True for servers that normally need no key: loopback, private addresses, LAN names.

    Covers ``localhost`` / ``*.localhost`` / ``*.local`` / ``*.internal``, bare host names
    without a dot (docker service names, ``gpu-box``) and loopback, private and
    link-local IP literals.
    """
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) base URL: {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise InputError(f"bad port in base URL {url!r}") from None
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTP(S)_PROXY``), unless ``NO_PROXY`` exempts its host."""
    parts = urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme) or None


def parse_retry_after(headers: Mapping[str, str] | None, cap: float = RETRY_AFTER_CAP) -> float | None:
    """Seconds a server asks us to wait (``retry-after-ms``, then ``Retry-After`` as
    seconds or an HTTP date), capped; None if it does not say."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000.0
            if value >= 0 and value == value:
                return min(value, cap)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        value = when.timestamp() - time.time()
    if value != value:  # NaN
        return None
    return min(max(value, 0.0), cap)


def _one_line(text: Any, limit: int = 300) -> str:
    out = " ".join(str(text).split())
    return out if len(out) <= limit else out[: limit - 3] + "..."


def _server_message(body: Any) -> str:
    """The message in a server's error body (OpenAI's ``{"error": {"message"}}``, a
    ``detail`` or ``message`` field), else the body itself on one line."""
    if isinstance(body, Mapping):
        msg = body.get("message") or body.get("detail") or body.get("error")
        if isinstance(msg, Mapping):
            msg = msg.get("message")
        return _one_line(msg) if msg else _one_line(json.dumps(body, ensure_ascii=False))
    return _one_line(body) if str(body).strip() else "no message"


# ---------------------------------------------------------------------- limiter


class Permit:
    """What ``async with limiter`` yields: remembers the limiter epoch it was granted in."""

    __slots__ = ("epoch",)

    def __init__(self, epoch: int):
        self.epoch = epoch


class AdaptiveLimiter:
    """A concurrency limit that adapts to rate limiting (additive increase, multiplicative decrease).

    ``async with limiter as permit:`` holds one slot (FIFO among waiters). Report outcomes
    with ``limiter.on_success()`` and ``limiter.on_rate_limited(permit)``: a 429 halves the
    limit (never below 1); ``grow_after`` consecutive successes raise it by one (never
    above ``maximum``, by default the initial value). Only one halving per generation: a
    burst of 429s from calls that were all granted under the same limit counts once (as a
    TCP congestion window does) instead of collapsing the limit to 1 in one overloaded
    moment; a 429 from a call granted after the last halving halves again.

    Release is synchronous, so a cancelled call can never leak its slot.
    """

    def __init__(self, initial: int = 64, maximum: int | None = None, grow_after: int = 8):
        if initial < 1:
            raise ValueError("initial concurrency must be at least 1")
        self.limit = initial
        self.maximum = max(maximum or initial, initial)
        self.grow_after = max(1, grow_after)
        self.in_flight = 0
        self.successes = 0
        self.decreases = 0
        self.epoch = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self) -> Permit:
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
            return Permit(self.epoch)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed over just as we were cancelled
            else:
                try:
                    self._waiters.remove(fut)
                except ValueError:
                    pass
            raise
        return Permit(self.epoch)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1  # hand the slot over directly
                fut.set_result(None)

    async def __aenter__(self) -> Permit:
        return await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()

    def on_success(self) -> None:
        self.successes += 1
        if self.successes >= self.grow_after and self.limit < self.maximum:
            self.limit += 1
            self.successes = 0
            self._wake()

    def on_rate_limited(self, permit: Permit | None = None) -> None:
        self.successes = 0
        if permit is not None and permit.epoch != self.epoch:
            return  # granted before the last halving: that halving already answered it
        self.limit = max(1, self.limit // 2)
        self.epoch += 1
        self.decreases += 1


# ---------------------------------------------------------------------- backend


class _Retry(Exception):
    """One failed attempt that may be retried."""

    def __init__(self, message: str, wait: float | None = None, rate_limited: bool = False):
        super().__init__(message)
        self.wait = wait
        self.rate_limited = rate_limited


class OpenAIBackend(Backend):
    """Calls any OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        spec: ModelSpec,
        api_key: str | None = None,
        base_url: str | None = None,
        deadline: float = 120.0,
        max_attempts: int = 6,
        cache: ResponseCache | None = None,
        initial_concurrency: int = 64,
        *,
        attempt_timeout: float = 60.0,
        grow_after: int = 8,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ):
        if not spec.name:
            raise InputError("openai model spec needs a model name: openai:MODEL or openai:MODEL@http://host:port/v1")
        self.spec = spec
        url = spec.base_url or base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = url.rstrip("/")
        _host_port(self.base_url)  # validate early: a bad URL is bad input
        key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        if not key:
            if not is_local_url(self.base_url):
                raise InputError(f"no API key: set OPENAI_API_KEY (needed for {self.base_url})")
            key = LOCAL_PLACEHOLDER_KEY
        self.__key = key  # name-mangled, only put in the session's headers
        self.deadline = float(deadline)
        self.attempt_timeout = float(attempt_timeout)
        self.max_attempts = max(1, int(max_attempts))
        self.cache = cache
        self.limiter = AdaptiveLimiter(initial_concurrency, grow_after=grow_after)
        self.sleep: Sleep = sleep or asyncio.sleep
        self.rng = rng or random.Random()
        self._session: Any = None
        self.proxy = proxy_for(self.base_url)
        self.calls = 0  # HTTP attempts made (for tests and the bench)

    # ------------------------------------------------------------------ basics

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.spec.name!r}, base_url={self.base_url!r})"

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai", "model": self.spec.name, "base_url": self.base_url}

    def _get_session(self) -> Any:
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                headers={"Authorization": f"Bearer {self.__key}", "Content-Type": "application/json"},
            )
        return self._session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
        if self.cache is not None:
            self.cache.flush()  # replies it holds back to write in batches

    async def preflight(self) -> None:
        host, port = _host_port(self.base_url)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), PREFLIGHT_TIMEOUT)
        except asyncio.TimeoutError:
            raise InputError(f"cannot reach {self.base_url}: no answer within {PREFLIGHT_TIMEOUT:g}s") from None
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise InputError(f"cannot reach {self.base_url}: {_one_line(reason)}") from None
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), 1.0)
        except (OSError, asyncio.TimeoutError):
            pass

    # ---------------------------------------------------------------- requests

    def _params(self, request: CallRequest) -> dict[str, Any]:
        params = dict(request.step.params)
        params.setdefault("temperature", 0)
        for forbidden in ("model", "messages", "stream"):
            params.pop(forbidden, None)
        return params

    def _messages(self, request: CallRequest) -> list[dict[str, str]]:
        out = []
        for m in request.step.messages:
            if isinstance(m, Mapping):
                out.append({"role": str(m["role"]), "content": str(m["content"])})
            else:
                out.append({"role": m.role, "content": m.content})
        return out

    def _cache_parts(self, messages: list[dict[str, str]], params: dict[str, Any], attempt: int) -> dict[str, Any]:
        return {
            "model": self.spec.name,
            "base_url": self.base_url,
            "messages": messages,
            "params": params,
            "attempt": attempt,
        }

    async def complete(self, request: CallRequest) -> Completion:
        messages = self._messages(request)
        params = self._params(request)
        parts = None
        if self.cache is not None:
            parts = self._cache_parts(messages, params, request.attempt)
            t0 = time.perf_counter()
            hit = self.cache.get(parts)
            if hit is not None and isinstance(hit.get("text"), str):
                usage = {k: int(v) for k, v in (hit.get("usage") or {}).items() if isinstance(v, int)}
                return Completion(text=hit["text"], usage=usage, latency=time.perf_counter() - t0, cached=True)
        completion = await self._call_with_retries(messages, params)
        if self.cache is not None and parts is not None:
            self.cache.put(parts, {"text": completion.text, "usage": completion.usage})
        return completion

    async def _call_with_retries(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Completion:
        loop = asyncio.get_running_loop()
        started: float | None = None
        last = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            if started is None:
                permit = await self.limiter.acquire()
                started = loop.time()
            else:
                remaining = self.deadline - (loop.time() - started)
                if remaining <= 0:
                    raise self._deadline_error(attempt - 1, last)
                try:
                    permit = await asyncio.wait_for(self.limiter.acquire(), remaining)
                except asyncio.TimeoutError:
                    raise self._deadline_error(attempt - 1, last) from None
            try:
                remaining = self.deadline - (loop.time() - started)
                if remaining <= 0:
                    raise self._deadline_error(attempt - 1, last)
                budget = min(self.attempt_timeout, remaining)
                try:
                    completion = await self._attempt(messages, params, budget)
                except _Retry as retry:
                    if retry.rate_limited:
                        self.limiter.on_rate_limited(permit)
                    last = str(retry)
                    wait = retry.wait
                else:
                    self.limiter.on_success()
                    return completion
            finally:
                self.limiter.release()
            if attempt >= self.max_attempts:
                break
            if wait is None:
                wait = self._backoff(attempt)
            remaining = self.deadline - (loop.time() - started)
            if wait >= remaining:
                raise self._deadline_error(attempt, last, waiting=wait)
            await self.sleep(wait)
        plural = "s" if self.max_attempts != 1 else ""
        raise BackendError(f"gave up after {self.max_attempts} attempt{plural}: {last}", transient=True)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: attempt 1 -> ~0.5 s, 2 -> ~1 s, ... capped."""
        ceiling = min(BACKOFF_CAP, BACKOFF_BASE * (2 ** (attempt - 1)))
        return ceiling * (0.5 + 0.5 * self.rng.random())

    def _deadline_error(self, attempts: int, last: str, waiting: float | None = None) -> BackendError:
        detail = f"{attempts} attempt{'s' if attempts != 1 else ''}; last: {last}"
        if waiting is not None:
            detail += f"; next retry due in {waiting:.1f}s"
        return BackendError(f"deadline {self.deadline:g}s exceeded ({detail})", transient=True)

    async def _attempt(self, messages: list[dict[str, str]], params: dict[str, Any], budget: float) -> Completion:
        import aiohttp

        session = self._get_session()
        payload = json.dumps({"model": self.spec.name, "messages": messages, **params}, ensure_ascii=False)
        self.calls += 1
        t0 = time.perf_counter()
        try:
            async with session.post(self.base_url + "/chat/completions", data=payload.encode("utf-8"),
                                    timeout=aiohttp.ClientTimeout(total=budget), proxy=self.proxy) as response:
                status, headers = response.status, response.headers
                body = await response.text(errors="replace")
        except asyncio.TimeoutError:
            raise _Retry(f"no reply within {budget:.1f}s") from None
        except aiohttp.ClientError as exc:
            raise _Retry(f"connection error: {_one_line(f'{type(exc).__name__}: {exc}')}") from None
        if status >= 300:
            self._raise_for_status(status, headers, body)
        latency = time.perf_counter() - t0
        return Completion(*self._parse_body(body), latency=latency)

    @staticmethod
    def _raise_for_status(status: int, headers: Mapping[str, str], body: str) -> None:
        """A retry for 429, 408 and 5xx; a BackendError that retrying cannot mend for the rest."""
        try:
            data: Any = json.loads(body)
        except ValueError:
            data = body
        message = f"HTTP {status}: {_server_message(data)}"
        if status == 429:
            raise _Retry(message, wait=parse_retry_after(headers), rate_limited=True)
        if status in RETRY_STATUSES or status >= 500:
            raise _Retry(message, wait=parse_retry_after(headers) if status == 503 else None)
        raise BackendError(message, transient=False)

    @staticmethod
    def _parse_body(body: str) -> tuple[str, dict[str, int]]:
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise BackendError(f"malformed reply: not JSON ({exc}): {_one_line(body, 120)!r}") from None
        if not isinstance(data, dict):
            raise BackendError(f"malformed reply: expected a JSON object, got {type(data).__name__}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            if isinstance(data.get("error"), Mapping):  # some servers send errors with status 200
                raise BackendError(f"malformed reply: error in a 200 reply: {_server_message(data['error'])}")
            raise BackendError("malformed reply: no choices")
        first = choices[0]
        message = first.get("message") if isinstance(first, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, str):
            reason = "no choices[0].message.content"
            if isinstance(message, Mapping) and message.get("refusal"):
                reason += f" (refusal: {_one_line(message['refusal'], 120)})"
            elif isinstance(message, Mapping) and message.get("tool_calls"):
                reason += " (the model answered with tool calls)"
            raise BackendError(f"malformed reply: {reason}")
        usage: dict[str, int] = {}
        raw_usage = data.get("usage")
        if isinstance(raw_usage, Mapping):
            for key in ("prompt_tokens", "completion_tokens"):
                value = raw_usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    usage[key] = value
        return content, usage
