"""The OpenAI-compatible backend: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, LM Studio...

One chat completion per engine step through ``openai.AsyncOpenAI`` (or
``AsyncAzureOpenAI`` when the config names an Azure endpoint), the one client the design
card names, on the SDK's aiohttp transport by default (``transport = "httpx"`` in the
config for its other one: measured with ``benchmarks/openai_cpu.py``, the SDK and its
client cost 0.45 ms of CPU per call on aiohttp against 1.02 ms on httpx). The SDK does what it does well and this module
does not do it again:

- Retries: the SDK's own (``max_retries``): 408, 409, 429 and 5xx, timeouts and dropped
  connections, with its exponential backoff and jitter; a reply that says how long to
  wait (``retry-after-ms`` / ``Retry-After``) is waited for when that is at most two
  minutes, and not retried at all when it is longer. Every other 4xx is not retried and
  ends as BackendError with ``transient=False`` and the server's own message.
- Environment: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID``,
  ``OPENAI_PROJECT_ID`` (and Azure's ``AZURE_OPENAI_API_KEY``, ``OPENAI_API_VERSION``),
  proxies from ``HTTP(S)_PROXY`` / ``NO_PROXY``, all read by the SDK and its HTTP client.

What the SDK does not do is here:

- An overall deadline per call, retries and backoff included: the SDK's timeout is per
  attempt (``attempt_timeout``, never beyond the deadline).
- Malformed replies (not JSON, no choices, no content, a stream cut off before its end)
  are BackendError ("malformed reply: ..." / "stream broken: ..."), never an answer.
- Streaming when the caller passes ``CallRequest.on_text`` (the inspector watching an
  item); otherwise one plain request: 0.83 ms of CPU per call for the whole pipeline
  against 0.96 ms streamed.
- The API key lives only in the client object: it is never in ``describe()``, an error
  message, the cache key or anything written to disk. Servers on loopback or a LAN need
  none: they get a placeholder.

Requests go through the client's own ``post`` (its retries, auth, Azure routing and typed
errors) with the body as JSON we built, and replies come back as JSON objects
(``sessions.backends.openai_replies``), rather than through
``chat.completions.create``: ``create`` first walks every message through the SDK's
type-driven transform, which for plain strings changes nothing and cost 0.45 ms of CPU
per call here (``-j 64`` against a 200 ms stub: 2.99-3.13 ms -> 2.54-2.56 ms for the
whole pipeline).

Concurrency: every call holds a slot of the run's ``sessions.backends.limits.AdaptiveLimit``
(``-j`` is its ceiling) and an overload (429, 503, a deadline) lowers it; the SDK's
client is told not to retry those (``_OverloadToCaller``), since a retry inside the SDK
keeps its slot, and ``sessions.backends.overload`` retries them instead. Replies are
read raw (the SDK's ``with_raw_response`` header) so that their ``x-ratelimit-*``
headers reach the limit. ``preflight`` asks the server before the run exists
(``sessions.backends.openai_preflight``): the URL, the key, the model, and the slots
a llama.cpp server says it has.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

import httpx2
import openai
from openai._constants import RAW_RESPONSE_HEADER  # what ``with_raw_response`` sends: the reply with its headers

from sessions.backends.base import Backend, BackendError, CallRequest, Completion, ModelSpec
from sessions.backends.openai_preflight import check_server, connection_problem, host_port, is_local_url
from sessions.backends.openai_replies import (
    one_line, reply_content, served_by, server_message, stream_delta, usage_of)
from sessions.backends.overload import OVERLOAD_STATUSES, Overloaded, call_within
from sessions.backends.rate_headers import quota_pause, retry_after
from sessions.backends.cache import ResponseCache
from sessions.config import TRANSPORTS
from sessions.errors import InputError
from sessions.redact import remember
from sessions.backends.limits import AdaptiveLimit

if TYPE_CHECKING:
    from openai._legacy_response import LegacyAPIResponse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_PLACEHOLDER_KEY = "not-needed"
RETRIED_STATUSES = {408, 409, 429}  # plus every 5xx: what the SDK retries (overloads in the run's own loop)
UNLIMITED = 1024  # the ceiling of a backend used without a runner (a re-run from the prompt editor)

# The HTTP attempts of the call in progress: the client's request hook counts into the
# counter of the task that sent the request (asyncio copies the context into each task).
_ATTEMPTS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("n2f_openai_attempts")


# ----------------------------------------------------------------------- helpers


def gave_up(attempts: int) -> str:
    return f"gave up after {attempts} attempt{'s' if attempts != 1 else ''}"


@dataclass(frozen=True)
class AzureTarget:
    """An Azure OpenAI deployment: the endpoint, the deployment name and the API version."""

    endpoint: str
    deployment: str = ""
    api_version: str = ""


class _OverloadToCaller:
    """The SDK client's retry rule, less the overload statuses: those come back to the run's limit."""

    def _should_retry(self, response: httpx2.Response) -> bool:
        return response.status_code not in OVERLOAD_STATUSES and super()._should_retry(response)  # type: ignore[misc]  # a mixin: the SDK client after it in the MRO has it


class _Client(_OverloadToCaller, openai.AsyncOpenAI):
    pass


class _AzureClient(_OverloadToCaller, openai.AsyncAzureOpenAI):
    pass


# ---------------------------------------------------------------------- backend


class OpenAIBackend(Backend):
    """Calls any OpenAI-compatible chat completions endpoint through the ``openai`` SDK."""

    def __init__(
        self,
        spec: ModelSpec,
        api_key: str | None = None,
        base_url: str | None = None,
        deadline: float = 120.0,
        max_retries: int = 5,
        cache: ResponseCache | None = None,
        *,
        attempt_timeout: float = 60.0,
        organization: str | None = None,
        project: str | None = None,
        transport: str = "aiohttp",
        azure: AzureTarget | None = None,
    ):
        if not spec.name:
            raise InputError("openai model spec needs a model name: openai:MODEL or openai:MODEL@http://host:port/v1")
        if transport not in TRANSPORTS:
            raise InputError(f"unknown openai transport {transport!r}: {' or '.join(TRANSPORTS)}")
        self.spec = spec
        self.azure = azure if azure and azure.endpoint and not spec.base_url else None
        if self.azure is not None:
            url = self.azure.endpoint
            key = api_key or os.environ.get("AZURE_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY") or ""
            variable = "AZURE_OPENAI_API_KEY"
        else:
            url = spec.base_url or base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
            key = api_key or os.environ.get("OPENAI_API_KEY") or ""
            variable = "OPENAI_API_KEY"
        self.base_url = url.rstrip("/")
        host_port(self.base_url)  # validate early: a bad URL is bad input
        if not key:
            if not is_local_url(self.base_url):
                raise InputError(f"no API key: set {variable} (needed for {self.base_url})")
            key = LOCAL_PLACEHOLDER_KEY
        self.__key = key  # name-mangled; handed to the client only
        remember(key)  # and redacted from every message stored or shown
        if self.azure is not None and not self._api_version():
            raise InputError("Azure OpenAI needs an API version: api_version in the config's [openai] or OPENAI_API_VERSION")
        self.organization = organization or None
        self.project = project or None
        self.deadline = float(deadline)
        self.attempt_timeout = min(float(attempt_timeout), self.deadline)
        self.max_retries = max(0, int(max_retries))
        self.transport = transport
        self.cache = cache
        self._client: openai.AsyncOpenAI | None = None
        self.calls = 0  # HTTP attempts made, retries included (for tests and the bench)
        self.limit = AdaptiveLimit(UNLIMITED)

    # ------------------------------------------------------------------ basics

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.spec.name!r}, base_url={self.base_url!r})"

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "openai", "model": self.spec.name, "base_url": self.base_url}
        if self.azure is not None:
            out.update(azure_deployment=self.azure.deployment or self.spec.name, api_version=self._api_version())
        return out

    def _api_version(self) -> str:
        assert self.azure is not None
        return self.azure.api_version or os.environ.get("OPENAI_API_VERSION", "")

    async def _count_attempt(self, request: httpx2.Request) -> None:
        self.calls += 1
        counter = _ATTEMPTS.get(None)
        if counter is not None:
            counter[0] += 1

    def _http_client(self) -> httpx2.AsyncClient:
        """The SDK's own HTTP client on the chosen transport, counting attempts."""
        hooks = {"request": [self._count_attempt]}
        if self.transport == "aiohttp":
            return openai.DefaultAioHttpClient(event_hooks=hooks)
        return openai.DefaultAsyncHttpxClient(event_hooks=hooks)

    def client(self) -> openai.AsyncOpenAI:
        """The SDK client, made by ``preflight`` or else on first use."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> openai.AsyncOpenAI:
        common: dict[str, Any] = dict(
            api_key=self.__key, organization=self.organization, project=self.project,
            timeout=httpx2.Timeout(self.attempt_timeout, connect=min(self.attempt_timeout, 10.0)),
            max_retries=self.max_retries, http_client=self._http_client(),
        )
        if self.azure is not None:
            return _AzureClient(
                azure_endpoint=self.base_url, azure_deployment=self.azure.deployment or None,
                api_version=self._api_version() or None, **common)
        return _Client(base_url=self.base_url, **common)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        if self.cache is not None:
            self.cache.flush()  # replies it holds back to write in batches

    def use_limit(self, limit: AdaptiveLimit) -> None:
        self.limit = limit

    async def preflight(self) -> None:
        """Ask the server before the run exists (``openai_preflight.check_server``): a wrong URL, key or
        model is bad input, and a llama.cpp server's slot count becomes ``server_slots``.

        The client is made here, in a worker thread: making it loads the system's CA
        certificates (170 ms of blocking work here), which on the event loop would stall the
        inspector and delay a run's first calls."""
        if self._client is None:
            self._client = await asyncio.to_thread(self._make_client)
        self.server_slots = await check_server(self._client, self.base_url, self.spec.name, azure=self.azure is not None)
        self.calls = 0  # ``calls`` counts the run's model calls, not the preflight's

    # ---------------------------------------------------------------- requests

    def _params(self, request: CallRequest) -> dict[str, Any]:
        params = dict(request.step.params)
        params.setdefault("temperature", 0)
        for forbidden in ("model", "messages", "stream", "stream_options"):
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
                if request.on_text is not None and hit["text"]:
                    request.on_text(hit["text"])
                return Completion(text=hit["text"], usage=usage, latency=time.perf_counter() - t0, cached=True,
                                  finish_reason=str(hit.get("finish_reason", "")),
                                  served_model=str(hit.get("served_model", "")),
                                  fingerprint=str(hit.get("fingerprint", "")))
        completion = await self._call(messages, params, request.on_text)
        if self.cache is not None and parts is not None:
            self.cache.put(parts, {"text": completion.text, "usage": completion.usage,
                                   "finish_reason": completion.finish_reason, "served_model": completion.served_model,
                                   "fingerprint": completion.fingerprint})
        return completion

    async def _call(self, messages: list[dict[str, str]], params: dict[str, Any],
                    on_text: Callable[[str], None] | None) -> Completion:
        """One call in a slot of the run's limit, overloads retried there (``overload.call_within``)."""
        t0 = time.perf_counter()
        attempts = [0]
        _ATTEMPTS.set(attempts)
        completion = await call_within(self.limit, lambda: self._attempt(messages, params, on_text, attempts, t0))
        completion.latency = time.perf_counter() - t0
        return completion

    async def _attempt(self, messages: list[dict[str, str]], params: dict[str, Any],
                       on_text: Callable[[str], None] | None, attempts: list[int], t0: float) -> tuple[Completion, int]:
        """One try, the SDK's retries included, within the deadline: the completion and its tokens, an
        Overloaded for the limit, or a BackendError."""
        call = self._stream(messages, params, on_text) if on_text is not None else self._whole(messages, params)
        try:
            completion, headers = await asyncio.wait_for(call, self.deadline)
        except asyncio.TimeoutError:
            raise Overloaded(BackendError(f"deadline {self.deadline:g}s exceeded (retries included)", transient=True),
                             "a call ran past its deadline", timeout=True) from None
        except openai.APIStatusError as exc:
            error = self._status_error(exc, attempts[0])
            if exc.status_code in OVERLOAD_STATUSES:
                raise Overloaded(error, f"HTTP {exc.status_code}", retry_after(exc.response.headers)) from None
            raise error from None
        except openai.APIConnectionError as exc:  # APITimeoutError too: its causes say whether it was one
            problem = connection_problem(exc)
            if problem == "timed out":
                raise Overloaded(BackendError(f"{gave_up(attempts[0])}: no reply within {self.attempt_timeout:g}s",
                                              transient=True), "no reply within the attempt timeout",
                                 timeout=True) from None
            raise BackendError(f"{gave_up(attempts[0])}: {problem} (after {time.perf_counter() - t0:.1f}s)",
                               transient=True) from None
        except openai.APIResponseValidationError as exc:
            raise BackendError(f"malformed reply: {one_line(exc.message, 200)}") from None
        except openai.APIError as exc:  # an error event inside a stream
            raise BackendError(f"server error in the reply: {one_line(exc.message, 200)}") from None
        except ValueError as exc:  # a 200 whose body is not JSON
            raise BackendError(f"malformed reply: not JSON ({one_line(exc, 120)})") from None
        pause = quota_pause(headers)
        if pause is not None:
            self.limit.pause(*pause)
        return completion, sum(completion.usage.values())

    @staticmethod
    def _status_error(exc: openai.APIStatusError, attempts: int) -> BackendError:
        status = exc.status_code
        body = exc.body if exc.body is not None else exc.response.text
        message = f"HTTP {status}: {server_message(body)}"
        if status in RETRIED_STATUSES or status >= 500:
            wait = exc.response.headers.get("retry-after")
            if wait is not None:
                message += f" (Retry-After: {one_line(wait, 40)})"
            return BackendError(f"{gave_up(attempts)}: {message}", transient=True)
        return BackendError(message, transient=False)

    def _body(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.spec.name, "messages": messages, **params}

    async def _whole(self, messages: list[dict[str, str]], params: dict[str, Any]) -> tuple[Completion, Any]:
        """One plain request, read raw (as ``with_raw_response`` does) for its headers."""
        raw = cast("LegacyAPIResponse[object]",  # the SDK's types miss that this header makes post return the raw reply
                   await self.client().post("/chat/completions", body=self._body(messages, params), cast_to=object,
                                            options={"headers": {RAW_RESPONSE_HEADER: "true"}}))
        reply = raw.parse()
        text, finish_reason = reply_content(reply)
        model, fingerprint = served_by(reply)
        return Completion(text=text, usage=usage_of(reply), finish_reason=finish_reason, served_model=model,
                          fingerprint=fingerprint), raw.headers

    async def _stream(self, messages: list[dict[str, str]], params: dict[str, Any],
                      on_text: Callable[[str], None]) -> tuple[Completion, Any]:
        """Server-sent events: every text delta to ``on_text``; usage from the last chunk when
        the server sends it. A stream that stops before a finish reason is a failure."""
        body = {**self._body(messages, params), "stream": True, "stream_options": {"include_usage": True}}
        stream = await self.client().post("/chat/completions", body=body, cast_to=object, stream=True,
                                          stream_cls=openai.AsyncStream[object])
        pieces: list[str] = []
        usage: dict[str, int] = {}
        finish_reason = model = fingerprint = ""
        try:
            async with stream:
                async for chunk in stream:
                    usage = usage_of(chunk) or usage
                    model, fingerprint = served_by(chunk, model, fingerprint)
                    delta, finished = stream_delta(chunk)
                    if delta:
                        pieces.append(delta)
                        on_text(delta)
                    finish_reason = finished or finish_reason
        except (openai.APIConnectionError, httpx2.HTTPError, OSError) as exc:  # the SDK retries requests, not streams
            cause = exc.__cause__ or exc
            raise BackendError(f"stream broken after {len(pieces)} piece(s): "
                               f"{one_line(f'{type(cause).__name__}: {cause}')}", transient=True) from None
        if not finish_reason:
            raise BackendError(f"stream broken after {len(pieces)} piece(s): it ended without a finish reason",
                               transient=True)
        return Completion(text="".join(pieces), usage=usage, finish_reason=finish_reason, served_model=model,
                          fingerprint=fingerprint), stream.response.headers
