"""Running untrusted Python (the programs models write for rgp), never in this process.

The harness starts one fork server (``sessions/tools/sandbox_server.py``) per process, lazily,
and asks it to run a program on one input; the server forks an isolated child per run
(see its docstring for the isolation it sets up and why a fork server). This module is
the client: it starts the server, sends requests, matches replies to callers, and
restarts a server that died. A server that finds no isolation on this machine says why
and runs nothing: ``SandboxUnavailable``, one line saying how to enable it.

A reader thread owns the server's stdout and resolves ``concurrent.futures.Future``s, so
callers from any asyncio loop (the CLI's, each test's, the TUI's) or from plain threads
(benchmarks) share one server. Everything is graded by the caller, in this process; the
server never sees an expected output.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import json
import math
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any, Sequence

SERVER = Path(__file__).with_name("sandbox_server.py")
DEFAULT_SLOTS = 16  # runs at once: the 16 inputs of one program together; CPU-bound ones share the cores
START_TIMEOUT_S = 10.0


class SandboxError(Exception):
    """The sandbox itself failed (could not start, died, could not set up a child)."""


class SandboxUnavailable(SandboxError):
    """This machine offers no isolation for programs: they are refused, never run with less."""


@dataclass(frozen=True)
class Limits:
    """Per-run limits. ``cpu_s`` defaults to the wall timeout rounded up, plus one second."""

    timeout_s: float = 5.0
    memory_bytes: int = 512 * 2**20
    file_bytes: int = 2**20
    open_files: int = 64
    processes: int = 1  # RLIMIT_NPROC, counted for the run alone: no fork, no thread (a fork dies with the run anyway)
    output_bytes: int = 64 * 2**10  # per stream; the run is killed when it writes more
    scratch_mb: int = 16
    cpu_s: int = 0

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # numbers: no deep copy (asdict: 7.6 against 1.2 us a run)
        data["cpu_s"] = self.cpu_s or math.ceil(self.timeout_s) + 1
        return data


@dataclass(frozen=True)
class RunResult:
    """What one run of a program on one input did."""

    stdout: str
    stderr: str
    exit_code: int | None  # None when killed by a signal
    signal: str = ""  # e.g. SIGKILL, SIGSEGV
    timed_out: bool = False
    killed_by: str = ""  # timeout | output_limit | cpu_limit | file_size_limit | shutdown | ""
    wall_s: float = 0.0

    @classmethod
    def from_reply(cls, reply: dict[str, Any]) -> "RunResult":
        return cls(stdout=reply["stdout"], stderr=reply["stderr"], exit_code=reply["exit_code"],
                   signal=reply["signal"], timed_out=reply["timed_out"], killed_by=reply["killed_by"],
                   wall_s=reply["wall_s"])


@dataclass
class _Server:
    process: subprocess.Popen[bytes]
    hello: dict[str, Any]
    pending: dict[int, concurrent.futures.Future[RunResult]] = field(default_factory=dict)
    alive: bool = True

    @property
    def stdin(self) -> IO[bytes]:
        stdin = self.process.stdin
        assert stdin is not None, "the server is started with its stdin piped"
        return stdin


class Sandbox:
    """A client of one fork server; ``shared_sandbox()`` is the one the harness uses."""

    def __init__(self, slots: int = DEFAULT_SLOTS):
        self.slots = slots
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: _Server | None = None

    # -- life cycle

    def _ensure(self) -> _Server:
        with self._lock:
            if self._server is None or not self._server.alive:
                self._server = self._start()
            return self._server

    def _start(self) -> _Server:
        host_netns = os.stat("/proc/self/ns/net").st_ino
        try:
            process = subprocess.Popen(
                [sys.executable, "-I", str(SERVER), str(host_netns), str(self.slots)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, cwd="/", start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start the sandbox server: {exc}") from None
        first = _readline_with_timeout(process, START_TIMEOUT_S)
        try:
            hello = json.loads(first)["hello"]
        except (ValueError, KeyError, TypeError):
            process.kill()
            detail = process.stderr.read().decode("utf-8", "replace").strip().splitlines() if process.stderr else []
            raise SandboxError(f"the sandbox server did not start: {detail[-1] if detail else first!r}") from None
        if hello.get("unavailable"):
            process.kill()
            process.wait()
            raise SandboxUnavailable(f"rgp refuses to run programs: {hello['unavailable']}")
        server = _Server(process=process, hello=hello)
        threading.Thread(target=self._read_replies, args=(server,), name="sandbox-replies", daemon=True).start()
        return server

    def _read_replies(self, server: _Server) -> None:
        stdout = server.process.stdout
        assert stdout is not None
        for line in stdout:
            reply = json.loads(line)
            future = server.pending.pop(reply["id"], None)
            if future is None or not future.set_running_or_notify_cancel():
                continue  # nobody waits for it any more (the caller was cancelled)
            if reply.get("sandbox_error"):
                future.set_exception(SandboxError(reply["sandbox_error"]))
            else:
                future.set_result(RunResult.from_reply(reply))
        server.alive = False
        server.process.wait()
        tail = server.process.stderr.read().decode("utf-8", "replace").strip() if server.process.stderr else ""
        error = SandboxError("the sandbox server exited" + (f": {tail.splitlines()[-1]}" if tail else ""))
        for future in list(server.pending.values()):
            if future.set_running_or_notify_cancel():
                future.set_exception(error)
        server.pending.clear()

    def close(self) -> None:
        """Stop the server: closing its stdin makes it kill every child and exit."""
        with self._lock:
            server, self._server = self._server, None
        if server is not None and server.alive:
            try:
                server.stdin.close()
                server.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                server.process.kill()

    # -- what callers use

    @property
    def isolation(self) -> str:
        """The isolation in force, as the server set it up (SandboxUnavailable where it could not)."""
        return str(self._ensure().hello["level"])

    @property
    def details(self) -> dict[str, Any]:
        return dict(self._ensure().hello)

    def submit(self, program: str, stdin: str, limits: Limits = Limits()) -> concurrent.futures.Future[RunResult]:
        """Queue one run; the future resolves to a RunResult or fails with SandboxError."""
        server = self._ensure()
        future: concurrent.futures.Future[RunResult] = concurrent.futures.Future()
        request_id = next(self._ids)
        line = json.dumps({"op": "run", "id": request_id, "program": program, "stdin": stdin,
                           "limits": limits.to_json()}) + "\n"
        with self._lock:
            server.pending[request_id] = future
            try:
                server.stdin.write(line.encode())
                server.stdin.flush()
            except (OSError, ValueError) as exc:
                server.pending.pop(request_id, None)
                server.alive = False
                raise SandboxError(f"the sandbox server is gone: {exc}") from None
        return future

    def run_sync(self, program: str, stdin: str, limits: Limits = Limits()) -> RunResult:
        return self.submit(program, stdin, limits).result()

    async def run_all(self, program: str, inputs: Sequence[str], limits: Limits = Limits()) -> list[RunResult]:
        """One program on each input, concurrently (the server bounds how many run at once)."""
        futures = [self.submit(program, text, limits) for text in inputs]
        return list(await asyncio.gather(*(asyncio.wrap_future(f) for f in futures)))


def _readline_with_timeout(process: subprocess.Popen[bytes], seconds: float) -> str:
    result: list[bytes] = []
    stdout = process.stdout
    assert stdout is not None, "the server is started with its stdout piped"
    reader = threading.Thread(target=lambda: result.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not result:
        process.kill()
        raise SandboxError(f"the sandbox server did not answer within {seconds:.0f} s")
    return result[0].decode("utf-8", "replace")


_shared: Sandbox | None = None
_shared_lock = threading.Lock()


def shared_sandbox() -> Sandbox:
    """The process-wide sandbox, stopped when the process exits."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Sandbox()
            atexit.register(_shared.close)
        return _shared
