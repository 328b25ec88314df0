"""What the CLI and the inspector ask of the sessions layer, in one place.

The runner, the tools and asyncio are imported by the functions that run something, so
that reading a run (``n2f show``, ``report``, ``runs``) does not load them.

Both front ends go through these functions so that a run started from the TUI and one
started from the command line are the same thing on disk.

One piece: it is the front ends' single entry to the sessions layer; each finds every request it makes here.
"""

from __future__ import annotations

import hashlib
import itertools
import platform
import random
from dataclasses import dataclass, replace
from importlib import metadata
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engines import get_engine
from engines.contract import Engine
from engines.core import (
    Item,
    ItemResult,
    RunResults,
    Tag,
    parse_settings,
    settings_from_json,
    settings_to_json,
)
from sessions.backends.base import Backend, BackendError, ModelSpec
from sessions.collector import collector_paused
from sessions.config import Config, load_config, reading_config
from sessions.errors import InputError, RuntimeFailure
from sessions.models import make_backend, parse_model_spec
from sessions.prompts import rebuilt_steps
from sessions.provenance import provenance
from sessions.results_log import finish_reasons
from sessions.service import ServiceOptions, response_cache
from sessions.store import RunStore
from sessions.usage import Budget, run_usage

if TYPE_CHECKING:
    from sessions.runner import Runner

DEFAULT_SEED = 0


@dataclass
class PreparedRun:
    store: RunStore
    runner: Runner
    engine: Engine
    backend: Backend


def build_items(engine_name: str, setting_pairs: Sequence[str] | Mapping[str, str], seed: int) -> tuple[Engine, Any, Sequence[Item]]:
    """The engine, its parsed settings and its items (built with the collector paused: sessions.collector)."""
    engine = get_engine(engine_name)
    settings = parse_settings(engine.settings_type, setting_pairs)
    with collector_paused():
        return engine, settings, engine.items(settings, seed)


async def run_tool_steps(engine: Engine, item: Item, settings: Any, outputs: Sequence[str]) -> list[str]:
    """``outputs`` (the model steps' outputs given) followed by the outputs of the tool steps the engine
    asks for next (compost's query execution, rgp's sandboxed runs), as a run would have recorded them.

    Stops at the first model step: its output has to be given. A tool that cannot do its work
    (unreachable endpoint, broken sandbox) is a RuntimeFailure, not a verdict on the model.
    """
    from sessions.tools import close_tools, preflight_tools, run_tool

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


def seeded_sample(items: Sequence[Item], n: int, seed: int) -> list[Item]:
    """``n`` items drawn with ``seed``, in their original order (all of them when there are fewer)."""
    if n >= len(items):
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), n))
    return [items[i] for i in chosen]


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("n2f-tui", "openai", "httpx2", "aiohttp", "lark", "z3-solver", "pyoxigraph", "textual",
                    "llama-cpp-python"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


def reproduction_meta(engine: Engine, settings: Any, templates: Mapping[str, str]) -> dict[str, Any]:
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


def chosen_items(items: Sequence[Item], limit: int | None, sample: int | None, seed: int) -> Any:
    """The first ``limit`` items (lazily: a generated engine builds only what is stored), or ``sample`` of them."""
    for count, what in ((limit, "--limit"), (sample, "-n")):
        if count is not None and count < 1:
            raise InputError(f"{what} must be at least 1")
    if limit is not None:
        items = itertools.islice(items, limit)
    if sample is not None:
        items = seeded_sample(items if limit is None else list(items), sample, seed)
    return items


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
    per-minute ceilings (``sessions.service``).
    """
    from sessions.runner import Runner
    from sessions.tools import preflight_tools, tools_meta

    config = config or load_config()
    spec = parse_model_spec(model)
    if spec.kind == "local":
        setting_pairs = local_settings(engine_name, setting_pairs)
    engine, settings, items = build_items(engine_name, setting_pairs, seed)
    items = chosen_items(items, limit, sample, seed)
    if concurrency < 1:
        raise InputError("-j must be at least 1")
    budget = make_budget(config, spec, max_tokens, max_cost)
    service = (service or ServiceOptions()).check()
    cache = response_cache(spec.kind, service.cache, config)
    backend = make_backend(spec, engine, seed, config, cache=cache)
    await backend.preflight()
    await preflight_tools(engine.tools, settings)
    chosen = {**engine.templates(settings), **(templates or {})}
    store = RunStore.create(
        engine=engine.name,
        settings=settings_to_json(settings),
        seed=seed,
        model=spec.text,
        backend=backend.describe(),
        items=items,
        templates=chosen,
        concurrency=concurrency,
        name=name,
        extra={"versions": package_versions(), **reproduction_meta(engine, settings, chosen), **tools_meta(engine.tools),
               "provenance": provenance(settings_to_json(settings), cache_enabled=cache is not None),
               **({"group": group} if group else {}), **service.meta()},
    )
    store.acquire()
    runner = Runner(store, engine, settings, backend, concurrency=concurrency, templates=chosen, budget=budget,
                    rpm=service.rpm, tpm=service.tpm)
    return PreparedRun(store=store, runner=runner, engine=engine, backend=backend)


def plan_run(engine_name: str, setting_pairs: Sequence[str] | Mapping[str, str] = (), model: str = "sim",
             seed: int = DEFAULT_SEED, limit: int | None = None, config: Config | None = None) -> Any:
    """What ``prepare_run`` would send, without a call or a file written (``sessions.dry_run``)."""
    from sessions.dry_run import dry_run

    config = config or load_config()
    spec = parse_model_spec(model)
    if spec.kind == "local":
        setting_pairs = local_settings(engine_name, setting_pairs)
    engine, settings, items = build_items(engine_name, setting_pairs, seed)
    if limit is not None and limit < 1:
        raise InputError("--limit must be at least 1")
    chosen = list(itertools.islice(items, limit)) if limit is not None else list(items)
    return dry_run(engine, settings, chosen, spec.text, config.price_for(spec.text, spec.name))


def run_settings(store: RunStore) -> tuple[Engine, Any]:
    engine = get_engine(store.meta["engine"])
    return engine, settings_from_json(engine.settings_type, store.meta.get("settings", {}))


async def prepare_resume(ref: str, concurrency: int | None = None, config: Config | None = None,
                         max_tokens: int | None = None, max_cost: float | None = None,
                         service: ServiceOptions | None = None) -> PreparedRun:
    """Reopen a run with the model it was started with; pending items are re-run.

    A budget given here limits the run's total usage, results already stored included;
    without one the run goes on to its end (a run stopped at its budget is finished so)."""
    from sessions.runner import Runner
    from sessions.tools import preflight_tools

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


def load_results(store: RunStore) -> RunResults:
    """The run as its engine's report sees it.

    Reports group by ``item.meta``, name items by id and count tags by code; they never
    read an item's inputs or gold, a step's trace or a tag's evidence. So the results
    come from the index's summaries (status, scores, tag codes) and brief items, and the
    full records are read only for an engine whose report reads replies or tool results
    (``report_reads_outputs``): a 100,000-item dedc report parses no record at all. Tags
    are shared per code and labelled from the taxonomy, as the reports' tables are.
    """
    engine, settings = run_settings(store)
    items = store.brief_items()
    shared: dict[str, Tag] = {t.code: Tag(code=t.code, label=t.label) for t in engine.taxonomy()}

    def result(index: int, entry: Mapping[str, Any], codes: Sequence[str], outputs: list[str]) -> ItemResult:
        tags = [shared.get(code) or shared.setdefault(code, Tag(code=code, label=code)) for code in codes]
        return ItemResult(item=items[index], status=entry.get("status", "error"), scores=entry.get("scores", {}),
                          tags=tags, outputs=outputs)

    if engine.report_reads_outputs:
        results = {index: result(index, record, [str(t["code"]) for t in record.get("tags", [])],
                                 list(record.get("outputs", [])))
                   for index, record in store.iter_results()}
    else:
        results = {index: result(index, summary, summary.get("tags", []), [])
                   for index, summary in store.summaries().items()}
    return RunResults(name=store.label, model=store.meta.get("model", ""), settings=settings,
                      results=[results[i] for i in sorted(results)])


@dataclass
class ItemDetail:
    """Everything the inspector and ``n2f show`` display for one item."""

    index: int
    item: Item
    record: dict[str, Any] | None
    prompts: list[dict[str, Any]]  # per step, as ``item_steps`` returns them
    verdict: Any  # engines.core.Verdict, re-judged from the stored outputs (None if not scored)
    annotations: list[dict[str, Any]]

    @property
    def status(self) -> str:
        return self.record.get("status", "pending") if self.record else "pending"

    @property
    def needs_scoring(self) -> bool:
        """A stored answer not re-judged yet (pending items have none; error items are never judged)."""
        return self.verdict is None and self.record is not None and self.record.get("status") != "error"


def item_steps(store: RunStore, item: Item, outputs: Sequence[str]) -> list[dict[str, Any]]:
    """The item's steps rebuilt from the run's templates (``sessions.steps.rebuilt_steps``)."""
    engine, settings = run_settings(store)
    return rebuilt_steps(engine, settings, store.meta.get("templates"), item, outputs)


def item_detail(store: RunStore, index: int, record: dict[str, Any] | None = None,
                annotations: list[dict[str, Any]] | None = None, scored: bool = True) -> ItemDetail:
    """Prompts rebuilt from the run's templates and a fresh verdict with views from stored outputs.

    ``record`` is the item's stored record when the caller has it already; None reads it
    from the store, and ``{}`` means the item has none yet (pending) without reading.
    ``annotations`` are the item's events when the caller keeps the run's log open (the
    inspector); None reads the log. ``scored=False`` leaves the verdict for ``score_detail``:
    re-judging can take seconds (a solver at its timeout), reading and prompts do not.
    """
    item = store.item(index)
    if record is None:
        record = store.record(index)
    record = record or None
    outputs = list(record.get("outputs", [])) if record else []
    prompts = item_steps(store, item, outputs)
    detail = ItemDetail(index=index, item=item, record=record, prompts=prompts, verdict=None,
                        annotations=store.annotations().events(item.id) if annotations is None else annotations)
    return score_detail(store, detail) if scored else detail


def score_detail(store: RunStore, detail: ItemDetail) -> ItemDetail:
    """The detail with its verdict re-judged from the stored outputs (none for a pending or error item)."""
    record = detail.record
    if not detail.needs_scoring:
        return detail
    engine, settings = run_settings(store)
    verdict = engine.score(detail.item, list(record.get("outputs", [])), settings,
                           finish_reasons=finish_reasons(record.get("steps", [])), templates=store.meta.get("templates"))
    return replace(detail, verdict=verdict)


def find_item(store: RunStore, ref: str) -> tuple[int, Item]:
    """An item by its 1-based position in the run, or by id (engines' ids are never bare numbers)."""
    index = int(ref) - 1 if ref.isdigit() and 1 <= int(ref) <= store.total else store.find_item(ref)
    if index is None:
        example = store.item(0).id if store.total else "-"
        raise InputError(f"run {store.label} has no item {ref!r} (ids like {example}, or 1..{store.total})")
    return index, store.item(index)


def build_report(store: RunStore, against: Sequence[RunStore] = ()) -> tuple[Any, dict[str, Any]]:
    """The engine's report plus the fields every report has (engine, model, n, counts, accuracy, tags);
    built with the collector paused (sessions.collector): the records read are garbage only after it."""
    with collector_paused():
        return _build_report(store, against)


def _build_report(store: RunStore, against: Sequence[RunStore]) -> tuple[Any, dict[str, Any]]:
    from engines.reporting import accuracy, accuracy_interval, status_counts
    from sessions.describe import describe_run
    from sessions.final_tags import load_final_results, review_summary
    from sessions.paired import paired_comparison
    from sessions.papers import paper_block

    engine, _ = run_settings(store)
    run, labels = load_final_results(store)
    others = []
    for other in against:
        if other.meta["engine"] != engine.name:
            raise InputError(f"run {other.label} is a {other.meta['engine']} run; cannot report it against {engine.name}")
        others.append(load_final_results(other)[0])
    report = engine.report(run, others)
    paired = [paired_comparison(engine, run, other) for other in others]
    report.tables += [comparison.table() for comparison in paired]
    review = review_summary(report, run.results, labels, {t.code: t.label for t in engine.taxonomy()})
    summaries = store.summaries()
    usage = run_usage(summaries.values()).to_json(price_of(store))
    counts = status_counts(run.results)
    counts["pending"] = int(store.meta.get("total", len(run.results))) - len(run.results)
    reasons = [r for summary in summaries.values() for r in summary.get("finish_reasons", [])]
    cache = {"replies": sum(int(s.get("replies", 0)) for s in summaries.values()),
             "cached": sum(int(s.get("cached", 0)) for s in summaries.values())}
    summary = {
        "run": store.id,
        "name": store.meta.get("name", ""),
        "engine": engine.name,
        "model": store.meta.get("model", ""),
        "settings": store.meta.get("settings", {}),
        "description": describe_run(store.meta).to_json(),
        "seed": store.meta.get("seed"),
        "provenance": store.meta.get("provenance"),  # revision, dataset hashes, OS and Python, cache counts
        "status": store.meta.get("status", ""),
        "n": int(store.meta.get("total", len(run.results))),
        "counts": counts,
        "accuracy": accuracy(run.results),
        "accuracy_ci": accuracy_interval(run.results),  # 95% Wilson interval, the same for every engine
        **review,
        "metrics": report.metrics,
        "usage": usage,
        # replies whose backend reported a finish reason, and how many of them the reply cap cut
        "replies": {"reported": len(reasons), "truncated": reasons.count("length"),
                    "max_tokens": store.meta.get("params", {}).get("max_tokens")},
        "cache": cache,  # model replies, and how many of them the response cache served (no tokens spent)
        "served": store.meta.get("served", []),  # the model ids and fingerprints the server reported
        "against": [o.label for o in against],
        "paired": [comparison.to_json() for comparison in paired],
        **({"sandbox": store.meta["sandbox"]} if "sandbox" in store.meta else {}),  # the isolation programs ran under
        **{k: v for k, v in report.to_json().items() if k != "metrics"},
        "paper": paper_block(engine.name, run, report.metrics),
    }
    return report, summary
