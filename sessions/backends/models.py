"""Parsing ``-m`` model specs and building the matching backend, for every kind of model registered.

A kind of model is a ``BackendKind`` found through the entry-point group ``n2f_tui.backends``:
its entry point's name is what ``-m NAME[:...]`` starts with. The five built-ins (``sim``,
``oracle``, ``replay``, ``local``, ``openai``) are registered there by this package, as a
package with its own model provider registers its kind; a plugin that fails to load or is
not a ``BackendKind`` is one line in ``problems()`` and the other kinds keep working
(``engines.plugins``). Each kind imports its backend module only when a backend is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from engines.contract import Engine
from engines.plugins import Loaded, load_group
from sessions.backends.base import Backend, ModelSpec
from sessions.config import Config
from sessions.errors import InputError

GROUP = "n2f_tui.backends"


@dataclass(frozen=True)
class BackendKind:
    """One kind of model: how ``-m`` spells it, how its text is read, how its backend is made."""

    usage: str  # e.g. "sim[:k=v,...]", listed when a -m text names no kind
    parse: Callable[[str, str], ModelSpec]  # (the whole -m text, the text after "NAME:") -> spec; InputError if bad
    make: Callable[[ModelSpec, Engine[Any], int, Config, Any], Backend]  # (spec, engine, seed, config, response cache)


def _check(kind: object, name: str) -> list[str]:
    return [] if isinstance(kind, BackendKind) else [f"it is a {type(kind).__name__}, not a sessions.backends.models.BackendKind"]


_loaded: Loaded | None = None


def _registry() -> Loaded:
    global _loaded
    if _loaded is None:
        _loaded = load_group(GROUP, "model backend", _check)
    return _loaded


def problems() -> list[str]:
    """One line per backend plugin left out, naming it and its package."""
    return _registry().lines()


def spec_help() -> str:
    usages = [kind.usage for kind in _registry().found.values()]
    return f"expected {', '.join(usages[:-1])} or {usages[-1]}" if len(usages) > 1 else f"expected {''.join(usages)}"


def parse_model_spec(text: str) -> ModelSpec:
    text = (text or "").strip()
    name, _, rest = text.partition(":")
    registry = _registry()
    if name not in registry.found:
        raise InputError(registry.problem(name) or f"unknown model {text!r}: {spec_help()}")
    kind: BackendKind = registry.found[name]
    return kind.parse(text, rest)


def make_backend(spec: ModelSpec, engine: Engine[Any], seed: int, config: Config, cache: Any = None) -> Backend:
    """The backend for a spec; real-model backends share the response cache."""
    kind: BackendKind = _registry().found[spec.kind]
    return kind.make(spec, engine, seed, config, cache)


# ------------------------------------------------------------------ the built-in kinds


def _options(text: str, rest: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = pair.partition("=")
        if not eq:
            raise InputError(f"model {text!r}: option {pair!r} must be KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def _parse_oracle(text: str, rest: str) -> ModelSpec:
    if rest:
        raise InputError(f"model {text!r}: oracle takes no options")
    return ModelSpec("oracle")


def _parse_replay(text: str, rest: str) -> ModelSpec:
    if not rest:
        raise InputError(f"model {text!r}: replay needs a file, replay:FILE")
    return ModelSpec("replay", name=rest)


def _parse_local(text: str, rest: str) -> ModelSpec:
    # The whole rest is a path (it may hold ':' or ','): empty means the extra's bundled model.
    if rest and not rest.lower().endswith(".gguf"):
        raise InputError(f"model {text!r}: local takes a GGUF file, local:PATH.gguf")
    return ModelSpec("local", name=rest)


def _parse_openai(text: str, rest: str) -> ModelSpec:
    name, _, base_url = rest.partition("@")
    if not name:
        raise InputError(f"model {text!r}: openai needs a model name, openai:MODEL[@BASE_URL]")
    if base_url and not base_url.startswith(("http://", "https://")):
        raise InputError(f"model {text!r}: base URL must start with http:// or https://")
    return ModelSpec("openai", name=name, base_url=base_url)


def _make_offline(spec: ModelSpec, engine: Engine[Any], seed: int, config: Config, cache: Any) -> Backend:
    from sessions.backends.offline import OracleBackend, ReplayBackend, SimBackend

    if spec.kind == "sim":
        return SimBackend(spec, engine, seed)
    if spec.kind == "oracle":
        return OracleBackend(spec, engine)
    return ReplayBackend(spec)


def _make_local(spec: ModelSpec, engine: Engine[Any], seed: int, config: Config, cache: Any) -> Backend:
    from sessions.backends.local_backend import LocalBackend

    return LocalBackend(spec, seed=seed, cache=cache)


def _make_openai(spec: ModelSpec, engine: Engine[Any], seed: int, config: Config, cache: Any) -> Backend:
    from sessions.backends.openai_backend import AzureTarget, OpenAIBackend

    azure = AzureTarget(config.azure_endpoint, config.azure_deployment, config.azure_api_version)
    return OpenAIBackend(
        spec,
        api_key=config.openai_api_key or None,
        base_url=config.openai_base_url or None,
        deadline=config.openai_deadline,
        max_retries=config.openai_max_retries,
        attempt_timeout=min(config.openai_attempt_timeout, config.openai_deadline),
        organization=config.openai_organization or None,
        project=config.openai_project or None,
        transport=config.openai_transport,
        azure=azure if config.azure_endpoint else None,
        cache=cache,
    )


SIM = BackendKind("sim[:k=v,...]", lambda text, rest: ModelSpec("sim", options=_options(text, rest)), _make_offline)
ORACLE = BackendKind("oracle", _parse_oracle, _make_offline)
REPLAY = BackendKind("replay:FILE", _parse_replay, _make_offline)
LOCAL = BackendKind("local[:PATH.gguf]", _parse_local, _make_local)
OPENAI = BackendKind("openai:MODEL[@BASE_URL]", _parse_openai, _make_openai)
