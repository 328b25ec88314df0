"""A run made ready from settings, or reopened to resume: validated first, written only then.

The runner and the tools are imported by the functions that run something, so that reading
a run (``n2f show``, ``report``, ``runs``) does not load them. Both front ends go through
these functions, so a run started from the TUI and one from the command line are the same
thing on disk.
"""

from __future__ import annotations

import hashlib
import itertools
import platform
import random
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterable, Iterator, Mapping, Sequence

from engines import get_engine
from engines.contract import Engine
from engines.core import Item, parse_settings, settings_to_json
from sessions.backends.base import Backend, BackendError, ModelSpec
from sessions.backends.models import make_backend, parse_model_spec
from sessions.backends.service import ServiceOptions, response_cache
from sessions.collector import collector_paused
from sessions.config import Config, load_config, reading_config
from sessions.errors import InputError, RuntimeFailure
from sessions.run.provenance import provenance
from sessions.run.usage import Budget
from sessions.store.results import run_settings
from sessions.store.summary_line import finish_reasons
from sessions.store.runs import RunStore

if TYPE_CHECKING:
    from sessions.run.dry_run import DryRun
    from sessions.run.runner import Runner


DEFAULT_SEED = 0


@dataclass
class PreparedRun:
    store: RunStore
    runner: Runner
    engine: Engine[Any]
    backend: Backend


def build_items(engine_name: str, setting_pairs: Sequence[str] | Mapping[str, str], seed: int) -> tuple[Engine[Any], Any, Sequence[Item]]:
    """The engine, its parsed settings and its items (built with the collector paused: sessions.collector)."""
    engine = get_engine(engine_name)
    settings = parse_settings(engine.settings_type, setting_pairs)
    with collector_paused():
        return engine, settings, engine.items(settings, seed)


async def run_tool_steps(engine: Engine[Any], item: Item, settings: Any, outputs: Sequence[str]) -> list[str]:
    """``outputs`` (the model steps' outputs given) followed by the outputs of the tool steps the engine
    asks for next (compost's query execution, rgp's sandboxed runs), as a run would have recorded them.

    Stops at the first model step: its output has to be given. A tool that cannot do its work
    (unreachable endpoint, broken sandbox) is a RuntimeFailure, not a verdict on the model.
    """
    from sessions.tools.dispatch import close_tools, preflight_tools, run_tool

    done = list(outputs)
    await preflight_tools(engine.tools, settings)
    try:
        while (step := engine.next_call(item, settings, done)[0]) is not None and step.kind == "tool":
            try:
                done.append(await run_tool(step.tool, step.payload))
            except BackendError as exc:
                raise RuntimeFailure(f"tool step {step.name} ({step.tool}) failed: {exc}") from None
    finally:
        await close_tools()
    return done


def seeded_sample(items: Sequence[Item], n: int, seed: int, among: int | None = None) -> Iterator[Item]:
    """``n`` of the first ``among`` items (all by default) drawn with ``seed``, in their original order
    (all of them when there are fewer). The draw needs only their number: each item is made (or read)
    when the caller takes it, so a sample of a large generated set is never held whole."""
    among = len(items) if among is None else min(among, len(items))
    if n >= among:
        return itertools.islice(items, among)
    return (items[i] for i in sorted(random.Random(seed).sample(range(among), n)))


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("n2f-tui", "openai", "httpx2", "aiohttp", "lark", "z3-solver", "pyoxigraph", "textual",
                    "llama-cpp-python"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


def reproduction_meta(engine: Engine[Any], settings: Any, templates: Mapping[str, str]) -> dict[str, Any]:
    """What a reader needs, beyond the templates themselves, to tell whether two runs asked the same thing:
    a short fingerprint per prompt template and the sampling parameters every model step sends."""
    return {
        "template_hashes": {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in templates.items()},
        "params": dict(engine.model_params(settings)),
    }


def make_budget(config: Config, spec: ModelSpec, max_tokens: int | None = None,
                max_cost: float | None = None) -> Budget:
    """The budget a run stops at; a cost limit needs the model's price in the config."""
    if max_tokens is not None and max_tokens < 1:
        raise InputError("--max-tokens must be at least 1")
    if max_cost is not None and max_cost <= 0:
        raise InputError("--max-cost must be positive")
    price = config.price_for(spec.text, spec.name)
    if max_cost is not None and price is None:
        raise InputError(f"--max-cost needs a price for {spec.text}: add [prices.\"{spec.name or spec.text}\"] "
                         "input = ..., output = ... (US$ per million tokens) to the config file")
    return Budget(max_tokens=max_tokens, max_cost=max_cost, price=price)


def price_of(store: RunStore, config: Config | None = None) -> Any:
    """The config's price for a run's model, or None (also when the config does not load: reading goes on)."""
    config = config or reading_config()[0]
    spec = parse_model_spec(store.meta.get("model", "sim"))
    return config.price_for(spec.text, spec.name)


def local_settings(engine_name: str, setting_pairs: Sequence[str] | Mapping[str, str]) -> Sequence[str] | Mapping[str, str]:
    """The settings of a ``-m local`` run: the local reply cap unless ``-s max_tokens=`` names one.

    The cap becomes a recorded setting of the run, so ``resume`` and ``rescore`` see it.
    """
    from sessions.backends.local_backend import reply_cap

    if not isinstance(setting_pairs, Mapping):
        if not all("=" in p for p in setting_pairs):
            return setting_pairs  # parse_settings names the malformed pair
        setting_pairs = dict(p.split("=", 1) for p in setting_pairs)
    pairs = {k.strip(): v.strip() for k, v in setting_pairs.items()}
    engine = get_engine(engine_name)
    default = getattr(engine.settings_type(), "max_tokens", None)
    cap = reply_cap(default, pairs, engine.model_steps) if isinstance(default, int) else None
    return pairs if cap is None else {**pairs, "max_tokens": str(cap)}


def chosen_items(items: Sequence[Item], limit: int | None, sample: int | None, seed: int) -> Iterable[Item]:
    """The first ``limit`` items, or ``sample`` of them, lazily: a generated engine builds each item
    when the store writes it, and only those it stores."""
    for count, what in ((limit, "--limit"), (sample, "-n")):
        if count is not None and count < 1:
            raise InputError(f"{what} must be at least 1")
    if sample is not None:
        return seeded_sample(items, sample, seed, among=limit)
    return items if limit is None else itertools.islice(items, limit)


@asynccontextmanager
async def closed_on_failure(backend: Backend) -> AsyncIterator[None]:
    """Close ``backend`` when the block fails: the client its preflight made, left open, would be
    reported at exit ("Unclosed client session") under the one line of the error."""
    try:
        yield
    except BaseException:
        await backend.aclose()
        raise


async def prepare_run(
    engine_name: str,
    setting_pairs: Sequence[str] | Mapping[str, str] = (),
    model: str = "sim",
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    concurrency: int = 8,
    name: str = "",
    templates: Mapping[str, str] | None = None,
    config: Config | None = None,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    group: str = "",
    sample: int | None = None,
    service: ServiceOptions | None = None,
) -> PreparedRun:
    """Validate everything, then create the run on disk; nothing is written on bad input.

    ``limit`` keeps the first items, ``sample`` draws that many with the seed; ``group``
    marks runs made together (``n2f smoke``); ``service`` chooses the cache mode and the
    per-minute ceilings (``sessions.backends.service``).
    """
    from sessions.run.runner import Runner
    from sessions.tools.dispatch import preflight_tools, tools_meta

    config = config or load_config()
    spec = parse_model_spec(model)
    if spec.kind == "local":
        setting_pairs = local_settings(engine_name, setting_pairs)
    engine, settings, built = build_items(engine_name, setting_pairs, seed)
    items = chosen_items(built, limit, sample, seed)
    if concurrency < 1:
        raise InputError("-j must be at least 1")
    budget = make_budget(config, spec, max_tokens, max_cost)
    service = (service or ServiceOptions()).check()
    cache = response_cache(spec.kind, service.cache, config)
    backend = make_backend(spec, engine, seed, config, cache=cache)
    async with closed_on_failure(backend):
        await backend.preflight()
        await preflight_tools(engine.tools, settings)
        chosen = {**engine.templates(settings), **(templates or {})}
        extra = {"versions": package_versions(), **reproduction_meta(engine, settings, chosen), **tools_meta(engine.tools),
                 "provenance": provenance(settings_to_json(settings), cache_enabled=cache is not None),
                 **({"group": group} if group else {}), **service.meta()}
        store = RunStore.create(engine=engine.name, settings=settings_to_json(settings), seed=seed, model=spec.text,
                                backend=backend.describe(), items=items, templates=chosen, concurrency=concurrency,
                                name=name, extra=extra, report_keys=engine.parts.report_keys)
        store.acquire()
    runner = Runner(store, engine, settings, backend, concurrency=concurrency, templates=chosen, budget=budget,
                    rpm=service.rpm, tpm=service.tpm)
    return PreparedRun(store=store, runner=runner, engine=engine, backend=backend)


def plan_run(engine_name: str, setting_pairs: Sequence[str] | Mapping[str, str] = (), model: str = "sim",
             seed: int = DEFAULT_SEED, limit: int | None = None, config: Config | None = None) -> DryRun:
    """What ``prepare_run`` would send, without a call or a file written (``sessions.run.dry_run``)."""
    from sessions.run.dry_run import dry_run

    config = config or load_config()
    spec = parse_model_spec(model)
    if spec.kind == "local":
        setting_pairs = local_settings(engine_name, setting_pairs)
    engine, settings, items = build_items(engine_name, setting_pairs, seed)
    if limit is not None and limit < 1:
        raise InputError("--limit must be at least 1")
    chosen = list(itertools.islice(items, limit)) if limit is not None else list(items)
    return dry_run(engine, settings, chosen, spec.text, config.price_for(spec.text, spec.name))


async def prepare_resume(ref: str, concurrency: int | None = None, config: Config | None = None,
                         max_tokens: int | None = None, max_cost: float | None = None,
                         service: ServiceOptions | None = None) -> PreparedRun:
    """Reopen a run with the model it was started with; pending items are re-run.

    A budget given here limits the run's total usage, results already stored included;
    without one the run goes on to its end (a run stopped at its budget is finished so)."""
    from sessions.run.runner import Runner
    from sessions.tools.dispatch import preflight_tools

    if concurrency is not None and concurrency < 1:
        raise InputError("-j must be at least 1")
    config = config or load_config()
    store = RunStore.open(ref)
    store.acquire()
    try:
        engine, settings = run_settings(store)
        spec = parse_model_spec(store.meta["model"])
        budget = make_budget(config, spec, max_tokens, max_cost)
        service = (service or ServiceOptions()).check().with_recorded(store.meta)
        backend = make_backend(spec, engine, int(store.meta.get("seed", DEFAULT_SEED)), config,
                               cache=response_cache(spec.kind, service.cache, config))
        async with closed_on_failure(backend):
            await backend.preflight()
            await preflight_tools(engine.tools, settings)
    except BaseException:
        store.close()
        raise
    runner = Runner(
        store,
        engine,
        settings,
        backend,
        concurrency=int(store.meta.get("concurrency", 8)) if concurrency is None else concurrency,
        templates=store.meta.get("templates"),
        budget=budget,
        rpm=service.rpm,
        tpm=service.tpm,
    )
    return PreparedRun(store=store, runner=runner, engine=engine, backend=backend)


def rescore(ref: str) -> tuple[RunStore, dict[str, int]]:
    """Re-judge stored outputs with the current scorer; no model calls, annotations untouched."""
    store = RunStore.open(ref)
    store.acquire()
    try:
        engine, settings = run_settings(store)
        items = store.items()
        records = store.results()
        changed = {"rescored": 0, "changed": 0, "skipped": 0}
        for index, record in records.items():
            if record.get("status") == "error":
                changed["skipped"] += 1
                continue
            verdict = engine.score(items[index], record.get("outputs", []), settings, with_views=False,
                                   finish_reasons=finish_reasons(record.get("steps", [])),
                                   templates=store.meta.get("templates"))
            new = {"status": verdict.status, "scores": verdict.scores, "tags": [t.to_json() for t in verdict.tags]}
            if any(record.get(k) != v for k, v in new.items()):
                changed["changed"] += 1
            record.update(new)
            changed["rescored"] += 1
        store.replace_all_results(records)
        store.update_meta(rescored=store.meta.get("updated"))
    finally:
        store.close()
    return store, changed

