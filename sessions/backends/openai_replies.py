"""Reading what an OpenAI-compatible server sends back: the answer, its usage, the error message.

Servers differ in what they fill in (a missing ``choices``, an error inside a 200 reply, a
refusal or tool calls instead of content); each case is one clear ``BackendError``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from engines.parsing import shorten
from sessions.backends.base import BackendError


def one_line(text: Any, limit: int = 300) -> str:
    return shorten(str(text), limit, collapse_spaces=True)


def server_message(body: Any) -> str:
    """The message in a server's error body (OpenAI's ``{"error": {"message"}}``, a
    ``detail`` or ``message`` field), else the body itself on one line."""
    if isinstance(body, Mapping):
        msg = body.get("message") or body.get("detail") or body.get("error")
        if isinstance(msg, Mapping):
            msg = msg.get("message")
        return one_line(msg) if msg else one_line(json.dumps(body, ensure_ascii=False))
    return one_line(body) if body is not None and str(body).strip() else "no message"


def usage_of(raw: Any) -> dict[str, int]:
    usage: dict[str, int] = {}
    for key in ("prompt_tokens", "completion_tokens"):
        value = getattr(raw, key, None)
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value
    return usage


def first_choice(reply: Any) -> Any:
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list) or not choices:
        extra = getattr(reply, "model_extra", None) or {}
        if isinstance(extra.get("error"), Mapping):  # some servers send errors with status 200
            raise BackendError(f"malformed reply: error in a 200 reply: {server_message(extra['error'])}")
        raise BackendError("malformed reply: no choices")
    return choices[0]


def reply_content(reply: Any) -> tuple[str, str]:
    """The answer text and finish reason of a whole (non-streamed) completion."""
    first = first_choice(reply)
    message = getattr(first, "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        reason = "no choices[0].message.content"
        if getattr(message, "refusal", None):
            reason += f" (refusal: {one_line(message.refusal, 120)})"
        elif getattr(message, "tool_calls", None):
            reason += " (the model answered with tool calls)"
        raise BackendError(f"malformed reply: {reason}")
    return content, str(getattr(first, "finish_reason", None) or "")
