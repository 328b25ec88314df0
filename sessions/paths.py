"""Where n2f keeps its data: ``N2F_HOME`` or the platform's user data, config and cache dirs."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs

from sessions.errors import InputError

APP = "n2f-tui"


def data_home() -> Path:
    env = os.environ.get("N2F_HOME")
    return Path(env).expanduser() if env else Path(platformdirs.user_data_dir(APP))


def config_path() -> Path:
    """``$N2F_HOME/config.toml`` when N2F_HOME is set (tests stay hermetic), else the user config dir."""
    env = os.environ.get("N2F_HOME")
    base = Path(env).expanduser() if env else Path(platformdirs.user_config_dir(APP))
    return base / "config.toml"


def runs_dir() -> Path:
    return data_home() / "runs"


def cache_path() -> Path:
    """The response cache: ``$N2F_HOME/cache/`` when N2F_HOME is set (tests stay hermetic), else the user cache dir."""
    env = os.environ.get("N2F_HOME")
    base = Path(env).expanduser() / "cache" if env else Path(platformdirs.user_cache_dir(APP))
    return base / "responses.sqlite3"


def legacy_cache_path() -> Path:
    """Where versions before the cache directory kept the cache (the data directory)."""
    return data_home() / "cache.sqlite3"


def ensure_writable(path: Path) -> Path:
    """Create ``path`` if needed and prove it is writable, or fail with one clear line."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError as exc:
        raise InputError(f"data directory {path} is not writable ({exc.strerror or exc}); set N2F_HOME") from None
    return path
