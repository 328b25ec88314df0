"""User configuration: a TOML file read, never written, by the program.

Keys are read here so that a key in the config file stays out of every file the
program writes; run metadata records base URLs and model names only. The ``[openai]``
table takes the ``openai`` package's own names (``api_key``, ``base_url``,
``organization``, ``project``; for Azure ``azure_endpoint``, ``azure_deployment``,
``api_version``), so a user who knows the SDK knows the file. A key the program does
not know is an error naming the known ones: a misspelt ``deadline`` silently ignored
would run with the default and nobody would notice.

```toml
model = "openai:gpt-4o-mini"
concurrency = 8
annotator = "ada"                         # the name your annotation events carry (else the login name)

[openai]
base_url = "https://api.openai.com/v1"   # else OPENAI_BASE_URL
api_key = "sk-..."                        # else OPENAI_API_KEY
deadline = 120                            # seconds for one call, retries included

[prices."gpt-4o-mini"]                    # US$ per million tokens, by model name or -m text
input = 0.15
output = 0.60

[cache]
expire_days = 30                          # cached replies older than this are asked again (default: never)

[sparql]
authorization = "Bearer ..."              # an Authorization header for a SPARQL endpoint (else N2F_SPARQL_AUTHORIZATION)
```
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # installed on 3.10 only, where 3.11's tomllib is missing

from sessions.errors import InputError
from sessions.paths import config_path

TRANSPORTS = ("aiohttp", "httpx")


@dataclass(frozen=True)
class Price:
    """US$ per million tokens, prompt (``input``) and completion (``output``)."""

    input: float = 0.0
    output: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Config:
    openai_base_url: str = ""
    openai_api_key: str = ""
    openai_organization: str = ""
    openai_project: str = ""
    openai_deadline: float = 120.0  # seconds for one call, retries included
    openai_attempt_timeout: float = 60.0  # seconds for one HTTP attempt
    openai_max_retries: int = 5  # the SDK's retries after the first attempt
    openai_transport: str = "aiohttp"  # the SDK's HTTP transport: aiohttp or httpx
    azure_endpoint: str = ""
    azure_deployment: str = ""
    azure_api_version: str = ""
    default_model: str = "sim"
    concurrency: int = 8
    annotator: str = ""  # the name annotation events record; empty: the login name
    prices: Mapping[str, Price] = field(default_factory=dict)
    cache_expire_days: float = 0.0  # 0: cached replies never expire
    sparql_authorization: str = ""

    @property
    def cache_expire(self) -> float | None:
        """Seconds after which a cached reply is a miss, or None."""
        return self.cache_expire_days * 86400 if self.cache_expire_days > 0 else None

    def price_for(self, model_text: str, model_name: str = "") -> Price | None:
        """The price of a model, looked up by its ``-m`` text, then its bare name."""
        return self.prices.get(model_text) or (self.prices.get(model_name) if model_name else None)


# file key -> (Config field, type)
TOP_KEYS: dict[str, tuple[str, type]] = {"model": ("default_model", str), "concurrency": ("concurrency", int),
                                         "annotator": ("annotator", str)}
OPENAI_KEYS: dict[str, tuple[str, type]] = {
    "base_url": ("openai_base_url", str),
    "api_key": ("openai_api_key", str),
    "organization": ("openai_organization", str),
    "project": ("openai_project", str),
    "deadline": ("openai_deadline", float),
    "attempt_timeout": ("openai_attempt_timeout", float),
    "max_retries": ("openai_max_retries", int),
    "transport": ("openai_transport", str),
    "azure_endpoint": ("azure_endpoint", str),
    "azure_deployment": ("azure_deployment", str),
    "api_version": ("azure_api_version", str),
}
CACHE_KEYS: dict[str, tuple[str, type]] = {"expire_days": ("cache_expire_days", float)}
SPARQL_KEYS: dict[str, tuple[str, type]] = {"authorization": ("sparql_authorization", str)}
TABLES = ("openai", "prices", "cache", "sparql")
PRICE_KEYS = ("input", "output")


def _unknown(path: Path, where: str, key: str, known: Any) -> InputError:
    name = f"{where}.{key}" if where else key
    return InputError(f"config file {path}: unknown key {name!r} (known: {', '.join(known)})")


def _value(path: Path, name: str, kind: type, raw: Any) -> Any:
    if kind is str:
        if not isinstance(raw, str):
            raise InputError(f"config file {path}: {name} must be a string")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or (kind is int and not isinstance(raw, int)):
        raise InputError(f"config file {path}: {name} must be {'an integer' if kind is int else 'a number'}")
    if not math.isfinite(raw):
        raise InputError(f"config file {path}: {name} must be a finite number, not {raw}")
    return kind(raw)


def parse_config(data: Mapping[str, Any], path: Path) -> Config:
    """A Config from the parsed TOML; any unknown key or wrong type is one InputError."""
    values: dict[str, Any] = {}
    for key, raw in data.items():
        if key in TOP_KEYS:
            name, kind = TOP_KEYS[key]
            values[name] = _value(path, key, kind, raw)
        elif key not in TABLES:
            raise _unknown(path, "", key, [*TOP_KEYS, *(f"[{t}]" for t in TABLES)])
        elif not isinstance(raw, dict):
            raise InputError(f"config file {path}: {key} must be a table, [{key}]")
    for table, known in (("openai", OPENAI_KEYS), ("cache", CACHE_KEYS), ("sparql", SPARQL_KEYS)):
        for key, raw in (data.get(table) or {}).items():
            if key not in known:
                raise _unknown(path, table, key, known)
            name, kind = known[key]
            values[name] = _value(path, f"{table}.{key}", kind, raw)
    prices: dict[str, Price] = {}
    for model, table in (data.get("prices") or {}).items():
        if not isinstance(table, dict):
            raise InputError(f'config file {path}: prices.{model} must be a table, [prices."{model}"] input = ..., output = ...')
        for key in table:
            if key not in PRICE_KEYS:
                raise _unknown(path, f"prices.{model}", key, PRICE_KEYS)
        prices[model] = Price(**{k: _value(path, f"prices.{model}.{k}", float, v) for k, v in table.items()})
        if any(getattr(prices[model], k) < 0 for k in table):
            raise InputError(f'config file {path}: prices."{model}": a price cannot be negative')
    config = Config(**values, prices=prices)
    if config.openai_transport not in TRANSPORTS:
        raise InputError(f"config file {path}: openai.transport must be one of {', '.join(TRANSPORTS)}")
    if config.concurrency < 1:
        raise InputError(f"config file {path}: concurrency must be at least 1")
    if config.openai_deadline <= 0 or config.openai_attempt_timeout <= 0 or config.openai_max_retries < 0:
        raise InputError(f"config file {path}: deadline and attempt_timeout must be positive, max_retries at least 0")
    return config


def load_config(path: Path | None = None) -> Config:
    path = path or config_path()
    if not path.exists():
        return Config()
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"config file {path} is not valid TOML: {exc}") from None
    return parse_config(data, path)


def reading_config(path: Path | None = None) -> tuple[Config, str]:
    """The config for a command that only reads runs (``runs``, ``report``, ``show``): a file that
    does not load is set aside (the defaults, no prices) with the reason, so that what a run
    would need never stops anyone reading. Commands that start runs use ``load_config``."""
    try:
        return load_config(path), ""
    except InputError as exc:
        return Config(), str(exc)
