"""User configuration: a TOML file read, never written, by the program.

Keys are read here so that a key in the config file stays out of every file the
program writes; run metadata records base URLs and model names only.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from sessions.errors import InputError
from sessions.paths import config_path


@dataclass(frozen=True)
class Config:
    openai_base_url: str = ""
    openai_api_key: str = ""
    openai_deadline: float = 120.0  # seconds for one call, retries included
    openai_attempt_timeout: float = 60.0  # seconds for one HTTP attempt
    default_model: str = "sim"
    concurrency: int = 8


def load_config(path: Path | None = None) -> Config:
    path = path or config_path()
    if not path.exists():
        return Config()
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"config file {path} is not valid TOML: {exc}") from None
    openai = data.get("openai", {}) if isinstance(data.get("openai"), dict) else {}
    try:
        return Config(
            openai_base_url=str(openai.get("base_url", "")),
            openai_api_key=str(openai.get("api_key", "")),
            openai_deadline=float(openai.get("deadline", 120.0)),
            openai_attempt_timeout=float(openai.get("attempt_timeout", 60.0)),
            default_model=str(data.get("model", "sim")),
            concurrency=int(data.get("concurrency", 8)),
        )
    except (TypeError, ValueError) as exc:
        raise InputError(f"config file {path}: {exc}") from None
