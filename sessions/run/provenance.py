"""What reproduces a run beyond its settings: the code's revision, the dataset file's hash, the machine.

The revision is read from git when the code that runs is a checkout's own tracked files
(``git ls-files`` knows this module), so a copy installed into a ``.venv`` inside the
checkout is not taken for the checkout; otherwise from the ``direct_url.json`` pip records
for a project installed from a VCS URL (PEP 610); otherwise there is none. The origin is
kept only when it is a URL: a local path would put a machine path into run files. These
are the fields of Inspect AI's ``EvalRevision`` (type, origin, commit, dirty).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

DIST = "n2f-tui"
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Revision:
    commit: str
    dirty: bool | None = None
    origin: str = ""

    def short(self) -> str:
        return self.commit[:10] + (" modified" if self.dirty else "")

    def to_json(self) -> dict[str, Any]:
        return {"type": "git", "commit": self.commit, "dirty": self.dirty, "origin": self.origin}


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _url(origin: str | None) -> str:
    return origin if origin and ("://" in origin or origin.startswith("git@")) else ""


def _checkout_revision() -> Revision | None:
    here = Path(__file__).resolve()
    if _git(here.parent, "ls-files", "--error-unmatch", here.name) is None:
        return None  # not a checkout's tracked file (an installed copy, or no git)
    commit = _git(here.parent, "rev-parse", "HEAD")
    if not commit:
        return None
    changes = _git(here.parent, "status", "--porcelain", "--untracked-files=no")
    return Revision(commit, dirty=None if changes is None else bool(changes),
                    origin=_url(_git(here.parent, "remote", "get-url", "origin")))


def _installed_revision() -> Revision | None:
    try:
        text = metadata.distribution(DIST).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    vcs = data.get("vcs_info") or {}
    return Revision(str(vcs["commit_id"]), origin=_url(data.get("url"))) if vcs.get("commit_id") else None


@lru_cache(maxsize=1)
def source_revision() -> Revision | None:
    """The revision of the code running now, or None when it cannot be known."""
    return _checkout_revision() or _installed_revision()


def version_text() -> str:
    """``n2f 0.1.0 (git 72cecf8a1b)``: the package version and, when known, the revision."""
    try:
        version = metadata.version(DIST)
    except metadata.PackageNotFoundError:
        version = "unknown (not installed)"
    revision = source_revision()
    return f"n2f {version}" + (f" (git {revision.short()})" if revision else "")


def file_sha256(path: str) -> str | None:
    """The SHA-256 of a file, read in chunks; None when it cannot be read (the engine reports that itself)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def dataset_hashes(settings: Mapping[str, Any]) -> dict[str, str]:
    """Each file setting (``dataset``, ``lexicon``...) that names a readable file -> its SHA-256, by setting."""
    found = {}
    for key, value in settings.items():
        if isinstance(value, str) and value and Path(value).is_file():
            digest = file_sha256(value)
            if digest:
                found[key] = digest
    return found


def machine() -> dict[str, str]:
    return {"os": platform.system(), "os_release": platform.release(), "machine": platform.machine(),
            "python": platform.python_version(), "python_implementation": platform.python_implementation()}


def provenance(settings: Mapping[str, Any], cache_enabled: bool) -> dict[str, Any]:
    """The ``provenance`` block of a run's meta. ``cache`` counts the model replies and those served
    from the response cache (the steps' ``cached`` flag); the runner adds each pass's counts when it
    settles (``sessions.run.runner``)."""
    revision = source_revision()
    return {"revision": revision.to_json() if revision else None, "dataset_sha256": dataset_hashes(settings),
            "platform": machine(), "cache": {"enabled": cache_enabled, "replies": 0, "from_cache": 0}}


def with_cache_counts(block: Mapping[str, Any], replies: int, hits: int) -> dict[str, Any]:
    """The provenance block with one more pass's model replies and cache hits added."""
    cache = dict(block.get("cache") or {})
    cache.update(replies=int(cache.get("replies", 0)) + replies, from_cache=int(cache.get("from_cache", 0)) + hits)
    return {**block, "cache": cache}
