"""OpenAIBackend (the ``openai`` SDK) against the local stub server: replies, retries,
deadlines, streaming, the environment's conventions, cache, secrecy.

Retry waits are the SDK's own and real: they are pinned by the gaps between the
requests the stub received (server-side clocks), as lower bounds only.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from engines.core import Item, Message, Step
from sessions.api import prepare_resume, prepare_run
from sessions.backends.base import BackendError, CallRequest, ModelSpec
from sessions.backends.openai_backend import AzureTarget, OpenAIBackend, is_local_url
from sessions.backends.cache import ResponseCache
from sessions.config import Config
from sessions.errors import InputError
from sessions.store.runs import RunStore
from run_support import run_to_end
from stub_openai import running_stub

SECRET = "sk-test-SECRET-7f3a9c1e5d"
TRANSPORTS = ["aiohttp", "httpx"]
# Waits are bounded only against what they rule out (a stub that holds a request 120 s, a Retry-After of an
# hour), as a timeout that turns that hang into a failure, never as an assert on a duration: 2 s budgets took
# 14.8 s under load, so the timeout is four times that.
HANG = 60.0


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "AZURE_OPENAI_API_KEY",
                 "OPENAI_API_VERSION", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                 "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub():
    with running_stub() as s:
        yield s


def request(text: str = "What is 2+2?", params: dict | None = None, attempt: int = 0, system: str | None = "Be brief.",
            on_text=None) -> CallRequest:
    messages = ((Message("system", system),) if system else ()) + (Message("user", text),)
    step = Step(name="answer", messages=messages, params=params or {})
    item = Item(id="i1", engine="dedc", inputs={"question": text}, gold={})
    return CallRequest(item=item, step=step, step_index=0, outputs=(), attempt=attempt, on_text=on_text)


def make_backend(stub, **kw) -> OpenAIBackend:
    kw.setdefault("deadline", 10.0)
    return OpenAIBackend(ModelSpec("openai", "stub-model", stub.base_url), **kw)


async def complete(backend: OpenAIBackend, req: CallRequest | None = None):
    try:
        return await backend.complete(req or request())
    finally:
        await backend.aclose()


def gaps(stub) -> list[float]:
    times = [r["time"] for r in stub.chat_requests()]
    return [b - a for a, b in zip(times, times[1:])]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------- replies


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_normal_reply_sends_messages_and_params(stub, transport):
    stub.reply = lambda messages: f"echo: {messages[-1]['content']}"
    done = await complete(make_backend(stub, transport=transport), request("What is 2+2?", params={"max_tokens": 50}))
    assert done.text == "echo: What is 2+2?"
    assert done.usage == {"prompt_tokens": 5, "completion_tokens": 4}  # the stub counts words
    assert done.finish_reason == "stop"
    assert done.latency > 0 and not done.cached
    [sent] = stub.chat_requests()
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}]
    assert sent["params"]["temperature"] == 0  # default when the step does not say
    assert sent["params"]["max_tokens"] == 50
    assert "stream" not in sent["params"]  # nobody watches: a plain request
    assert sent["headers"]["authorization"] == "Bearer not-needed"  # loopback needs no key: a placeholder


async def test_explicit_temperature_is_sent_as_given(stub):
    await complete(make_backend(stub), request(params={"temperature": 0.7, "top_p": 0.9}))
    params = stub.chat_requests()[0]["params"]
    assert params["temperature"] == 0.7 and params["top_p"] == 0.9


async def test_empty_content_is_a_valid_answer(stub):
    stub.push("empty")
    done = await complete(make_backend(stub))
    assert done.text == ""
    assert len(stub.chat_requests()) == 1


# -------------------------------------------------------------------- retries


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_429_honours_retry_after(stub, transport):
    stub.push("429:1", "ok")
    done = await complete(make_backend(stub, transport=transport))
    assert done.text == "stub reply"
    assert [r["behaviour"] for r in stub.chat_requests()] == ["429:1", "ok"]
    assert gaps(stub)[0] >= 0.95  # the SDK's own first backoff is at most 0.5 s


async def test_429_retry_after_ms_and_an_hour_is_not_waited(stub):
    stub.push("429ms:1200", "ok")
    done = await complete(make_backend(stub))
    assert done.text == "stub reply" and gaps(stub)[0] >= 1.15  # retry-after-ms honoured

    stub.push("429:3600", "ok")
    with pytest.raises(BackendError) as info:  # nobody waits an hour inside a run: the item is left for resume
        await asyncio.wait_for(complete(make_backend(stub, deadline=30.0)), HANG)
    assert str(info.value) == "gave up after 1 attempt: HTTP 429: stub error 429 (Retry-After: 3600)"
    assert info.value.transient and len(stub.chat_requests()) == 3


async def test_500_then_success_backs_off_exponentially(stub):
    stub.push("500", "502", "ok")  # the SDK's own retries (a 503 is an overload: the run's limit retries it)
    done = await complete(make_backend(stub))
    assert done.text == "stub reply"
    first, second = gaps(stub)
    assert first >= 0.35 and second >= 0.7  # 0.5 s then 1 s, less up to a quarter of jitter


async def test_dropped_connection_is_retried(stub):
    stub.push("close", "ok")
    done = await complete(make_backend(stub))
    assert done.text == "stub reply" and len(stub.chat_requests()) == 2


async def test_gives_up_after_max_retries(stub):
    stub.push(*["500"] * 5)
    with pytest.raises(BackendError, match=r"^gave up after 3 attempts: HTTP 500: stub error 500$") as info:
        await complete(make_backend(stub, max_retries=2))
    assert info.value.transient
    assert len(stub.chat_requests()) == 3


@pytest.mark.parametrize("status", ["400", "401", "403", "404", "422"])
async def test_client_errors_are_not_retried(stub, status):
    stub.push(status, "ok")
    with pytest.raises(BackendError) as info:
        await complete(make_backend(stub))
    assert not info.value.transient
    assert str(info.value) == f"HTTP {status}: stub error {status}"
    assert len(stub.chat_requests()) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_hanging_server_hits_the_deadline(stub, transport):
    stub.push("hang:120", "hang:120")
    with pytest.raises(BackendError, match=r"^deadline 1s exceeded") as info:  # the server would hold it 120 s
        await asyncio.wait_for(complete(make_backend(stub, deadline=1.0, transport=transport)), HANG)
    # the deadline ended the one attempt the server was holding, not a call never sent nor a retry
    assert [r["behaviour"] for r in stub.chat_requests()] == ["hang:120"]
    assert info.value.transient


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_attempt_timeout_retries_within_deadline(stub, transport):
    stub.push("hang:120", "ok")
    done = await asyncio.wait_for(complete(make_backend(stub, deadline=5.0, attempt_timeout=0.5,
                                                        transport=transport)), HANG)
    assert done.text == "stub reply" and len(stub.chat_requests()) == 2


@pytest.mark.parametrize(
    "behaviour, reason",
    [("malformed", "not JSON"), ("no_choices", "no choices"), ("null_content", "no choices\\[0\\].message.content")],
)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_malformed_replies(stub, behaviour, reason, transport):
    stub.push(behaviour, "ok")
    with pytest.raises(BackendError, match=f"^malformed reply: {reason}"):
        await complete(make_backend(stub, transport=transport))
    assert len(stub.chat_requests()) == 1


async def test_concurrent_calls_are_not_capped_by_the_client(stub):
    """-j is the one limit: the SDK's connection pool must not queue calls behind it."""
    stub.push(*["slow:2"] * 64)  # long enough that every call is sent before the first returns, under load too
    backend = make_backend(stub)
    try:
        results = await asyncio.gather(*(backend.complete(request(f"q{i}")) for i in range(64)))
    finally:
        await backend.aclose()
    assert len(results) == 64 and stub.max_in_flight == 64
    assert backend.calls == 64


# ------------------------------------------------------------------ streaming


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_streamed_reply_arrives_piece_by_piece_with_usage(stub, transport):
    stub.reply = lambda messages: "view_1 := f0 (all, attr_1, 2); result := view_1;"
    pieces: list[str] = []
    done = await complete(make_backend(stub, transport=transport), request(on_text=pieces.append))
    assert done.text == "view_1 := f0 (all, attr_1, 2); result := view_1;"
    assert pieces == ["view_1 ", ":= ", "f0 ", "(all, ", "attr_1, ", "2); ", "result ", ":= ", "view_1;"]
    assert done.finish_reason == "stop"
    [sent] = stub.chat_requests()
    assert sent["params"]["stream"] is True and sent["params"]["stream_options"] == {"include_usage": True}
    assert done.usage == sent["usage"] == {"prompt_tokens": 5, "completion_tokens": 9}


@pytest.mark.parametrize("behaviour, detail", [("broken_stream:3", "RemoteProtocolError|ReadError|Payload"),
                                               ("truncated_stream:3", "without a finish reason")])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_broken_stream_is_an_infrastructure_error(stub, behaviour, detail, transport):
    stub.reply = lambda messages: "one two three four five"
    stub.push(behaviour)
    pieces: list[str] = []
    with pytest.raises(BackendError, match=rf"^stream broken after 3 piece\(s\): .*({detail})") as info:
        await complete(make_backend(stub, transport=transport), request(on_text=pieces.append))
    assert info.value.transient and pieces == ["one ", "two ", "three "]


async def test_a_broken_stream_ends_the_item_in_error_and_resume_finishes_it(stub):
    stub.reply = lambda messages: "view_1 := f0 (all, attr_1, 2); result := view_1;"
    stub.push("ok", "broken_stream:2")
    prepared = await prepare_run("dedc", model=f"openai:stub-model@{stub.base_url}", limit=3, concurrency=1,
                                 name="streamed")
    prepared.runner.stream = True
    progress = await run_to_end(prepared)
    assert progress.errors == 1
    records = RunStore.open("streamed").results()
    assert records[1]["status"] == "error" and records[1]["error"].startswith("stream broken after 2 piece(s)")
    assert {records[0]["status"], records[2]["status"]} <= {"correct", "wrong"}
    assert RunStore.open("streamed").meta["status"] == "incomplete"

    resumed = await prepare_resume("streamed")
    resumed.runner.stream = True
    progress = await run_to_end(resumed)
    assert progress.done == 1 and progress.errors == 0
    store = RunStore.open("streamed")
    assert store.meta["status"] == "finished" and store.results()[1]["status"] in ("correct", "wrong")
    assert all(r["params"].get("stream") for r in stub.chat_requests())


async def test_a_cached_reply_is_shown_to_a_watcher_at_once(stub, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = make_backend(stub, cache=cache)
    try:
        first = await backend.complete(request())
        pieces: list[str] = []
        again = await backend.complete(request(on_text=pieces.append))
    finally:
        await backend.aclose()
        cache.close()
    assert again.cached and pieces == [first.text] and again.finish_reason == "stop"


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


async def test_environment_base_url_key_organization_and_project_reach_the_server(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-from-env")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-from-env")
    await complete(OpenAIBackend(ModelSpec("openai", "m")))
    await complete(OpenAIBackend(ModelSpec("openai", "m"), organization="org-config", project="proj-config"))
    env, config = (r["headers"] for r in stub.chat_requests())
    assert env["authorization"] == f"Bearer {SECRET}"
    assert (env["openai-organization"], env["openai-project"]) == ("org-from-env", "proj-from-env")
    assert (config["openai-organization"], config["openai-project"]) == ("org-config", "proj-config")


async def test_azure_deployment_goes_through_the_azure_client(stub, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    endpoint = stub.base_url.removesuffix("/v1")
    backend = OpenAIBackend(ModelSpec("openai", "gpt-4o-mini"), azure=AzureTarget(endpoint, "my-deployment", "2024-10-21"))
    assert backend.describe() == {"kind": "openai", "model": "gpt-4o-mini", "base_url": endpoint,
                                  "azure_deployment": "my-deployment", "api_version": "2024-10-21"}
    done = await complete(backend)
    assert done.text == "stub reply"
    [sent] = stub.chat_requests()
    assert sent["path"] == "/openai/deployments/my-deployment/chat/completions"
    assert sent["query"] == "api-version=2024-10-21"
    assert sent["headers"]["api-key"] == SECRET and "authorization" not in sent["headers"]


async def test_the_environment_proxy_is_used_and_no_proxy_is_honoured(stub, monkeypatch):
    """The stub stands in for a forward proxy: a request for an unresolvable host reaches it."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{stub.port}")
    monkeypatch.setenv("NO_PROXY", "localhost")
    for transport in TRANSPORTS:
        backend = OpenAIBackend(ModelSpec("openai", "m", "http://llm.invalid/v1"), api_key="k", transport=transport)
        done = await complete(backend)
        assert done.text == "stub reply"
    assert [r["url"] for r in stub.chat_requests()] == ["http://llm.invalid/v1/chat/completions"] * 2
    monkeypatch.setenv("NO_PROXY", "llm.invalid")
    with pytest.raises(BackendError, match="llm.invalid"):  # looked up directly: no such host
        await complete(OpenAIBackend(ModelSpec("openai", "m", "http://llm.invalid/v1"), api_key="k", max_retries=0))
    assert len(stub.chat_requests()) == 2


def test_remote_url_without_key_is_bad_input():
    with pytest.raises(InputError, match=r"^no API key: set OPENAI_API_KEY"):
        OpenAIBackend(ModelSpec("openai", "gpt-4o-mini"))
    with pytest.raises(InputError, match="no API key"):
        OpenAIBackend(ModelSpec("openai", "m", "https://example.com/v1"))
    with pytest.raises(InputError, match=r"^no API key: set AZURE_OPENAI_API_KEY"):
        OpenAIBackend(ModelSpec("openai", "m"), azure=AzureTarget("https://me.openai.azure.com", api_version="2024-10-21"))
    with pytest.raises(InputError, match=r"^Azure OpenAI needs an API version"):
        OpenAIBackend(ModelSpec("openai", "m"), api_key="k", azure=AzureTarget("https://me.openai.azure.com"))
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
        try:
            await backend.preflight()
        finally:
            await backend.aclose()  # as prepare_run does (closed_on_failure): the client is not left open
    assert "\n" not in str(info.value)


async def test_preflight_sends_no_request_to_a_hanging_server(stub):
    stub.push("hang:120")
    backend = make_backend(stub)
    try:
        await asyncio.wait_for(backend.preflight(), HANG)
    finally:
        await backend.aclose()
    assert stub.chat_requests() == [] and stub.pending() == ["hang:120"]


def test_config_reaches_the_backend(stub):
    from engines import get_engine
    from sessions.backends.models import make_backend as backend_for

    config = Config(openai_base_url=stub.base_url, openai_organization="org-1", openai_project="proj-1",
                    openai_deadline=7.0, openai_attempt_timeout=30.0, openai_max_retries=1, openai_transport="httpx")
    backend = backend_for(ModelSpec("openai", "m"), get_engine("dedc"), 0, config)
    assert (backend.base_url, backend.organization, backend.project) == (stub.base_url, "org-1", "proj-1")
    assert (backend.deadline, backend.attempt_timeout, backend.max_retries, backend.transport) == (7.0, 7.0, 1, "httpx")
    assert backend.azure is None


# ------------------------------------------------------------------- cache


async def test_cache_hit_skips_the_server(stub, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = make_backend(stub, cache=cache)
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
    backend = make_backend(stub, cache=cache)
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
    cache = ResponseCache(Path(os.environ["N2F_HOME"]) / "cache" / "responses.sqlite")
    stub.push("401")
    backend = make_backend(stub, cache=cache)
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


async def test_a_server_over_capacity_is_met_by_a_lower_limit_not_by_errors(stub):
    """-j far above what the server takes: rejected calls give their slot back, the limit drops to what
    the server holds and they queue again; no item ends in error, even with one SDK retry."""
    stub.reply = lambda messages: "view_1 := f0 (all, attr_1, 2); result := view_1;"
    stub.latency = 0.1
    stub.capacity, stub.capacity_retry_after = 2, "0.1"
    config = Config(openai_max_retries=1)
    prepared = await prepare_run("dedc", model=f"openai:stub-model@{stub.base_url}", limit=16, concurrency=16,
                                 name="crowded", config=config)
    progress = await run_to_end(prepared)
    assert stub.refused > 0 and progress.errors == 0 and progress.done == 16
    meta = RunStore.open("crowded").meta
    assert meta["status"] == "finished"
    assert meta["adaptive_limit"]["ceiling"] == 16 and meta["adaptive_limit"]["overloads"] >= 1
    assert min(c["limit"] for c in meta["adaptive_limit"]["changes"]) <= 2
