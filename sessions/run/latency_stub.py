"""The bench's model server: a loopback OpenAI-compatible stub answering after a fixed latency.

It runs in a child process of its own (``stub_process``): a real server never shares the
client's CPU, and on a 2-core machine a stub in the same process halved the measured
efficiency. Chat completions and streamed ones are answered with one fixed reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from typing import Any, Iterator

from sessions.errors import RuntimeFailure

STUB_MODEL = "bench"

STREAM_PIECES = ("bench", " reply")


def sse_reply() -> bytes:
    """The same reply as server-sent events: a role chunk, one chunk per piece, the finish, usage, [DONE]."""
    def event(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": STUB_MODEL,
                 "choices": choices, **extra}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    events = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    events += [event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}]) for piece in STREAM_PIECES]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    events.append(event([], usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}))
    return b"".join(events) + b"data: [DONE]\n\n"


CHAT_REPLY = json.dumps({
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 0,
    "model": STUB_MODEL,
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "bench reply"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
}).encode()
STREAM_REPLY = sse_reply()


class LatencyStub:
    """A minimal OpenAI-compatible server on loopback: every request gets one fixed reply after ``latency``
    (as server-sent events when the request asks for a stream).

    Plain asyncio HTTP/1.1 with keep-alive, so the client's connection pool behaves as
    against a real server. It lives here rather than in tests because it is part of
    what ``n2f bench`` runs.
    """

    def __init__(self, latency: float):
        self.latency = latency
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "stub not started"
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aenter__(self) -> "LatencyStub":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                body = await reader.readexactly(content_length(head))
                streamed = b'"stream":true' in body.replace(b" ", b"")
                reply, kind = (STREAM_REPLY, b"text/event-stream") if streamed else (CHAT_REPLY, b"application/json")
                await hold(self.latency)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s"
                             % (kind, len(reply), reply))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # the client closed its connection
        finally:
            writer.close()


HOLD_STEP_S = 0.02  # how far before the end of a hold the stub wakes to sleep the rest


async def hold(seconds: float) -> None:
    """Sleep ``seconds`` as exactly as the event loop can: a plain ``asyncio.sleep(2)`` wakes 9-12 ms
    late here (the kernel lets a long poll timeout slip by a fraction of itself), which would charge
    the stub's lateness to the client. The hold sleeps to just before its end, then the short rest."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        await asyncio.sleep(left if left <= 2 * HOLD_STEP_S else left - HOLD_STEP_S)


def content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip() or 0)
    return 0


def serve_stub(latency: float) -> None:
    """Entry point of the stub's own process: print the base URL, serve until stdin closes."""

    async def main() -> None:
        async with LatencyStub(latency) as stub:
            print(stub.base_url, flush=True)
            await asyncio.to_thread(sys.stdin.read)

    asyncio.run(main())


@contextlib.contextmanager
def stub_process(latency: float) -> Iterator[str]:
    """Run the stub in a child process and yield its base URL.

    A real server never shares our CPU: in this process the stub's own work would be
    charged to the client (on a 2-core machine that halved the measured efficiency).
    """
    child = subprocess.Popen(
        [sys.executable, "-c", f"from sessions.run.latency_stub import serve_stub; serve_stub({float(latency)!r})"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        url = child.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeFailure("bench: the latency stub did not start")
        yield url
    finally:
        child.stdin.close()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
