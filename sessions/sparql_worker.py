"""Embedded-graph queries in a child process, so that a timeout really stops the work.

pyoxigraph cannot cancel a query: one left running in a thread of this process keeps a
core busy until the process exits. So the bundled graph lives in one small long-lived
child (this file run as a script): it loads the graph once, says ``{"ready": triples}``,
then answers each JSON line ``{"query", "row_cap"}`` on stdin with one JSON line on
stdout, ``{"vars", "rows", "truncated"}`` or ``{"error"}``. The parent sends a query and
waits up to its timeout; past it, it kills the child (the query dies with it), the
caller reports the timeout, and the next query starts a fresh child. Queries go one at
a time; a query's clock starts when it is sent, so waiting behind another query or for a
fresh child to load the graph is never charged to it.

The child reads only the standard library and pyoxigraph, so it starts from the file
path in isolated mode (``python -I``, like the sandbox server) without importing the project. It ignores Ctrl-C (the parent decides when it
stops) and exits within half a second of its parent, so a query cannot outlive a
killed run.

No disk cache of the loaded graph. An on-disk pyoxigraph store opened read-only is
ready in 0.014 s instead of the 0.7-0.8 s the in-memory store takes to parse the gzip
N-Triples, but its queries are about 6x slower (2,376 generated gold queries: mean
2.46 ms against 0.43 ms; a two-triple join 2.4 ms against 0.36 ms), so a full run would
spend 5.8 s on queries instead of 1.8 s including the load. No faster way into an
in-memory store exists: parsing is 0.67 s of the 0.74 s (gzip 0.07 s), and copying the
quads over from an on-disk store takes as long (0.66 s). The graph is therefore parsed
once per child, i.e. once per process plus once after each timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

START_TIMEOUT = 120.0  # seconds for a child to load the graph (0.8 s on an idle 2-core machine)
READ_CHUNK = 1 << 16


class WorkerError(RuntimeError):
    """The query process could not be started or stopped answering: infrastructure, not the query."""


def answer(store: Any, query: str, row_cap: int) -> dict[str, Any]:
    """One query's rows (at most ``row_cap``, N-Triples terms) or the error the query is to blame for."""
    try:
        results = store.query(query)
        if type(results).__name__ == "QueryBoolean":
            return {"vars": [], "rows": [[str(bool(results)).lower()]], "truncated": False}
        variables = [v.value for v in getattr(results, "variables", [])]
        if not variables:
            return {"error": "only SELECT and ASK queries are evaluated"}
        rows: list[list[str | None]] = []
        for solution in results:
            if len(rows) >= row_cap:
                return {"vars": variables, "rows": rows, "truncated": True}
            rows.append([None if solution[v] is None else str(solution[v]) for v in variables])
        return {"vars": variables, "rows": rows, "truncated": False}
    except SyntaxError as exc:
        return {"error": f"syntax error: {exc}"}
    except Exception as exc:  # pyoxigraph's evaluation errors: the query's fault, the child lives on
        return {"error": f"query failed: {exc}"}


def _exit_with_parent(poll: float = 0.5) -> None:
    """Exit as soon as the parent is gone, even in the middle of a query.

    A watchdog thread rather than ``PR_SET_PDEATHSIG``: the kernel sends that signal when
    the parent *thread* that started the child ends, and the parent starts children from
    short-lived executor threads. pyoxigraph releases the GIL while it evaluates, so the
    watchdog runs during a long query.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watchdog").start()


def serve(graph: Path, requests: BinaryIO, replies: BinaryIO) -> None:
    """The child's loop: load ``graph`` (gzip N-Triples), then one reply line per request line."""
    import gzip

    try:
        import pyoxigraph

        store = pyoxigraph.Store()
        store.load(gzip.decompress(graph.read_bytes()), pyoxigraph.RdfFormat.N_TRIPLES)
        hello: dict[str, Any] = {"ready": len(store)}
    except Exception as exc:  # reported to the parent, which raises WorkerError
        hello = {"fatal": f"cannot load {graph.name}: {type(exc).__name__}: {exc}"}
    replies.write(json.dumps(hello).encode() + b"\n")
    replies.flush()
    if "fatal" in hello:
        return
    for line in requests:
        request = json.loads(line)
        reply = answer(store, str(request["query"]), int(request["row_cap"]))
        replies.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        replies.flush()


class QueryWorker:
    """The parent's handle on the child: one query at a time, a fresh child after a timeout.

    Thread-safe and blocking, so any event loop can use it through ``asyncio.to_thread``.
    """

    def __init__(self, graph: Path, start_timeout: float = START_TIMEOUT) -> None:
        self.graph = graph
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen | None = None
        self._buffer = b""
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The running child's pid (None before the first query and after a kill)."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> int:
        """Start the child if none is running and wait until it has loaded the graph; its pid."""
        with self._lock:
            return self._running().pid

    def query(self, query: str, row_cap: int, timeout: float) -> dict[str, Any]:
        """The child's answer within ``timeout`` seconds; TimeoutError (child killed) past it.

        A child found dead is replaced and the query sent once more, so one killed from
        outside between queries costs nothing; a query that kills its child twice is
        answered with that as its error.
        """
        with self._lock:
            for _ in range(2):
                line = self._ask(self._running(), json.dumps({"query": query, "row_cap": row_cap}), timeout)
                if line:
                    return json.loads(line)
                status = self._kill()
            return {"error": f"query failed: the query process exited (status {status})"}

    def _ask(self, proc: subprocess.Popen, request: str, timeout: float) -> bytes:
        """Send one request line; the reply line, or b"" when the child is dead."""
        try:
            proc.stdin.write(request.encode() + b"\n")
            proc.stdin.flush()
            return self._line(proc, timeout)
        except TimeoutError:
            self._kill()
            raise
        except OSError:
            return b""

    def close(self) -> None:
        """Stop the child (it also exits by itself when its stdin closes)."""
        with self._lock:
            self._kill()

    def _running(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._kill()
        self._proc = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(__file__), str(self.graph)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
        try:
            hello = json.loads(self._line(self._proc, self.start_timeout) or b'{"fatal": "exited while loading"}')
        except TimeoutError:
            self._kill()
            raise WorkerError(f"the query process did not load the graph within {self.start_timeout:g} s") from None
        if "fatal" in hello:
            self._kill()
            raise WorkerError(f"the query process failed: {hello['fatal']}")
        return self._proc

    def _line(self, proc: subprocess.Popen, timeout: float) -> bytes:
        """The next line from the child, b"" at end of file, TimeoutError after ``timeout`` seconds."""
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                return b""
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _kill(self) -> int | None:
        """Kill and reap the child, if any; its exit status."""
        proc, self._proc, self._buffer = self._proc, None, b""
        if proc is None:
            return None
        proc.kill()
        status = proc.wait()
        with contextlib.suppress(OSError):  # unflushed bytes to a dead child
            proc.stdin.close()
        proc.stdout.close()
        return status


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    serve(Path(argv[1]), sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main(sys.argv)
