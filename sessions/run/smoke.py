"""``n2f smoke``: a small seeded sample of every engine through one model, as one group of runs.

The laptop check before a long run: does the model answer every engine's prompts, how
fast, at what cost. Each engine gets a run with its default settings and ``n`` items
drawn with the seed from its items (not the first ``n``, which may all share one depth
or split); the runs share a group id recorded in their metadata and are named
``GROUP-ENGINE`` so that the inspector lists them together and each opens as any run.

``-s KEY=VALUE`` settings go to every engine that has the key and are skipped by the
others: ``-s max_tokens=256`` caps every reply, which a small local model needs (robogrid
and rgp default to the papers' 8192 tokens, and a 270M model writes until the cap).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Awaitable, Callable, Sequence

from engines import engine_names, get_engine
from engines.core import settings_fields
from sessions.reports.report import build_report
from sessions.run import prepare
from sessions.config import Config, load_config
from sessions.errors import InputError
from sessions.backends.service import ServiceOptions
from sessions.store.index import list_run_meta
from sessions.store.runs import RunStore


@dataclass(frozen=True)
class SmokeRow:
    engine: str
    run: str
    items: int
    metric: str  # the engine's headline metric: its name
    value: float | None
    errors: int
    tokens: int
    cost: float | None
    seconds: float
    status: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def new_group() -> str:
    """``smoke-YYYYMMDD-HHMMSS``, with a suffix if a group of that second exists already."""
    base = time.strftime("smoke-%Y%m%d-%H%M%S")
    taken = {m.get("group") for m in list_run_meta()}
    group, suffix = base, 1
    while group in taken:
        suffix += 1
        group = f"{base}-{suffix}"
    return group


def headline(summary: dict[str, Any], main_score: str) -> tuple[str, float | None]:
    """The run's figure for the engine's main per-item score (``svr``, ``mean_C``, ``macro_f1``),
    else accuracy."""
    metrics = summary.get("metrics") or {}
    for key in (main_score, f"mean_{main_score}", f"macro_{main_score}"):
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return key, float(value)
    return "accuracy", summary.get("accuracy")


def settings_for(engine: str, pairs: Sequence[str]) -> list[str]:
    """The ``KEY=VALUE`` pairs whose key is one of the engine's settings; an unknown key everywhere is bad input."""
    known = {f.name for f in settings_fields(get_engine(engine).settings_type)}
    return [pair for pair in pairs if pair.partition("=")[0].strip() in known]


def check_settings(engines: Sequence[str], pairs: Sequence[str]) -> None:
    for pair in pairs:
        if not any(settings_for(engine, [pair]) for engine in engines):
            raise InputError(f"setting {pair!r}: no engine of the smoke run has {pair.partition('=')[0].strip()!r}")


Watch = Callable[[prepare.PreparedRun], Awaitable[Any]]  # runs a prepared run to its end, showing progress


async def smoke_engine(engine: str, model: str, n: int, seed: int, group: str, config: Config,
                       settings: Sequence[str] = (), service: ServiceOptions | None = None,
                       watch: Watch | None = None) -> SmokeRow:
    prepared = await prepare.prepare_run(engine, settings_for(engine, settings), model=model, seed=seed, sample=n,
                                     concurrency=config.concurrency, name=f"{group}-{engine}", config=config,
                                     group=group, service=service)
    started = time.perf_counter()
    try:
        progress = await (watch(prepared) if watch is not None else prepared.runner.run())
    finally:
        prepared.store.close()
        await prepared.backend.aclose()
    seconds = time.perf_counter() - started
    store = RunStore.open(prepared.store.id)
    _, summary = build_report(store)
    metric, value = headline(summary, prepared.engine.main_score)
    usage = summary["usage"]
    return SmokeRow(engine=engine, run=store.label, items=progress.done, metric=metric, value=value,
                    errors=progress.errors, tokens=usage["total_tokens"], cost=usage["cost"],
                    seconds=round(seconds, 2), status=str(store.meta.get("status", "")))


async def run_smoke(model: str, n: int = 10, seed: int = prepare.DEFAULT_SEED, engines: Sequence[str] = (),
                    config: Config | None = None, settings: Sequence[str] = (), service: ServiceOptions | None = None,
                    watch: Watch | None = None) -> tuple[str, list[SmokeRow]]:
    """Every engine (or those named), one after the other, into one new group; ``service`` for each run's
    cache mode and ceilings, ``watch`` to show each run's progress (the CLI's plain lines)."""
    config = config or load_config()
    if n < 1:
        raise InputError("-n must be at least 1")
    chosen = list(engines or engine_names())
    for engine in chosen:
        get_engine(engine)  # an unknown engine fails before any run exists
    check_settings(chosen, settings)
    group = new_group()
    rows = [await smoke_engine(engine, model, n, seed, group, config, settings, service, watch) for engine in chosen]
    return group, rows
