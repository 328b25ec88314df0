"""What a server's headers say about waiting: ``Retry-After`` and OpenAI's ``x-ratelimit-*``.

``retry-after-ms`` (milliseconds, OpenAI's own) wins over ``Retry-After`` (seconds or an
HTTP date, RFC 9110). OpenAI sends ``x-ratelimit-remaining-requests`` /
``x-ratelimit-remaining-tokens`` with every reply and ``x-ratelimit-reset-requests`` /
``-tokens`` as Go durations (``1s``, ``6m0s``, ``20ms``); a remaining count of 0 means
every call started before the reset would be refused.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import Mapping

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str) -> float | None:
    """Seconds in a Go duration (``6m0s``, ``1.5s``, ``20ms``) or a bare number of seconds; None if neither."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait before asking again, or None when it does not say."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = duration(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def quota_pause(headers: Mapping[str, str]) -> tuple[float, str] | None:
    """How long no call should start because a quota is spent (``x-ratelimit-remaining-*: 0``), and which."""
    for kind in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{kind}")
        if remaining is None or remaining.strip() not in ("0", "0.0"):
            continue
        reset = duration(headers.get(f"x-ratelimit-reset-{kind}", "") or "")
        if reset:
            return reset, f"x-ratelimit-remaining-{kind}: 0"
    return None
