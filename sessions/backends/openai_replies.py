"""Reading what an OpenAI-compatible server sends back: the answer, its usage, the error message.

Replies are read as the JSON objects the server sent (the SDK's ``cast_to=object``), not
as the SDK's response models: building a ``ChatCompletion`` per reply cost 0.05-0.12 ms of
the pipeline's 0.8-0.9 ms of CPU per call (``benchmarks/openai_cpu.py``), spent where every
call in flight waits for it. Servers differ
in what they fill in (a missing ``choices``, an error inside a 200 reply, a refusal or
tool calls instead of content); each case is one clear ``BackendError``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from engines.parsing import shorten
from sessions.backends.base import BackendError
from sessions.redact import redact


def one_line(text: Any, limit: int = 300) -> str:
    """``text`` on one line, redacted (``sessions.redact``) before it is cut: a key cut in half would leak its head."""
    return shorten(redact(str(text)), limit, collapse_spaces=True)


def server_message(body: Any) -> str:
    """The message in a server's error body (OpenAI's ``{"error": {"message"}}``, a
    ``detail`` or ``message`` field), else the body itself on one line; redacted."""
    if isinstance(body, Mapping):
        msg = body.get("message") or body.get("detail") or body.get("error")
        if isinstance(msg, Mapping):
            msg = msg.get("message")
        return one_line(msg) if msg else one_line(json.dumps(body, ensure_ascii=False))
    return one_line(body) if body is not None and str(body).strip() else "no message"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def usage_of(reply: Any) -> dict[str, int]:
    """The prompt and completion tokens a reply (or a stream's last chunk) reports, those that are integers."""
    raw = _mapping(_mapping(reply).get("usage"))
    return {key: raw[key] for key in ("prompt_tokens", "completion_tokens")
            if isinstance(raw.get(key), int) and not isinstance(raw.get(key), bool)}


def first_choice(reply: Any) -> Mapping[str, Any]:
    if not isinstance(reply, Mapping):
        raise BackendError(f"malformed reply: not a JSON object ({one_line(reply, 120)})")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices:
        if isinstance(reply.get("error"), Mapping):  # some servers send errors with status 200
            raise BackendError(f"malformed reply: error in a 200 reply: {server_message(reply['error'])}")
        raise BackendError("malformed reply: no choices")
    return _mapping(choices[0])


def reply_content(reply: Any) -> tuple[str, str]:
    """The answer text and finish reason of a whole (non-streamed) completion."""
    first = first_choice(reply)
    message = _mapping(first.get("message"))
    content = message.get("content")
    if not isinstance(content, str):
        reason = "no choices[0].message.content"
        if message.get("refusal"):
            reason += f" (refusal: {one_line(message['refusal'], 120)})"
        elif message.get("tool_calls"):
            reason += " (the model answered with tool calls)"
        raise BackendError(f"malformed reply: {reason}")
    return content, str(first.get("finish_reason") or "")


def stream_delta(chunk: Any) -> tuple[str, str]:
    """The text and finish reason a streamed chunk adds to the first choice (empty when it adds none)."""
    for choice in _mapping(chunk).get("choices") or []:
        choice = _mapping(choice)
        if choice.get("index", 0) == 0:
            delta = _mapping(choice.get("delta")).get("content")
            return (delta if isinstance(delta, str) else ""), str(choice.get("finish_reason") or "")
    return "", ""


def served_by(reply: Any, model: str = "", fingerprint: str = "") -> tuple[str, str]:
    """The ``model`` and ``system_fingerprint`` a reply (or a streamed chunk) names, else those given."""
    reply = _mapping(reply)
    served, print_ = reply.get("model"), reply.get("system_fingerprint")
    return (served if isinstance(served, str) and served else model,
            print_ if isinstance(print_, str) and print_ else fingerprint)
