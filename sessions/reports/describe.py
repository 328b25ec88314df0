"""What makes a run differ from the engine's defaults, and two runs from each other, in a line a person reads.

A run's meta holds its settings and the prompt templates it used (a fork from the prompt
editor holds the edited one). Comparing both with the engine's defaults names the
settings that changed and each edited template with a short fingerprint of its text, so
home, the run header, the report and compare can say "template question edited
(#3fa9c2d1)" instead of "defaults" for a run whose prompt is not the default one.

The comparison needs the engine; it is made once, when the run is created, and kept in the
meta as ``description`` (settings and templates never change afterwards), so a list of runs
imports no engine. A run made before that is described from its engine when read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from engines import get_engine
from engines.core import EngineError, settings_fields, settings_from_json

HASH_CHARS = 8


def template_hash(text: str) -> str:
    """The first characters of the template's SHA-256 (the run meta's ``template_hashes`` spell it in full)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_CHARS]


@dataclass(frozen=True)
class RunDescription:
    """Settings that differ from the defaults (name -> value) and edited templates (name -> short hash)."""

    settings: dict[str, Any] = field(default_factory=dict)
    templates: dict[str, str] = field(default_factory=dict)
    forked_from: str = ""

    @property
    def text(self) -> str:
        """``shots=2 · template question edited (#3fa9c2d1)``, or ``defaults``."""
        parts = [" ".join(f"{k}={v}" for k, v in self.settings.items())] if self.settings else []
        parts += [f"template {name} edited (#{digest})" for name, digest in self.templates.items()]
        return " · ".join(parts) or "defaults"

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "settings": self.settings, "templates": self.templates,
                "forked_from": self.forked_from}


def engine_defaults(engine_name: str) -> tuple[dict[str, Any], Any] | None:
    """The engine's default settings (as stored in a run's meta) and settings object; None for an unknown engine."""
    try:
        cls = get_engine(engine_name).settings_type
    except EngineError:
        return None
    return {f.name: f.default for f in settings_fields(cls)}, cls


def describe_run(meta: Mapping[str, Any]) -> RunDescription:
    """How the run in ``meta`` differs from its engine's defaults.

    Templates are compared with the engine's defaults for the run's own settings (a
    setting such as ``shots`` changes the default prompt; that is not an edit). The meta's
    stored ``description`` is that comparison made at creation.
    """
    stored = meta.get("description")
    if isinstance(stored, Mapping) and isinstance(stored.get("settings"), Mapping):
        return RunDescription(settings=dict(stored["settings"]), templates=dict(stored.get("templates") or {}),
                              forked_from=str(stored.get("forked_from", "")))
    settings = dict(meta.get("settings") or {})
    known = engine_defaults(str(meta.get("engine", "")))
    if known is None:
        return RunDescription(settings=settings, forked_from=str(meta.get("forked_from", "")))
    defaults, cls = known
    changed = {k: v for k, v in settings.items() if k in defaults and defaults[k] != v}
    try:
        default_templates = get_engine(str(meta["engine"])).templates(settings_from_json(cls, settings))
    except (EngineError, TypeError, ValueError):  # settings this version cannot read: say what is known
        return RunDescription(settings=changed, forked_from=str(meta.get("forked_from", "")))
    edited = {name: template_hash(text) for name, text in (meta.get("templates") or {}).items()
              if default_templates.get(name) != text}
    return RunDescription(settings=changed, templates=edited, forked_from=str(meta.get("forked_from", "")))


def run_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What differs between two runs' meta, one line each: the model, each setting, each template, the seed."""
    lines = []
    if a.get("model") != b.get("model"):
        lines.append(f"model {a.get('model', '')} → {b.get('model', '')}")
    settings_a, settings_b = dict(a.get("settings") or {}), dict(b.get("settings") or {})
    for key in sorted(settings_a.keys() | settings_b.keys()):
        if settings_a.get(key) != settings_b.get(key):
            lines.append(f"{key} {settings_a.get(key, '-')} → {settings_b.get(key, '-')}")
    templates_a, templates_b = dict(a.get("templates") or {}), dict(b.get("templates") or {})
    for name in sorted(templates_a.keys() | templates_b.keys()):
        text_a, text_b = templates_a.get(name), templates_b.get(name)
        if text_a != text_b:
            lines.append(f"template {name} #{template_hash(text_a) if text_a is not None else '-'} → "
                         f"#{template_hash(text_b) if text_b is not None else '-'}")
    if a.get("seed") != b.get("seed"):
        lines.append(f"seed {a.get('seed')} → {b.get('seed')}")
    return lines
