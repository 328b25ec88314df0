"""OpenAIBackend against the local stub server: replies, retries, deadlines, cache, secrecy."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from engines.core import Item, Message, Step  # noqa: E402
from sessions.backends.base import BackendError, CallRequest, ModelSpec  # noqa: E402
from sessions.backends.openai_backend import (  # noqa: E402
    AdaptiveLimiter,
    OpenAIBackend,
    is_local_url,
    proxy_for,
    parse_retry_after,
)
from sessions.cache import ResponseCache  # noqa: E402
from sessions.errors import InputError  # noqa: E402
from stub_openai import running_stub  # noqa: E402

SECRET = "sk-test-SECRET-7f3a9c1e5d"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("N2F_HOME", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def stub():
    with running_stub() as s:
        yield s


class SleepRecorder:
    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def request(
    text: str = "What is 2+2?", params: dict | None = None, attempt: int = 0, system: str | None = "Be brief."
) -> CallRequest:
    messages = ((Message("system", system),) if system else ()) + (Message("user", text),)
    step = Step(name="answer", messages=messages, params=params or {})
    item = Item(id="i1", engine="dedc", inputs={"question": text}, gold={})
    return CallRequest(item=item, step=step, step_index=0, outputs=(), attempt=attempt)


def make_backend(stub, **kw) -> tuple[OpenAIBackend, SleepRecorder]:
    sleep = SleepRecorder()
    kw.setdefault("deadline", 10.0)
    backend = OpenAIBackend(ModelSpec("openai", "stub-model", stub.base_url), sleep=sleep, rng=random.Random(0), **kw)
    return backend, sleep


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------- replies


async def test_normal_reply_sends_messages_and_params(stub):
    stub.reply = lambda messages: f"echo: {messages[-1]['content']}"
    backend, sleep = make_backend(stub)
    try:
        done = await backend.complete(request("What is 2+2?", params={"max_tokens": 50}))
    finally:
        await backend.aclose()
    assert done.text == "echo: What is 2+2?"
    assert done.usage == {"prompt_tokens": 5, "completion_tokens": 4}  # the stub counts words
    assert done.latency > 0 and not done.cached
    [sent] = stub.chat_requests()
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}]
    assert sent["params"]["temperature"] == 0  # default when the step does not say
    assert sent["params"]["max_tokens"] == 50
    assert sleep.delays == []


async def test_explicit_temperature_is_sent_as_given(stub):
    backend, _ = make_backend(stub)
    try:
        await backend.complete(request(params={"temperature": 0.7, "top_p": 0.9}))
    finally:
        await backend.aclose()
    params = stub.chat_requests()[0]["params"]
    assert params["temperature"] == 0.7 and params["top_p"] == 0.9


async def test_empty_content_is_a_valid_answer(stub):
    stub.push("empty")
    backend, _ = make_backend(stub)
    try:
        done = await backend.complete(request())
    finally:
        await backend.aclose()
    assert done.text == ""
    assert len(stub.chat_requests()) == 1


# -------------------------------------------------------------------- retries


async def test_429_honours_retry_after_and_shrinks_limiter(stub):
    stub.push("429:2", "ok")
    backend, sleep = make_backend(stub, initial_concurrency=16)
    try:
        done = await backend.complete(request())
    finally:
        await backend.aclose()
    assert done.text == "stub reply"
    assert sleep.delays == [2.0]
    assert backend.limiter.limit == 8 and backend.limiter.decreases == 1
    assert [r["behaviour"] for r in stub.chat_requests()] == ["429:2", "ok"]


async def test_429_retry_after_ms_and_cap(stub):
    stub.push("429ms:250", "429:3600", "ok")
    backend, sleep = make_backend(stub, deadline=120.0)
    try:
        await backend.complete(request())
    finally:
        await backend.aclose()
    assert sleep.delays == [0.25, 60.0]  # a server asking for an hour gets the 60 s cap


async def test_500_then_success_backs_off(stub):
    stub.push("500", "503", "ok")
    backend, sleep = make_backend(stub)
    try:
        done = await backend.complete(request())
    finally:
        await backend.aclose()
    assert done.text == "stub reply"
    assert len(sleep.delays) == 2
    assert 0.25 <= sleep.delays[0] <= 0.5 and 0.5 <= sleep.delays[1] <= 1.0  # exponential, jittered
    assert backend.limiter.decreases == 0  # only 429 throttles


async def test_dropped_connection_is_retried(stub):
    stub.push("close", "ok")
    backend, sleep = make_backend(stub)
    try:
        done = await backend.complete(request())
    finally:
        await backend.aclose()
    assert done.text == "stub reply" and len(sleep.delays) == 1


async def test_gives_up_after_max_attempts(stub):
    stub.push(*["500"] * 5)
    backend, sleep = make_backend(stub, max_attempts=3)
    try:
        with pytest.raises(BackendError, match=r"gave up after 3 attempts: HTTP 500: stub error 500") as info:
            await backend.complete(request())
    finally:
        await backend.aclose()
    assert info.value.transient
    assert len(stub.chat_requests()) == 3 and len(sleep.delays) == 2


@pytest.mark.parametrize("status", ["400", "401", "403", "404", "422"])
async def test_client_errors_are_not_retried(stub, status):
    stub.push(status, "ok")
    backend, sleep = make_backend(stub)
    try:
        with pytest.raises(BackendError) as info:
            await backend.complete(request())
    finally:
        await backend.aclose()
    assert not info.value.transient
    assert f"HTTP {status}: stub error {status}" in str(info.value)
    assert len(stub.chat_requests()) == 1 and sleep.delays == []


async def test_hanging_server_hits_the_deadline(stub):
    stub.push("hang:20", "hang:20")
    backend, _ = make_backend(stub, deadline=1.0)
    t0 = time.monotonic()
    try:
        with pytest.raises(BackendError, match=r"deadline 1s exceeded") as info:
            await backend.complete(request())
    finally:
        await backend.aclose()
    elapsed = time.monotonic() - t0
    assert 0.9 <= elapsed < 3.0
    assert info.value.transient


async def test_attempt_timeout_retries_within_deadline(stub):
    stub.push("hang:20", "ok")
    backend, sleep = make_backend(stub, deadline=5.0, attempt_timeout=0.5)
    t0 = time.monotonic()
    try:
        done = await backend.complete(request())
    finally:
        await backend.aclose()
    assert done.text == "stub reply"
    assert time.monotonic() - t0 < 2.5 and len(sleep.delays) == 1


@pytest.mark.parametrize(
    "behaviour, reason",
    [("malformed", "not JSON"), ("no_choices", "no choices"), ("null_content", "no choices\\[0\\].message.content")],
)
async def test_malformed_replies(stub, behaviour, reason):
    stub.push(behaviour, "ok")
    backend, sleep = make_backend(stub)
    try:
        with pytest.raises(BackendError, match=f"^malformed reply: {reason}"):
            await backend.complete(request())
    finally:
        await backend.aclose()
    assert len(stub.chat_requests()) == 1


# ------------------------------------------------------------------ limiter


async def test_limiter_aimd():
    lim = AdaptiveLimiter(8, grow_after=3)
    async with lim as first:
        async with lim as second:
            lim.on_rate_limited(first)
            lim.on_rate_limited(second)  # same generation: counted once
    assert lim.limit == 4 and lim.decreases == 1
    async with lim as third:
        lim.on_rate_limited(third)  # granted after the halving: halves again
    assert lim.limit == 2
    for _ in range(3):
        lim.on_rate_limited()
    assert lim.limit == 1  # never below one
    for _ in range(6):
        lim.on_success()
    assert lim.limit == 3
    for _ in range(100):
        lim.on_success()
    assert lim.limit == 8  # never above the initial limit
    assert lim.in_flight == 0


async def test_limiter_bounds_concurrency_and_survives_cancellation():
    lim = AdaptiveLimiter(2)
    peak = 0

    async def work():
        nonlocal peak
        async with lim:
            peak = max(peak, lim.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(work() for _ in range(10)))
    assert peak == 2 and lim.in_flight == 0
    async with lim:
        async with lim:
            waiter = asyncio.ensure_future(lim.acquire())
            await asyncio.sleep(0)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
    assert lim.in_flight == 0 and not lim._waiters


async def test_backend_concurrency_respects_limiter(stub):
    stub.push(*["slow:0.05"] * 12)
    backend, _ = make_backend(stub, initial_concurrency=3)
    try:
        results = await asyncio.gather(*(backend.complete(request(f"q{i}")) for i in range(12)))
    finally:
        await backend.aclose()
    assert len(results) == 12
    assert stub.max_in_flight <= 3


def test_parse_retry_after():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "7200"}) == 60.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


# ------------------------------------------------------------- config, preflight


def test_base_url_precedence(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    b = OpenAIBackend(ModelSpec("openai", "m", "http://localhost:8000/v1"), base_url="http://127.0.0.2:1/v1")
    assert b.base_url == "http://localhost:8000/v1"
    b = OpenAIBackend(ModelSpec("openai", "m"), base_url="http://127.0.0.2:1/v1/")
    assert b.base_url == "http://127.0.0.2:1/v1"
    b = OpenAIBackend(ModelSpec("openai", "m"))
    assert b.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    b = OpenAIBackend(ModelSpec("openai", "m"))
    assert b.describe() == {"kind": "openai", "model": "m", "base_url": "https://api.openai.com/v1"}


def test_remote_url_without_key_is_bad_input():
    with pytest.raises(InputError, match=r"^no API key: set OPENAI_API_KEY"):
        OpenAIBackend(ModelSpec("openai", "gpt-4o-mini"))
    with pytest.raises(InputError, match="no API key"):
        OpenAIBackend(ModelSpec("openai", "m", "https://example.com/v1"))
    OpenAIBackend(ModelSpec("openai", "m", "http://localhost:11434/v1"))  # local: placeholder key


def test_is_local_url():
    local = [
        "http://localhost:8000/v1",
        "http://127.0.0.1:1/v1",
        "http://[::1]:8000/v1",
        "http://192.168.1.20:8000/v1",
        "http://10.0.0.5/v1",
        "http://vllm:8000/v1",
        "http://box.local:8000/v1",
    ]
    for url in local:
        assert is_local_url(url), url
    for url in ["https://api.openai.com/v1", "https://example.com/v1", "http://8.8.8.8/v1"]:
        assert not is_local_url(url), url


async def test_preflight_unreachable_port():
    port = free_port()
    backend = OpenAIBackend(ModelSpec("openai", "m", f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(InputError, match=rf"^cannot reach http://127.0.0.1:{port}/v1: ") as info:
        await backend.preflight()
    assert "\n" not in str(info.value)


async def test_preflight_sends_no_request_to_a_hanging_server(stub):
    stub.push("hang:20")
    backend, _ = make_backend(stub)
    t0 = time.monotonic()
    await backend.preflight()
    assert time.monotonic() - t0 < 1.0
    assert stub.chat_requests() == [] and stub.pending() == ["hang:20"]


# ------------------------------------------------------------------- cache


async def test_cache_hit_skips_the_server(stub, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend, _ = make_backend(stub, cache=cache)
    try:
        first = await backend.complete(request())
        second = await backend.complete(request())
        other_attempt = await backend.complete(request(attempt=1))
        other_params = await backend.complete(request(params={"temperature": 0.5}))
    finally:
        await backend.aclose()
        cache.close()
    assert not first.cached and second.cached
    assert second.text == first.text and second.usage == first.usage
    assert not other_attempt.cached and not other_params.cached
    assert len(stub.chat_requests()) == 3


async def test_errors_are_not_cached(stub, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    stub.push("401", "malformed")
    backend, _ = make_backend(stub, cache=cache)
    try:
        for _ in range(2):
            with pytest.raises(BackendError):
                await backend.complete(request())
        assert len(cache) == 0
        done = await backend.complete(request())
    finally:
        await backend.aclose()
        cache.close()
    assert not done.cached and len(stub.chat_requests()) == 3


async def test_api_key_never_written_or_described(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    cache = ResponseCache(tmp_path / "cache" / "responses.sqlite")
    stub.push("401")
    backend, _ = make_backend(stub, cache=cache)
    try:
        with pytest.raises(BackendError) as info:
            await backend.complete(request())
        await backend.complete(request())
        hit = await backend.complete(request())
    finally:
        await backend.aclose()
        cache.close()
    assert hit.cached
    assert stub.chat_requests()[-1]["headers"]["authorization"] == f"Bearer {SECRET}"  # the key was used...
    assert SECRET not in str(info.value)
    assert SECRET not in repr(backend.describe()) and SECRET not in repr(backend)
    files = [p for p in Path(os.environ["N2F_HOME"]).rglob("*") if p.is_file()]
    assert files  # the cache wrote something
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path  # ...but is in no file


def test_the_environment_proxy_is_looked_up_once_and_no_proxy_is_honoured(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3129")
    monkeypatch.setenv("NO_PROXY", "gpu-box,.internal")
    assert proxy_for("https://api.openai.com/v1") == "http://proxy.example:3128"
    assert proxy_for("http://10.0.0.5:8000/v1") == "http://proxy.example:3129"
    assert proxy_for("http://gpu-box:8000/v1") is None
    assert proxy_for("http://llm.internal/v1") is None
    backend = OpenAIBackend(ModelSpec("openai", "m", "https://api.openai.com/v1"), api_key="k")
    assert backend.proxy == "http://proxy.example:3128"
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://api.openai.com/v1") is None
