"""A local OpenAI-compatible stub server for tests.

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1 with an
ephemeral port, in a background thread, so the real ``openai`` client (and the ``n2f``
command) can be pointed at it. Each chat request takes the next behaviour from a
queue; when the queue is empty it answers normally ("ok").

Behaviours (strings, ``NAME`` or ``NAME:ARG``):

``ok``            200 with a reply produced by ``reply(messages)`` (default: a fixed text)
``429[:S]``       429 with ``Retry-After: S`` (default 0; ``S`` may be fractional)
``429ms:MS``      429 with only ``retry-after-ms: MS``
``500`` / ``503`` / any 3-digit code
                  that status with an OpenAI-style error body
``hang[:S]``      send nothing for S seconds (default 30; cut short when the stub stops),
                  then close the connection
``slow:S``        wait S seconds, then answer as ``ok``
``malformed``     200, ``application/json``, body that is not JSON
``no_choices``    200 with a well-formed completion whose ``choices`` is empty
``null_content``  200 with ``choices[0].message.content = null``
``empty``         200 with an empty-string answer
``close``         close the connection without answering
``echo_key``      401 whose message echoes the key of the request's ``Authorization`` header, as
                  some gateways do (``Incorrect API key provided: <key>``)
(over capacity)   with ``stub.capacity = N``, a request arriving while N are in flight gets
                  429 with ``Retry-After: stub.capacity_retry_after`` (recorded with the
                  behaviour ``over capacity``; the queue is not consumed)
(one slot)        with ``stub.slots = N``, requests are served N at a time, the others queue, each
                  holding its slot ``stub.slot_seconds``, as llama.cpp's server does: the
                  queue counts against the client's deadline, and a request whose client
                  closed the connection (waiting or being served) is dropped there and
                  counted in ``stub.abandoned``; with ``stub.advertise_slots``, ``GET /props``
                  answers ``{"total_slots": N}`` as llama.cpp does
``drip:S``        as ``ok``, and when streamed, S seconds between the pieces
``broken_stream[:N]``
                  streamed: N pieces (default 2), then the connection drops in the middle
                  of the chunked body
``truncated_stream[:N]``
                  streamed: N pieces, then a cleanly ended body without a finish reason

``stub.latency`` (seconds) delays every ``ok`` reply. ``stub.models`` is what ``GET /models``
lists (``None``: a 404, as servers that list nothing); ``stub.api_prefix`` (e.g. ``/v1``)
answers 404 to any path outside it; ``stub.required_key`` answers 401 to any request
without ``Authorization: Bearer KEY``.

A request with ``"stream": true`` gets server-sent events as OpenAI sends them: one
``chat.completion.chunk`` per word of the reply (chunked transfer encoding), a last
chunk with ``finish_reason``, a usage chunk when ``stream_options.include_usage`` is
set, then ``data: [DONE]``. The usage counts words, streamed or not.

Usage::

    from stub_openai import running_stub

    with running_stub(["429:1", "ok"], reply=lambda msgs: "42") as stub:
        url = stub.base_url            # http://127.0.0.1:PORT/v1
        ...
        stub.requests[0]["messages"]   # every chat request is recorded
        stub.push("500")               # queue more behaviours at any time

``stub.requests`` holds one dict per chat request: ``path`` (without the query),
``query``, ``messages``, ``model``, ``params`` (every other body field), ``behaviour``,
``headers`` (lower-cased names) and ``usage``, the usage the stub reported (None when
it sent none). Headers stay in memory only; tests may assert on the Authorization header.
A request whose path is an absolute URL (as a client sends it to a forward proxy) is
served alike, so the stub can stand in for an HTTP proxy.
"""

from __future__ import annotations

import collections
import contextlib
import json
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit

DEFAULT_REPLY = "stub reply"
MODEL_ID = "stub-model"
FINGERPRINT = "fp_stub"

Reply = Callable[[list[dict[str, Any]]], str]


def _words(text: Any) -> int:
    return len(str(text or "").split())


class StubServer:
    """The stub's state: behaviour queue, recorded requests, in-flight counters."""

    def __init__(self, behaviours: Iterable[str] = (), reply: Reply | None = None):
        self.reply: Reply = reply or (lambda messages: DEFAULT_REPLY)
        self._queue: collections.deque[str] = collections.deque(behaviours)
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # A server's capacity: a request arriving while ``capacity`` are in flight gets a 429
        # with ``Retry-After: capacity_retry_after`` instead of its behaviour (None: no limit).
        self.capacity: int | None = None
        self.capacity_retry_after = "1"
        self.refused = 0
        self.latency = 0.0
        self.slots: int | None = None
        self.slot_seconds = 0.0
        self.advertise_slots = False
        self.abandoned = 0
        self._slot_gate: threading.Semaphore | None = None
        self.models: list[str] | None = [MODEL_ID]
        self.api_prefix: str | None = None
        self.required_key: str | None = None
        self.gets: list[str] = []
        self.stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control

    @property
    def port(self) -> int:
        assert self._httpd is not None, "stub not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *behaviours: str) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def clear(self) -> None:
        """Drop every queued behaviour: from now on the stub answers normally."""
        with self._lock:
            self._queue.clear()

    def pending(self) -> list[str]:
        with self._lock:
            return list(self._queue)

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    def start(self) -> "StubServer":
        stub = self

        class Handler(_Handler):
            server_state = stub

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # many concurrent connects must not hit the backlog

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _next_behaviour(self) -> str:
        with self._lock:
            return self._queue.popleft() if self._queue else "ok"

    def _enter(self) -> bool:
        """Count a request in; False (and not counted) when the server is at capacity."""
        with self._lock:
            if self.capacity is not None and self.in_flight >= self.capacity:
                self.refused += 1
                return False
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return True

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def slot_gate(self) -> threading.Semaphore:
        with self._lock:
            if self._slot_gate is None:
                self._slot_gate = threading.Semaphore(self.slots or 1)
            return self._slot_gate


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    disable_nagle_algorithm = True  # headers and body go out in two writes: avoid 40 ms delayed-ACK stalls
    server_state: StubServer

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    # ----------------------------------------------------------------- helpers

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self._send_raw(status, body, "application/json", headers)

    def _send_raw(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}}, headers)

    def _chunk(self, model: str, delta: dict[str, Any] | None, finish: str | None = None,
               usage: dict[str, int] | None = None) -> bytes:
        payload: dict[str, Any] = {
            "id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            payload["usage"] = usage
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, messages: list[dict[str, Any]], model: str, content: str, delay: float = 0.0,
                cut_after: int | None = None, clean_cut: bool = False, include_usage: bool = False) -> None:
        """Server-sent events, one word a piece; ``cut_after`` pieces, then a broken or ended body."""
        state = self.server_state
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._write_chunk(self._chunk(model, {"role": "assistant", "content": ""}))
        for number, piece in enumerate(re.findall(r"\S+\s*", content)):
            if cut_after is not None and number >= cut_after:
                if clean_cut:
                    self._write_chunk(b"")  # the last chunk: a well-formed end, but no finish reason
                self.close_connection = True
                return
            if delay:
                state.stopping.wait(delay)
            self._write_chunk(self._chunk(model, {"content": piece}))
        self._write_chunk(self._chunk(model, {}, finish="stop"))
        if include_usage:
            prompt_tokens = sum(_words(m.get("content")) for m in messages if isinstance(m, dict))
            completion_tokens = _words(content)
            self.record["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
            self._write_chunk(self._chunk(model, None, usage={
                "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens}))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _completion(self, messages: list[dict[str, Any]], model: str, content: Any) -> dict[str, Any]:
        prompt_tokens = sum(_words(m.get("content")) for m in messages if isinstance(m, dict))
        completion_tokens = _words(content)
        self.record["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": FINGERPRINT,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    # ---------------------------------------------------------------- handlers

    def _refused_here(self, path: str) -> bool:
        """404 outside ``api_prefix``, 401 without the required key: True when answered so."""
        state = self.server_state
        if state.api_prefix is not None and not path.startswith(state.api_prefix):
            self._error(404, f"no route {path}")
            return True
        if state.required_key is not None and self.headers.get("Authorization") != f"Bearer {state.required_key}":
            self._error(401, "Incorrect API key provided")
            return True
        return False

    def _client_gone(self) -> bool:
        """True when the client closed its end (llama.cpp drops such a request)."""
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _served_in_slot(self) -> bool:
        """Wait for a slot, then hold it ``slot_seconds``; False (and counted) if the client left first."""
        state = self.server_state
        gate = state.slot_gate()
        while not gate.acquire(timeout=0.02):
            if self._client_gone() or state.stopping.is_set():
                with state._lock:
                    state.abandoned += 1
                return False
        try:
            end = time.monotonic() + state.slot_seconds
            while (left := end - time.monotonic()) > 0:
                if self._client_gone() or state.stopping.wait(min(0.02, left)):
                    with state._lock:
                        state.abandoned += 1
                    return False
            return True
        finally:
            gate.release()

    def do_GET(self) -> None:
        state = self.server_state
        path = urlsplit(self.path).path.rstrip("/")
        with state._lock:
            state.gets.append(path)
        if self._refused_here(path):
            return
        if path.endswith("/models") and state.models is not None:
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "stub"}
                                                              for m in state.models]})
        elif path.endswith("/props") and state.advertise_slots:
            self._send_json(200, {"total_slots": state.slots or 1})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        if self._refused_here(parts.path):
            return
        if not parts.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "request body is not JSON")
            return
        messages = body.get("messages") or []
        model = body.get("model", "")
        admitted = state._enter()
        behaviour = state._next_behaviour() if admitted else "over capacity"
        self.record = {
            "path": parts.path,
            "query": parts.query,
            "url": self.path,
            "model": model,
            "messages": messages,
            "params": {k: v for k, v in body.items() if k not in ("messages", "model")},
            "behaviour": behaviour,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "time": time.monotonic(),
            "usage": None,
        }
        with state._lock:
            state.requests.append(self.record)
        if not admitted:
            self._error(429, "over capacity (stub)", {"Retry-After": state.capacity_retry_after})
            return
        if state.slots is not None and not self._served_in_slot():
            state._leave()
            self.close_connection = True
            return
        try:
            if body.get("stream"):
                self._act_streamed(behaviour, messages, model, bool((body.get("stream_options") or {}).get("include_usage")))
            else:
                self._act(behaviour, messages, model)
        finally:
            state._leave()

    def _act_streamed(self, behaviour: str, messages: list[dict[str, Any]], model: str, include_usage: bool) -> None:
        state = self.server_state
        name, _, arg = behaviour.partition(":")
        if name in ("ok", "drip"):
            self._stream(messages, model, state.reply(messages), delay=float(arg or 0) if name == "drip" else 0.0,
                         include_usage=include_usage)
        elif name in ("broken_stream", "truncated_stream"):
            self._stream(messages, model, state.reply(messages), cut_after=int(arg or 2),
                         clean_cut=name == "truncated_stream", include_usage=include_usage)
        else:
            self._act(behaviour, messages, model)

    def _act(self, behaviour: str, messages: list[dict[str, Any]], model: str) -> None:
        state = self.server_state
        name, _, arg = behaviour.partition(":")
        if name in ("ok", "drip"):
            if state.latency:
                state.stopping.wait(state.latency)
            self._send_json(200, self._completion(messages, model, state.reply(messages)))
        elif name == "slow":
            state.stopping.wait(float(arg or 1))
            self._send_json(200, self._completion(messages, model, state.reply(messages)))
        elif name == "empty":
            self._send_json(200, self._completion(messages, model, ""))
        elif name == "null_content":
            self._send_json(200, self._completion(messages, model, None))
        elif name == "no_choices":
            payload = self._completion(messages, model, "")
            payload["choices"] = []
            self._send_json(200, payload)
        elif name == "malformed":
            self._send_raw(200, b'{"id": "chatcmpl-stub", "choices": [ this is not json', "application/json")
        elif name == "429ms":
            self._error(429, "rate limited (stub)", {"retry-after-ms": str(arg or "0")})
        elif name == "hang":
            state.stopping.wait(float(arg or 30))
            self.close_connection = True
        elif name == "close":
            self.close_connection = True
        elif name == "echo_key":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            self._error(401, f"Incorrect API key provided: {key}. Check the key {key} (Authorization: Bearer {key})")
        elif name.isdigit() and len(name) == 3:
            status = int(name)
            headers = {"Retry-After": arg or "0"} if status == 429 else None
            self._error(status, f"stub error {status}", headers)
        else:
            self._error(500, f"stub: unknown behaviour {behaviour!r}")


@contextlib.contextmanager
def running_stub(behaviours: Iterable[str] = (), reply: Reply | None = None) -> Iterator[StubServer]:
    """Run a stub server for the duration of the ``with`` block."""
    stub = StubServer(behaviours, reply).start()
    try:
        yield stub
    finally:
        stub.stop()
