"""Benchmark engines: pure, deterministic benchmark logic (no I/O beyond reading data files).

Each engine is one ``engines.contract.Engine`` object, found through the entry-point group
``n2f_tui.engines`` of the installed packages: the five built-ins are registered there by
this package's own ``pyproject.toml``, exactly as a lab's own benchmark package registers
its engine, so the sessions layer and the UI look every engine up through ``get_engine``
and never import an engine module by name (``engines.plugins`` reads the entry points).

A plugin that cannot be imported or does not keep the contract's declarations
(``engines.contract.declaration_problems``) is left out with one line in ``problems()``
naming it and its package; the others keep working. Engine packages are small (heavy
modules load in ``Engine.load_parts``), so importing all of them to list them stays cheap.
"""

from __future__ import annotations

from typing import Any

from engines.contract import Engine, declaration_problems
from engines.core import SettingsError
from engines.plugins import Loaded, load_group

GROUP = "n2f_tui.engines"

_loaded: Loaded | None = None


def _registry() -> Loaded:
    """The engines by name, the built-ins first in the README's order (``Engine.rank``), then plugins by name."""
    global _loaded
    if _loaded is None:
        loaded = load_group(GROUP, "engine", declaration_problems)
        loaded.found = dict(sorted(loaded.found.items(), key=lambda pair: (pair[1].rank, pair[0])))
        _loaded = loaded
    return _loaded


def _engines() -> dict[str, Engine[Any]]:
    return _registry().found


def engine_names() -> tuple[str, ...]:
    return tuple(_engines())


def problems() -> list[str]:
    """One line per plugin left out (each names the plugin and its package), by name."""
    return _registry().lines()


def get_engine(name: str) -> Engine[Any]:
    """The engine registered under ``name``; SettingsError names the known ones otherwise."""
    registry = _registry()
    found: dict[str, Engine[Any]] = registry.found
    if name not in found:
        if registry.problem(name):
            raise SettingsError(registry.problem(name))
        if not found:
            raise SettingsError(f"no engines are registered: install the package (pip install -e .) so that its "
                                f"{GROUP} entry points exist")
        raise SettingsError(f"unknown engine {name!r}; known engines: {', '.join(found)}")
    return found[name]
