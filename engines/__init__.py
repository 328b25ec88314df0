"""Benchmark engines: pure, deterministic benchmark logic (no I/O beyond reading data files).

Engines register here by name; the sessions layer and the UI look them up through
``get_engine`` and never import an engine module directly.
"""

from __future__ import annotations

import importlib

from engines.contract import Engine
from engines.core import SettingsError

ENGINE_NAMES = ("dedc", "logic", "robogrid", "rgp", "compost")

_loaded: dict[str, Engine] = {}


def engine_names() -> tuple[str, ...]:
    return ENGINE_NAMES


def get_engine(name: str) -> Engine:
    """The engine registered under ``name``; SettingsError names the known ones otherwise."""
    if name not in ENGINE_NAMES:
        raise SettingsError(f"unknown engine {name!r}; known engines: {', '.join(ENGINE_NAMES)}")
    if name not in _loaded:
        _loaded[name] = importlib.import_module(f"engines.{name}").ENGINE
    return _loaded[name]
