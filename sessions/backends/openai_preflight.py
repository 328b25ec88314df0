"""Before a run of ``openai:`` exists: is there an OpenAI API at the URL, does it take the key, the model?

One cheap call through the run's own SDK client, no retries: ``GET /models``, and where a
server does not list its models, a one-token completion. What goes wrong is one
InputError (exit status 2, no run created):

- a 404 on both: "no OpenAI API at URL; did you mean URL/v1?" (the usual slip: the
  server's root instead of its ``/v1``);
- a model the server does not list: named, with the ones it serves;
- 401 / 403: the key was refused (the server's message is left out: some echo the key);
- no connection: what happened (refused, DNS, TLS, timeout) and when. A server that took
  the connection but has not answered within ``PREFLIGHT_TIMEOUT`` is busy, not absent
  (a one-slot server generating for someone else): the run goes on.

A llama.cpp server says how many requests it serves at once (``/props`` ``total_slots``,
or the length of ``/slots``); a run starts its adaptive limit there instead of at ``-j``.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import ssl
import time
from typing import Any, Iterator
from urllib.parse import urlsplit

import openai

from sessions.backends.openai_replies import one_line, server_message
from sessions.errors import InputError

PREFLIGHT_TIMEOUT = 10.0
SLOTS_TIMEOUT = 2.0
SHOWN_MODELS = 20


def is_local_url(url: str) -> bool:
    """True for servers that normally need no key: loopback, private addresses, LAN names.

    Covers ``localhost`` / ``*.localhost`` / ``*.local`` / ``*.internal``, bare host names
    without a dot (docker service names, ``gpu-box``) and loopback, private and
    link-local IP literals.
    """
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) base URL: {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise InputError(f"bad port in base URL {url!r}") from None
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def connection_problem(exc: BaseException) -> str:
    """What went wrong with a connection, in words: refused, DNS, TLS, else timed out, else the innermost error.

    The causes are read before the error's own type: the SDK's aiohttp transport reports a
    failed DNS lookup or a refused connection as a connect *timeout*."""
    chain = list(_causes(exc))
    for e in chain:
        text = f"{type(e).__name__}: {e}"
        if isinstance(e, (ssl.SSLError, ssl.CertificateError)) or "SSL" in type(e).__name__ \
                or "CERTIFICATE_VERIFY" in text.upper():
            return f"TLS failed ({one_line(e, 160)})"
        if isinstance(e, socket.gaierror) or "DNS" in type(e).__name__ or "Name or service not known" in text \
                or "name resolution" in text or "nodename nor servname" in text:
            return f"DNS lookup failed ({one_line(e, 160)})"
        if isinstance(e, ConnectionRefusedError) or getattr(e, "errno", None) == errno.ECONNREFUSED \
                or "Connection refused" in text:
            return "connection refused"
    if any(isinstance(e, (openai.APITimeoutError, TimeoutError)) for e in chain):
        return "timed out"
    inner = chain[-1]
    return f"connection error ({one_line(f'{type(inner).__name__}: {inner}', 200)})"


def _when(started: float) -> str:
    return f"at {time.strftime('%H:%M:%S')}, after {time.monotonic() - started:.1f}s"


def _served(listing: Any) -> list[str]:
    data = listing.get("data") if isinstance(listing, dict) else None
    return [str(m["id"]) for m in data or [] if isinstance(m, dict) and "id" in m]


def _key_refused(base_url: str, status: int) -> InputError:
    return InputError(f"{base_url} refused the API key (HTTP {status}); check OPENAI_API_KEY or [openai] api_key")


def _no_api(base_url: str) -> InputError:
    if base_url.rstrip("/").endswith("/v1"):
        return InputError(f"no OpenAI API at {base_url} (HTTP 404 for /models and /chat/completions)")
    return InputError(f"no OpenAI API at {base_url}; did you mean {base_url.rstrip('/')}/v1?")


async def _one_token(client: openai.AsyncOpenAI, base_url: str, model: str) -> None:
    """A one-token completion, for servers that do not list their models."""
    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    try:
        await client.post("/chat/completions", body=body, cast_to=object)
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise _key_refused(base_url, exc.status_code) from None
        if exc.status_code == 404:
            message = server_message(exc.body if exc.body is not None else exc.response.text)
            if "model" in message.lower():
                raise InputError(f"{base_url} does not serve model {model!r}: {message}") from None
            raise _no_api(base_url) from None
    except ValueError:  # a 200 that is not JSON: a web page, not an API
        raise _no_api(base_url) from None


async def check_server(client: openai.AsyncOpenAI, base_url: str, model: str, azure: bool = False) -> int | None:
    """Raise InputError as the module docstring says; return the slots a llama.cpp server reports, or None."""
    quick = client.with_options(max_retries=0, timeout=PREFLIGHT_TIMEOUT)
    started = time.monotonic()
    try:
        try:
            listing = await quick.get("/models", cast_to=object)
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise _key_refused(base_url, exc.status_code) from None
            listing = None
        except ValueError:
            listing = None
        served = _served(listing)
        if listing is None or not served:
            await _one_token(quick, base_url, model)
        elif not azure and model not in served and f"{model}:latest" not in served:
            shown = ", ".join(served[:SHOWN_MODELS]) + (" ..." if len(served) > SHOWN_MODELS else "")
            raise InputError(f"model {model!r} is not served by {base_url}; it serves: {shown}")
    except openai.APIConnectionError as exc:
        if _busy(exc):  # connected, but no answer yet: a one-slot server busy with another request
            return None
        raise InputError(f"cannot reach {base_url}: {connection_problem(exc)} ({_when(started)})") from None
    return await server_slots(client, base_url) if is_local_url(base_url) or _is_llama_cpp(listing) else None


def _busy(exc: BaseException) -> bool:
    """A read timeout after the connection was made (llama-cpp-python's ``/models`` waits for the
    generation in progress): the server is there, so the run goes on and its limit adapts."""
    chain = list(_causes(exc))
    return connection_problem(exc) == "timed out" and any("ReadTimeout" in type(e).__name__ for e in chain) \
        and not any("ConnectTimeout" in type(e).__name__ for e in chain)


def _is_llama_cpp(listing: Any) -> bool:
    data = listing.get("data") if isinstance(listing, dict) else None
    return any(isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in data or [])


async def server_slots(client: openai.AsyncOpenAI, base_url: str) -> int | None:
    """``total_slots`` from llama.cpp's ``/props``, else the length of its ``/slots``; None when neither answers."""
    root = base_url.rstrip("/").removesuffix("/v1")
    quick = client.with_options(max_retries=0, timeout=SLOTS_TIMEOUT)
    for path in ("props", "slots"):
        try:
            answer = await quick.get(f"{root}/{path}", cast_to=object)
        except (openai.APIError, ValueError):
            continue
        if path == "props" and isinstance(answer, dict) and isinstance(total := answer.get("total_slots"), int):
            return max(1, total)
        if path == "slots" and isinstance(answer, list) and answer:
            return len(answer)
    return None
