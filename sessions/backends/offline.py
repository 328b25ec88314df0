"""Backends that need no model: the simulator, the oracle and replayed outputs."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
from pathlib import Path
from typing import Any

from engines.contract import Engine
from engines.core import SimOptions
from sessions.backends.base import Backend, BackendError, CallRequest, Completion, ModelSpec
from sessions.errors import InputError


def stable_seed(*parts: object) -> int:
    """A seed from any parts, identical across processes (unlike ``hash``)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class SimBackend(Backend):
    """The offline simulated model: gold plus errors injected from the engine's taxonomy.

    Each reply depends only on (seed, item, step, attempt), never on scheduling order,
    so a resumed run reproduces an uninterrupted one exactly.
    """

    def __init__(self, spec: ModelSpec, engine: Engine[Any], seed: int):
        self.spec = spec
        self.engine = engine
        opts = dict(spec.options)
        try:
            self.latency = float(opts.pop("latency", "0"))
            rate = float(opts.pop("error_rate", "0.3"))
            sim_seed = int(opts.pop("seed", str(seed)))
        except ValueError as exc:
            raise InputError(f"model {spec.text}: {exc}") from None
        error = opts.pop("error", "")
        if opts:
            raise InputError(f"model {spec.text}: unknown option(s) {', '.join(opts)}; known: error_rate, error, latency, seed")
        if not 0.0 <= rate <= 1.0:
            raise InputError(f"model {spec.text}: error_rate must be between 0 and 1")
        codes = {t.code for t in engine.taxonomy()}
        if error and error not in codes:
            raise InputError(f"model {spec.text}: error {error!r} is not a {engine.name} tag; known: {', '.join(sorted(codes))}")
        self.options = SimOptions(error_rate=rate, error=error, seed=sim_seed)

    async def complete(self, request: CallRequest) -> Completion:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        seed = stable_seed(self.options.seed, request.item.id, request.step_index, request.attempt)
        text = self.engine.simulate(request.item, request.step, request.outputs, self.options, seed)
        return Completion(text=text, latency=self.latency)

    def describe(self) -> dict[str, Any]:
        return {"kind": "sim", "model": self.spec.text}


class OracleBackend(Backend):
    """Answers with the gold: proves the pipeline scores 100% on correct answers."""

    def __init__(self, spec: ModelSpec, engine: Engine[Any]):
        if spec.options or spec.name:
            raise InputError("model oracle takes no options")
        self.spec = spec
        self.engine = engine

    async def complete(self, request: CallRequest) -> Completion:
        return Completion(text=self.engine.oracle(request.item, request.step, request.outputs))


class ReplayBackend(Backend):
    """Recorded outputs: JSON lines ``{"id": ..., "output": "..."}`` or ``"outputs": [...]``, optionally
    with the recorded ``"finish_reasons": [...]`` per step (a reply cut at the cap replays as cut)."""

    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.outputs, self.finish_reasons = load_replay_file(Path(spec.name))

    async def complete(self, request: CallRequest) -> Completion:
        recorded = self.outputs.get(request.item.id)
        if recorded is None:
            raise BackendError(f"no recorded output for item {request.item.id} in {self.spec.name}", transient=False)
        if request.step_index >= len(recorded):
            raise BackendError(
                f"{self.spec.name} has {len(recorded)} output(s) for {request.item.id}; step {request.step_index + 1} needs more",
                transient=False,
            )
        reasons = self.finish_reasons.get(request.item.id, [])
        reason = reasons[request.step_index] if request.step_index < len(reasons) else ""
        return Completion(text=recorded[request.step_index], finish_reason=reason)

    def describe(self) -> dict[str, Any]:
        return {"kind": "replay", "model": self.spec.text, "file": self.spec.name}


def load_replay(path: Path) -> dict[str, list[str]]:
    """Item id -> outputs per step, with one clear error for a missing or malformed file."""
    return load_replay_file(path)[0]


def load_replay_file(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(item id -> outputs per step, item id -> finish reasons per step where recorded)."""
    if path.suffix == ".csv":
        return load_compost_csv(path), {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"replay file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    outputs: dict[str, list[str]] = {}
    reasons: dict[str, list[str]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            item_id = str(record["id"])
            values = record["outputs"] if "outputs" in record else [record["output"]]
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise TypeError("outputs must be strings")
            finished = record.get("finish_reasons", [])
            if not isinstance(finished, list) or not all(isinstance(v, str) for v in finished):
                raise TypeError("finish_reasons must be strings")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"replay file {path} line {number}: expected {{\"id\", \"output\"}} or {{\"id\", \"outputs\"}} ({exc})") from None
        outputs[item_id] = values
        if finished:
            reasons[item_id] = finished
    return outputs, reasons


def load_compost_csv(path: Path) -> dict[str, list[str]]:
    """A released CompoST results CSV (``<level>__...csv``): ``generated_sparql`` per ``id``/``subid``.

    Keys are the ids compost's official loader assigns (``<level>-o<id>-<depth>x<breadth>-g<subid>``).
    """
    level = path.name.split("__", 1)[0].lower()
    if level not in ("easy", "medium", "hard"):
        raise InputError(f"replay file {path}: a CompoST results CSV is named easy__, medium__ or hard__...")
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"replay file {path}: {exc}") from None
    try:
        return {f"{level}-o{row['id']}-{row['base_depth']}x{row['base_breadth']}-g{row['subid']}": [row["generated_sparql"]]
                for row in rows}
    except KeyError as exc:
        raise InputError(f"replay file {path}: missing column {exc}") from None
