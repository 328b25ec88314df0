"""Finding runs in the store: every run's metadata, a run's folder from a reference, valid run names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sessions.errors import InputError
from sessions.paths import runs_dir

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def validate_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise InputError(f"run name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")


def list_run_meta() -> list[dict[str, Any]]:
    """Metadata of every run in the store, oldest first; runs whose metadata cannot be read are
    ``damaged_runs``."""
    metas = [meta for meta, _ in _scan() if meta is not None]
    return sorted(metas, key=lambda m: (m.get("created", ""), m.get("id", "")))


def damaged_runs() -> list[dict[str, Any]]:
    """The run folders whose meta.json cannot be read: ``{"id": folder name, "damage": why, "_folder"}``."""
    return [{"id": Path(problem[0]).name, "damage": problem[1], "_folder": problem[0]}
            for meta, problem in _scan() if meta is None]


def _scan() -> list[tuple[dict[str, Any] | None, tuple[str, str]]]:
    """(meta with ``_folder``, ("", "")) for each readable run folder, (None, (folder, why)) for the others."""
    base = runs_dir()
    if not base.is_dir():
        return []
    found: list[tuple[dict[str, Any] | None, tuple[str, str]]] = []
    for folder in base.iterdir():
        if not folder.is_dir():
            continue
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if not isinstance(meta, dict) or not isinstance(meta.get("id"), str) or "engine" not in meta:
                raise ValueError("not a run's metadata (needs id and engine)")
        except FileNotFoundError:
            found.append((None, (str(folder), "meta.json is missing")))
            continue
        except (OSError, ValueError) as exc:
            found.append((None, (str(folder), f"meta.json cannot be read: {getattr(exc, 'strerror', None) or exc}")))
            continue
        meta["_folder"] = str(folder)
        found.append((meta, ("", "")))
    return found


def resolve_run(ref: str) -> Path:
    """A run folder from its id, its name, a unique id prefix, or ``last``."""
    metas = list_run_meta()
    if not metas:
        raise InputError(f"no run {ref!r}: the store has no runs yet (n2f run ENGINE)")
    if ref in ("last", "latest"):
        return Path(metas[-1]["_folder"])
    for key in ("id", "name"):
        hits = [m for m in metas if m.get(key) == ref]
        if hits:
            return Path(hits[-1]["_folder"])
    hits = [m for m in metas if m["id"].startswith(ref)]
    if len(hits) == 1:
        return Path(hits[0]["_folder"])
    if len(hits) > 1:
        raise InputError(f"run {ref!r} is ambiguous: {', '.join(m['id'] for m in hits[:5])}")
    raise InputError(f"no run {ref!r}; see n2f runs")
