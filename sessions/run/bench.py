"""``n2f bench``: what the product itself costs, measured through the real pipeline.

Two measurements, no printing (the CLI presents them):

- Engines: each engine's items go through ``prepare.prepare_run(model="sim")`` and
  ``Runner.run`` exactly as ``n2f run`` sends them (generate, prompt, simulated model at
  zero latency, parse, score, store), so the figure is the overhead a user pays on top
  of the model. Every run goes into a scratch ``N2F_HOME`` that is deleted afterwards:
  benchmarking must never leave runs in a person's store.
- Concurrency: dedc items through the real OpenAI backend (the ``openai`` SDK, on each
  of its transports) against a loopback stub that answers after a fixed latency (200 ms,
  a fast server; 2 s, a typical real reply). With ``j`` items in flight the ideal is
  ``j / latency`` calls per second; the efficiency says how much of that our own
  scheduling, client and store keep. Beside each point, in the same process and right
  around it, the plain-SDK floor: the same number of calls through a bare
  ``openai.AsyncOpenAI`` loop under an ``asyncio.Semaphore(j)`` on the same transport.
  The ratio (n2f's calls/s over the floor's) is what n2f costs on top of the SDK; the
  ideal is not reachable at high ``j`` on a small machine, where both are CPU-bound,
  and the machine's other load moves both figures. Half of the floor's calls run just
  before n2f's point and half just after, so that load rising or falling over the
  point weighs on both sides alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from typing import Any, Awaitable, Callable, Iterator, Sequence

from engines import engine_names, get_engine
from sessions.run import prepare
from sessions.config import Config
from sessions.errors import InputError, RuntimeFailure
from sessions.run.latency_stub import STUB_MODEL, stub_process

# Settings per engine giving a run of roughly 1-3 s on a 2-core machine. rgp runs every
# program in a sandboxed subprocess (~11 items/s), so its 180 default items would take
# 16 s; 5 instances per setting (30 items) keep it in range.
DEFAULT_LOADS: dict[str, tuple[str, ...]] = {
    "dedc": ("repeat=3",),
    "logic": ("count=400",),
    "robogrid": ("count=200",),
    "rgp": ("count=5",),
    "compost": (),
}

FIGURES_NOTE = (
    "items_per_s: items / wall time of a first, untraced (cold) run; "
    "peak_heap_mb: tracemalloc peak of the Python heap over a second, traced run of the same items "
    "(excludes one-time imports and native memory such as the SPARQL store and rgp's sandbox processes); "
    "max_rss_mb: the bench process's peak resident set so far (ru_maxrss), cumulative across engines"
)

DEFAULT_LATENCIES = (0.2, 2.0)
DEFAULT_TRANSPORTS = ("aiohttp", "httpx")
ROUNDS = {0.2: 10, 2.0: 3}  # latency rounds per point; other latencies get ROUNDS_DEFAULT
ROUNDS_DEFAULT = 5
CONCURRENCIES = (1, 16, 64, 256)


def plan_for(latency: float) -> tuple[tuple[int, int], ...]:
    """(concurrency, items) points: a fixed number of latency rounds each, ten at 200 ms so that
    opening ``j`` connections at the start weighs on the figure no more than on a real run of that
    size, three at 2 s (where it weighs ten times less) to keep the bench short."""
    rounds = ROUNDS.get(latency, ROUNDS_DEFAULT)
    return tuple((j, j * rounds) for j in CONCURRENCIES)


def stub_config(transport: str) -> Config:
    """A placeholder key, so that a real OPENAI_API_KEY in the environment is never sent, even to
    loopback; the SDK's retries off, so that a failed call shows as an error instead of a slow point."""
    return Config(openai_api_key="not-needed", openai_transport=transport, openai_max_retries=0)


@dataclass(frozen=True)
class EngineFigures:
    engine: str
    settings: tuple[str, ...]
    items: int
    seconds: float
    items_per_s: float
    peak_heap_mb: float
    max_rss_mb: float


@dataclass(frozen=True)
class ConcurrencyFigures:
    transport: str
    latency_s: float
    concurrency: int
    items: int
    calls: int
    seconds: float
    calls_per_s: float
    ideal_per_s: float
    efficiency: float
    floor_per_s: float  # the plain-SDK loop's calls/s at the same j and calls, half just before, half just after
    ratio: float  # calls_per_s / floor_per_s


@dataclass
class BenchReport:
    engines: list[EngineFigures] = field(default_factory=list)
    concurrency: list[ConcurrencyFigures] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "engines": [asdict(f) for f in self.engines],
            "concurrency": [asdict(f) for f in self.concurrency],
            "method": FIGURES_NOTE,
        }


# ------------------------------------------------------------------ scratch store


@contextlib.contextmanager
def scratch_home() -> Iterator[str]:
    """Point ``N2F_HOME`` at a fresh temp dir for the duration, then restore and delete it."""
    previous = os.environ.get("N2F_HOME")
    folder = tempfile.mkdtemp(prefix="n2f-bench-")
    os.environ["N2F_HOME"] = folder
    try:
        yield folder
    finally:
        if previous is None:
            os.environ.pop("N2F_HOME", None)
        else:
            os.environ["N2F_HOME"] = previous
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class RunTiming:
    items: int
    seconds: float
    calls: int  # model calls that reached the backend's server (0 for offline backends)
    cpu_seconds: float = 0.0  # this process's CPU time over the run


async def timed_run(
    engine: str, settings: Sequence[str], model: str, limit: int | None, concurrency: int, config: Config = Config(),
    stream: bool = False,
) -> RunTiming:
    """Run items the way ``n2f run`` does (``stream``: as the inspector does), timing ``runner.run``
    alone (not item generation).

    A fixed Config keeps the figures independent of the user's config file.
    """
    prepared = await prepare.prepare_run(engine, settings, model=model, limit=limit, concurrency=concurrency, config=config)
    prepared.runner.stream = stream
    try:
        started, cpu = time.perf_counter(), time.process_time()
        progress = await prepared.runner.run()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        prepared.store.close()
        await prepared.backend.aclose()
    if progress.errors:
        raise RuntimeFailure(f"bench: {progress.errors} {engine} item(s) ended in status error")
    return RunTiming(items=progress.done, seconds=seconds, calls=getattr(prepared.backend, "calls", 0), cpu_seconds=cpu)


# ------------------------------------------------------------------------ engines


def check_engines(names: Sequence[str]) -> list[str]:
    """The engines to bench (all by default); an unknown name fails before anything runs."""
    for name in names:
        get_engine(name)
    return list(dict.fromkeys(names)) or list(engine_names())


def max_rss_mb() -> float:
    """Peak resident set of this process; Linux reports KiB, macOS bytes."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1 << 20) if sys.platform == "darwin" else rss / 1024


def bench_engine(engine: str, limit: int | None = None, concurrency: int = 8) -> EngineFigures:
    """Time one untraced run, then trace the heap over a second run of the same items.

    Two runs because tracemalloc slows allocation-heavy code (dedc: 3-4x), and the timing
    must not pay for the memory measurement. The timed run goes first, cold, as a
    person's ``n2f run`` is: a second run would find the engines' per-process caches
    (parsed gold answers) filled and look faster than any real run.
    """
    settings = DEFAULT_LOADS.get(engine, ())
    with scratch_home():
        timing = asyncio.run(timed_run(engine, settings, "sim", limit, concurrency))
        tracemalloc.start()
        try:
            asyncio.run(timed_run(engine, settings, "sim", limit, concurrency))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return EngineFigures(
        engine=engine,
        settings=settings,
        items=timing.items,
        seconds=round(timing.seconds, 3),
        items_per_s=round(timing.items / timing.seconds, 1) if timing.seconds > 0 else 0.0,
        peak_heap_mb=round(peak / (1 << 20), 1),
        max_rss_mb=round(max_rss_mb(), 1),
    )


# -------------------------------------------------------------------- concurrency


def sdk_http_client(transport: str) -> Any:
    """The SDK's own HTTP client on ``transport``, with the SDK's defaults (as the backend makes it)."""
    import openai

    return openai.DefaultAioHttpClient() if transport == "aiohttp" else openai.DefaultAsyncHttpxClient()


async def sdk_floor(base_url: str, concurrency: int, calls: int, transport: str,
                    point: Callable[[], Awaitable[RunTiming]]) -> tuple[float, RunTiming]:
    """The calls/s of a plain ``openai`` SDK loop around ``point()``, and what ``point`` returned.

    ``calls`` chat completions through ``chat.completions.create``, at most ``concurrency`` at once
    (an ``asyncio.Semaphore``), one short message each: no engine, no store, no cache, what any client
    of the SDK pays, the floor under n2f. Half of them run before ``point``, half after, on one client
    (so the floor opens its connections once, as n2f's run does)."""
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0,
                                http_client=sdk_http_client(transport))
    gate = asyncio.Semaphore(concurrency)

    async def one(number: int) -> None:
        async with gate:
            await client.chat.completions.create(model=STUB_MODEL,
                                                 messages=[{"role": "user", "content": f"question {number}"}])

    async def loop(count: int) -> float:
        started = time.perf_counter()
        await asyncio.gather(*(one(number) for number in range(count)))
        return time.perf_counter() - started

    before = max(1, calls // 2)
    after = max(1, calls - before)
    try:
        seconds = await loop(before)
        result = await point()
        seconds += await loop(after)
    finally:
        await client.close()
    return (before + after) / seconds if seconds > 0 else 0.0, result


def concurrency_point(base_url: str, concurrency: int, items: int, latency: float,
                      transport: str = "aiohttp") -> ConcurrencyFigures:
    """``items`` dedc items at ``-j concurrency`` through the OpenAI backend, between the two halves of
    the plain-SDK floor on as many calls (``sdk_floor``).

    Each point gets its own scratch home, hence an empty response cache: a reply cached
    by an earlier point would skip the server and inflate the figure. dedc repeats its
    items to reach ``items``.
    """
    base = len(prepare.build_items("dedc", (), prepare.DEFAULT_SEED)[2])
    settings = (f"repeat={-(-items // base)}",)

    async def n2f_point() -> RunTiming:
        with scratch_home():
            return await timed_run("dedc", settings, f"openai:{STUB_MODEL}@{base_url}", items, concurrency,
                                   stub_config(transport))

    floor, timing = asyncio.run(sdk_floor(base_url, concurrency, items, transport, n2f_point))
    ideal = concurrency / latency
    rate = timing.calls / timing.seconds if timing.seconds > 0 else 0.0
    return ConcurrencyFigures(
        transport=transport,
        latency_s=latency,
        concurrency=concurrency,
        items=timing.items,
        calls=timing.calls,
        seconds=round(timing.seconds, 3),
        calls_per_s=round(rate, 1),
        ideal_per_s=round(ideal, 1),
        efficiency=round(rate / ideal, 3),
        floor_per_s=round(floor, 1),
        ratio=round(rate / floor, 3) if floor > 0 else 0.0,
    )


def bench_concurrency(latency: float, transport: str = "aiohttp",
                      plan: Sequence[tuple[int, int]] | None = None) -> list[ConcurrencyFigures]:
    """Throughput at each (concurrency, items) as a fraction of ``concurrency / latency``."""
    if latency <= 0:
        raise InputError("bench latency must be positive")
    with stub_process(latency) as base_url:
        concurrency_point(base_url, 1, 1, latency, transport)  # warm-up: first-call imports are not throughput
        return [concurrency_point(base_url, j, n, latency, transport) for j, n in (plan or plan_for(latency))]


def run_bench(engines: Sequence[str] = (), limit: int | None = None, concurrency_check: bool = True,
              latencies: Sequence[float] | None = None, transports: Sequence[str] | None = None) -> BenchReport:
    """Every requested engine (all by default), then the concurrency check (each latency, each
    transport) unless skipped."""
    if limit is not None and limit < 1:
        raise InputError("-n must be at least 1")
    report = BenchReport()
    for engine in check_engines(engines):
        report.engines.append(bench_engine(engine, limit))
    if concurrency_check:
        for latency in latencies or DEFAULT_LATENCIES:
            for transport in transports or DEFAULT_TRANSPORTS:
                report.concurrency += bench_concurrency(latency, transport)
    return report
