"""Secrets out of every message the program stores or shows: the one function that redacts them.

A server may echo the key it was sent (a gateway answering 401 with ``Incorrect API key
provided: sk-…``), and such a message would otherwise reach ``results.jsonl``, ``n2f show``,
the exports and the terminal. ``redact`` removes the keys this process was configured with
(``remember``, called where a key is read) and anything shaped like a key: ``sk-…`` tokens,
``Bearer …`` credentials and the value of an ``api_key=``/``Authorization:`` pair.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
MIN_SECRET = 4  # a configured "key" shorter than this (a placeholder) would redact ordinary words
_SHAPED = re.compile(
    r"\bsk-[A-Za-z0-9_\-.*]{4,}"
    r"|\bBearer\s+[A-Za-z0-9_\-.~+/=*]+"
    r"|(?i:(?<=api[_-]key)|(?<=apikey)|(?<=authorization)|(?<=x-api-key))[\"']?\s*[:=]\s*[\"']?(?:Bearer\s+)?[^\s\"',;}]+",
)
_known: set[str] = set()


def remember(secret: str) -> None:
    """A key this process uses: from now on ``redact`` removes it wherever it appears."""
    if len(secret.strip()) >= MIN_SECRET:
        _known.add(secret.strip())


def redact(text: str) -> str:
    """``text`` with every remembered key and every key-shaped token replaced by ``[redacted]``."""
    for secret in sorted(_known, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _SHAPED.sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    found = match.group(0)
    if found.startswith(("sk-", "Bearer")):
        return "sk-" + REDACTED if found.startswith("sk-") else "Bearer " + REDACTED
    separator = re.match(r"[\"']?\s*[:=]\s*[\"']?", found)
    return (separator.group(0) if separator else "") + REDACTED
