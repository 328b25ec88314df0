"""Benchmark engines: pure, deterministic benchmark logic (no I/O beyond reading data files).

Each engine is one ``engines.contract.Engine`` object, found through the entry-point group
``n2f_tui.engines`` of the installed packages: the five built-ins are registered there by
this package's own ``pyproject.toml``, exactly as a lab's own benchmark package registers
its engine, so the sessions layer and the UI look every engine up through ``get_engine``
and never import an engine module by name. Reading the entry points is reading package
metadata, the same kind of bundled-data read an engine does for its official files.

A plugin that cannot be imported or does not keep the contract's declarations
(``engines.contract.declaration_problems``) is left out with one line in ``problems()``
naming it and its package; the others keep working. Engine packages are small (heavy
modules load in ``Engine.load_parts``), so importing all of them to list them stays cheap.
"""

from __future__ import annotations

from importlib import metadata

from engines.contract import Engine, declaration_problems
from engines.core import SettingsError

GROUP = "n2f_tui.engines"

_found: dict[str, Engine] | None = None
_problems: list[tuple[str, str]] = []  # (engine name, the line saying why it is left out)


def _distribution(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return dist.metadata["Name"] if dist is not None else "?"


def _unique(entries: metadata.EntryPoints) -> list[metadata.EntryPoint]:
    """One entry per (name, target), in sys.path order: a checkout's egg-info beside the installed
    metadata names the same entry points twice."""
    return list({(e.name, e.value): e for e in reversed(list(entries))}.values())[::-1]


def _load(entry: metadata.EntryPoint) -> Engine | None:
    """The entry point's engine, or None with one line in ``_problems`` saying why not."""
    where = f"engine plugin {entry.name!r} ({_distribution(entry)}: {entry.value})"
    try:
        engine = entry.load()
    except Exception as exc:  # a plugin's import may fail any way; it must not take the others down
        _problems.append((entry.name, f"{where} skipped: cannot load it: {type(exc).__name__}: {exc}"))
        return None
    broken = declaration_problems(engine, entry.name)
    if broken:
        _problems.append((entry.name, f"{where} skipped: breaks the engine contract: {'; '.join(broken)}"))
        return None
    return engine


def _engines() -> dict[str, Engine]:
    global _found
    if _found is None:
        found: dict[str, Engine] = {}
        for entry in _unique(metadata.entry_points(group=GROUP)):
            if entry.name in found:
                _problems.append((entry.name, f"engine plugin {entry.name!r} ({_distribution(entry)}: {entry.value}) "
                                              "skipped: the name is taken by an engine loaded before it"))
                continue
            engine = _load(entry)
            if engine is not None:
                found[entry.name] = engine
        _found = dict(sorted(found.items(), key=lambda pair: (pair[1].rank, pair[0])))
    return _found


def engine_names() -> tuple[str, ...]:
    return tuple(_engines())


def problems() -> list[str]:
    """One line per plugin left out (each names the plugin and its package), by name."""
    _engines()
    return [line for _, line in sorted(_problems)]


def get_engine(name: str) -> Engine:
    """The engine registered under ``name``; SettingsError names the known ones otherwise."""
    found = _engines()
    if name not in found:
        skipped = [line for skipped_name, line in _problems if skipped_name == name]
        if skipped:
            raise SettingsError(skipped[0])
        if not found:
            raise SettingsError(f"no engines are registered: install the package (pip install -e .) so that its "
                                f"{GROUP} entry points exist")
        raise SettingsError(f"unknown engine {name!r}; known engines: {', '.join(found)}")
    return found[name]
