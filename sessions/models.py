"""Parsing ``-m`` model specs and building the matching backend."""

from __future__ import annotations

from engines.contract import Engine
from sessions.backends.base import Backend, ModelSpec
from sessions.config import Config
from sessions.errors import InputError

SPEC_HELP = "expected sim[:k=v,...], oracle, replay:FILE, local[:PATH.gguf] or openai:MODEL[@BASE_URL]"


def parse_model_spec(text: str) -> ModelSpec:
    text = (text or "").strip()
    kind, _, rest = text.partition(":")
    if kind == "sim":
        return ModelSpec("sim", options=_options(text, rest))
    if kind == "oracle":
        if rest:
            raise InputError(f"model {text!r}: oracle takes no options")
        return ModelSpec("oracle")
    if kind == "replay":
        if not rest:
            raise InputError(f"model {text!r}: replay needs a file, replay:FILE")
        return ModelSpec("replay", name=rest)
    if kind == "local":
        # The whole rest is a path (it may hold ':' or ','): empty means the extra's bundled model.
        if rest and not rest.lower().endswith(".gguf"):
            raise InputError(f"model {text!r}: local takes a GGUF file, local:PATH.gguf")
        return ModelSpec("local", name=rest)
    if kind == "openai":
        name, _, base_url = rest.partition("@")
        if not name:
            raise InputError(f"model {text!r}: openai needs a model name, openai:MODEL[@BASE_URL]")
        if base_url and not base_url.startswith(("http://", "https://")):
            raise InputError(f"model {text!r}: base URL must start with http:// or https://")
        return ModelSpec("openai", name=name, base_url=base_url)
    raise InputError(f"unknown model {text!r}: {SPEC_HELP}")


def _options(text: str, rest: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = pair.partition("=")
        if not eq:
            raise InputError(f"model {text!r}: option {pair!r} must be KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def make_backend(spec: ModelSpec, engine: Engine, seed: int, config: Config, cache=None) -> Backend:
    """The backend for a spec; real-model backends share the response cache."""
    from sessions.backends.offline import OracleBackend, ReplayBackend, SimBackend

    if spec.kind == "sim":
        return SimBackend(spec, engine, seed)
    if spec.kind == "oracle":
        return OracleBackend(spec, engine)
    if spec.kind == "replay":
        return ReplayBackend(spec)
    if spec.kind == "local":
        from sessions.backends.local_backend import LocalBackend

        return LocalBackend(spec, seed=seed, cache=cache)
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
