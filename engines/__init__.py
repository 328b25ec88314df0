"""Benchmark engines: pure, deterministic benchmark logic (no I/O beyond reading data files).

Each engine is one ``engines.contract.Engine`` object (``ENGINE`` in its package),
registered here by name; the sessions layer and the UI look it up through ``get_engine``
and never import an engine module directly. An engine package is imported when first
asked for, so listing the engines stays cheap.
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
