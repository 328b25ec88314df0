"""Loading the objects a group of entry points names, each checked, a broken one left out with one line.

The engine registry (``engines/__init__.py``, group ``n2f_tui.engines``) and the model-backend
registry (``sessions/backends/models.py``, group ``n2f_tui.backends``) load their plugins the same way:
one entry per (name, target) (a checkout's egg-info beside the installed metadata names the
same entry points twice), the first of a name wins, and an entry point whose import fails or
whose object fails the group's check is one line naming it and its package, never an error
that takes the other plugins down. Reading entry points reads installed package metadata only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable


def _distribution(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return dist.metadata["Name"] if dist is not None else "?"


@dataclass
class Loaded:
    found: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (name, the line saying why it is left out)

    def lines(self) -> list[str]:
        return [line for _, line in sorted(self.problems)]

    def problem(self, name: str) -> str:
        """The line of the plugin ``name`` left out, or ""."""
        return next((line for skipped, line in self.problems if skipped == name), "")


def load_group(group: str, what: str, check: Callable[[Any, str], list[str]]) -> Loaded:
    """Every plugin of ``group`` whose object ``check`` finds nothing wrong with (``what`` names the kind)."""
    loaded = Loaded()
    entries = list({(e.name, e.value): e for e in reversed(list(metadata.entry_points(group=group)))}.values())[::-1]
    for entry in entries:
        where = f"{what} plugin {entry.name!r} ({_distribution(entry)}: {entry.value})"
        if entry.name in loaded.found:
            loaded.problems.append((entry.name, f"{where} skipped: the name is taken by one loaded before it"))
            continue
        try:
            obj = entry.load()
        except Exception as exc:  # a plugin's import may fail any way; it must not take the others down
            loaded.problems.append((entry.name, f"{where} skipped: cannot load it: {type(exc).__name__}: {exc}"))
            continue
        broken = check(obj, entry.name)
        if broken:
            loaded.problems.append((entry.name, f"{where} skipped: breaks the {what} contract: {'; '.join(broken)}"))
            continue
        loaded.found[entry.name] = obj
    return loaded
