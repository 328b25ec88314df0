"""Tools: the side effects an engine asks for with ``Step(kind="tool")``.

Engines stay pure: when an item needs something executed (rgp runs the model's
program on each sample), the engine returns a tool step naming a tool here and the
runner calls it instead of the model backend. A tool takes the step's payload and
returns one string, stored as that step's output like a model reply, so scoring and
``rescore`` work from stored outputs and never execute anything again.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Iterable, Mapping

from sessions.backends.base import BackendError
from sessions.errors import InputError, RuntimeFailure
from sessions.tools.sandbox import Limits, SandboxError, SandboxUnavailable, shared_sandbox
from sessions.tools.sparql import SPARQL, sparql, preflight as sparql_preflight
from sessions.tools.sparql_endpoint import close_sessions

Tool = Callable[[Mapping[str, Any]], Awaitable[str]]

PYTHON_SANDBOX = "python_sandbox"
STORED_STDOUT = 4096  # characters of a run's stdout kept in the output (a correct grid has 19)
STORED_STDERR = 2000  # the tail of stderr: a traceback ends with what went wrong


async def python_sandbox(payload: Mapping[str, Any]) -> str:
    """Run ``payload["program"]`` once per string in ``payload["inputs"]`` (stdin), in the sandbox.

    Returns JSON: ``{"isolation": level, "timeout_s": t, "runs": [{"input", "stdout",
    "stdout_truncated", "stderr", "exit_code", "signal", "timed_out", "killed_by",
    "wall_s"}...]}``. A failure of the sandbox itself is a BackendError (the item ends in
    status ``error`` and is retried by ``resume``); whatever the program does is data.
    """
    try:
        program = str(payload["program"])
        inputs = [str(text) for text in payload["inputs"]]
        timeout = float(payload.get("timeout", Limits.timeout_s))
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"{PYTHON_SANDBOX}: malformed payload ({exc})", transient=False) from None
    sandbox = shared_sandbox()
    try:
        results = await sandbox.run_all(program, inputs, Limits(timeout_s=timeout))
        isolation = sandbox.isolation
    except SandboxError as exc:
        raise BackendError(f"{PYTHON_SANDBOX}: {exc}") from None
    runs = []
    for text, result in zip(inputs, results):
        runs.append({
            "input": text,
            "stdout": result.stdout[:STORED_STDOUT],
            "stdout_truncated": len(result.stdout) > STORED_STDOUT,
            "stderr": result.stderr[-STORED_STDERR:],
            "exit_code": result.exit_code,
            "signal": result.signal,
            "timed_out": result.timed_out,
            "killed_by": result.killed_by,
            "wall_s": result.wall_s,
        })
    return json.dumps({"isolation": isolation, "timeout_s": timeout, "runs": runs}, ensure_ascii=False)


TOOLS: dict[str, Tool] = {PYTHON_SANDBOX: python_sandbox, SPARQL: sparql}


async def run_tool(name: str, payload: Mapping[str, Any], tools: Mapping[str, Tool] | None = None) -> str:
    """The output of tool ``name``; an unknown name is a BackendError that retrying cannot mend."""
    registry = TOOLS if tools is None else tools
    tool = registry.get(name)
    if tool is None:
        known = ", ".join(sorted(registry)) or "none"
        raise BackendError(f"unknown tool {name!r} (known: {known})", transient=False)
    return await tool(payload)


def tools_meta(names: Iterable[str]) -> dict[str, Any]:
    """What a run records about the tools its engine uses (e.g. the sandbox's isolation level).

    Starting the sandbox here also means a broken sandbox stops the run before it begins.
    """
    meta: dict[str, Any] = {}
    if PYTHON_SANDBOX in names:
        meta["sandbox"] = sandbox_isolation()
    return meta


def sandbox_isolation() -> str:
    """The sandbox's isolation level; a machine without isolation is refused as bad input (exit 2)."""
    try:
        return shared_sandbox().isolation
    except SandboxUnavailable as exc:
        raise InputError(str(exc)) from None
    except SandboxError as exc:
        raise RuntimeFailure(f"the Python sandbox is not available: {exc}") from None


async def preflight_tools(names: Iterable[str], settings: Any) -> None:
    """Check, before a run is created, that the tools its engine uses can reach what they need.

    A SPARQL endpoint named in the settings (``endpoint``) must answer ``ASK {}``;
    otherwise every item would end in status error, one timeout at a time. The Python
    sandbox must find isolation on this machine (``resume`` checks here too).
    """
    if PYTHON_SANDBOX in names:
        sandbox_isolation()
    endpoint = str(getattr(settings, "endpoint", "") or "")
    if SPARQL in names and endpoint:
        await sparql_preflight(endpoint)


async def close_tools() -> None:
    """Release what the tools hold for the running loop (the SPARQL endpoint's connections): a run's end."""
    await close_sessions()
