"""How a run treats its model server: the response cache (used, refreshed or off) and per-minute ceilings.

``-m openai:...`` and ``-m local`` replies are cached (``sessions.backends.cache``); the simulator,
the oracle and replays answer faster than a lookup and are not. ``rpm`` / ``tpm`` are
ceilings on calls started and tokens used per minute (``sessions.backends.limits``); a run records
them, and ``resume`` keeps them unless told otherwise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from sessions.config import Config
from sessions.errors import InputError

if TYPE_CHECKING:
    from sessions.backends.cache import ResponseCache

CACHE_MODES = ("use", "refresh", "off")
CACHED_KINDS = ("openai", "local")


@dataclass(frozen=True)
class ServiceOptions:
    cache: str = "use"  # use | refresh (ask again, store the new reply) | off (neither read nor write)
    rpm: int | None = None
    tpm: int | None = None

    def check(self) -> "ServiceOptions":
        if self.cache not in CACHE_MODES:
            raise InputError(f"cache mode {self.cache!r}: one of {', '.join(CACHE_MODES)}")
        for name, value in (("--rpm", self.rpm), ("--tpm", self.tpm)):
            if value is not None and value < 1:
                raise InputError(f"{name} must be at least 1")
        return self

    def meta(self) -> dict[str, Any]:
        """What the run records (the cache mode is a choice of this pass, not of the run)."""
        ceilings = {k: v for k, v in (("rpm", self.rpm), ("tpm", self.tpm)) if v is not None}
        return {"ceilings": ceilings} if ceilings else {}

    def with_recorded(self, meta: Mapping[str, Any]) -> "ServiceOptions":
        """These options, the run's recorded ceilings filling those not given (``resume``)."""
        recorded = meta.get("ceilings") or {}
        return replace(self, rpm=self.rpm if self.rpm is not None else recorded.get("rpm"),
                       tpm=self.tpm if self.tpm is not None else recorded.get("tpm"))


_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def age_seconds(text: str) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` (or a bare number of days) in seconds; InputError otherwise."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in _AGE_UNITS else "d"
    number = value[:-1] if value[-1:] in _AGE_UNITS else value
    try:
        amount = float(number)
    except ValueError:
        raise InputError(f"--older-than {text!r}: expected a number and a unit, like 7d, 12h, 30m") from None
    if amount < 0:
        raise InputError(f"--older-than {text!r} must not be negative")
    return amount * _AGE_UNITS[unit]


def open_cache(config: Config) -> ResponseCache:
    """The cache file for ``n2f cache info|clear`` (made if absent)."""
    cache = response_cache("openai", "use", config)
    assert cache is not None  # openai replies are cached kind and "use" is not "off"
    return cache


def response_cache(spec_kind: str, mode: str = "use", config: Config | None = None) -> ResponseCache | None:
    """The response cache for a real model (None for the others and with mode ``off``)."""
    if spec_kind not in CACHED_KINDS or mode == "off":
        return None
    from sessions.backends.cache import ResponseCache
    from sessions.paths import cache_path, ensure_writable, legacy_cache_path

    path = cache_path()
    ensure_writable(path.parent)
    _move_legacy(legacy_cache_path(), path)
    return ResponseCache(path, refresh=mode == "refresh", expire=config.cache_expire if config else None)


def _move_legacy(old: Any, new: Any) -> None:
    """Bring a cache from the data directory (earlier versions) to the cache directory, once."""
    if new.exists() or not old.exists():
        return
    for suffix in ("", "-wal", "-shm"):
        try:
            os.replace(f"{old}{suffix}", f"{new}{suffix}")
        except OSError:  # absent, or on another file system: the old file stays where it was
            continue
