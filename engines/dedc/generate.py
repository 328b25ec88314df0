"""DEDC sample and task construction (paper sections 2.1-2.2, 4.1, 4.2; the released
``construction.py``); the official dataset files are read by ``official.py``.

Generated build, for ``(settings, seed)``:

1. Every filled 4-node DAG (``graphs.filled_dags()``, 403 of them) is instantiated
   ``repeat`` times with fresh parameters. All of these form the demonstration pool;
   the 323 not ending in ``add`` are the test items.
2. Shots: other samples sharing at least one node tag with the item are candidates
   (tags are the primitive names, with ``filter_gt_c_colin`` for a filter_gt_c fed by
   add_c and ``hop_rowin`` for a hop fed by kth_argmax); ``shots`` of them are drawn
   uniformly until together they cover every tag of the item. Samples of the item's
   own scheme (its other repeats included) are never drawn.
3. ``gap=0`` / ``gap=100``: as the paper does, items whose base shots do not meet the
   requirement get their shots redrawn (0: at least one shot with the item's graph
   type; 100: candidates of the item's graph type excluded); the others keep them.
4. ``primitives=true`` appends one demonstration per distinct primitive of the item,
   in name order: the primitive's 1-node sample, or the first 2-node sample containing
   it (add, add_c). As in the released data, these samples are drawn once per build.
5. ``names`` only changes how the primitive symbols are written in the answers.

Every random choice comes from its own ``random.Random`` stream keyed by
(seed, purpose, scheme/fill, repeat), so toggling ``primitives``, ``names`` or ``gap``
never changes an item's question, gold parameters or (for primitives/names) shots.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from engines.core import Item, OnDemand
from engines.dedc.graphs import SIGNATURES, FilledDag, filled_dags, out_type, primitive_demo_dags
from engines.dedc.official import load_dataset, without_shared_type
from engines.dedc.primitives import display_names
from engines.dedc.questions import NodeParams, question
from engines.dedc.settings import DedcSettings

ENGINE = "dedc"
SIZE = 1000  # rows of the imagined table; headers attr_1..attr_1000
MAX_TRIES = 20000  # uniform redraws before falling back to a constructive cover


# ----------------------------------------------------------------------- samples


@dataclass(slots=True)
class Sample:
    """One instantiated graph: parameters, question, gold expressions."""

    dag: FilledDag
    repeat: int
    nodes: list[NodeParams]
    question: str
    tags: frozenset[str]

    @property
    def graph_tp(self) -> tuple[int, tuple[str, ...]]:
        return self.dag.graph_tp

    def answer(self, names: str = "opaque") -> str:
        return render_answer(self.nodes, names)


def render_answer(nodes: Sequence[NodeParams], names: str = "opaque") -> str:
    """The gold assignment string in the official format, e.g.
    ``view_1 := f0 (all, attr_395, 864); ...; result := view_4;``."""
    symbols = display_names(names)
    steps = [f"{n.var} := {symbols[n.prim]} ({', '.join(n.args)})" for n in nodes]
    return "; ".join(steps) + f"; result := {nodes[-1].var};"


_TAG_SETS: dict[frozenset[str], frozenset[str]] = {}


def node_tags(nodes: Sequence[NodeParams]) -> frozenset[str]:
    """Demo-selection tags: primitive names, with filter_gt_c / hop split by what feeds them."""
    tags = set()
    for n in nodes:
        if n.prim == "filter_gt_c" and n.args[2].startswith("column_"):
            tags.add("filter_gt_c_colin")
        elif n.prim == "hop" and n.args[0].startswith("row_"):
            tags.add("hop_rowin")
        else:
            tags.add(n.prim)
    return _TAG_SETS.setdefault(frozenset(tags), frozenset(tags))  # one shared set per combination


def _node_params(prim: str, var: str, view: str, fed: Callable[[int], NodeParams | None], rng: random.Random,
                 size: int) -> tuple[NodeParams, int]:
    """One node's fresh parameters, its inputs ``fed`` by earlier nodes where the DAG says so;
    with the table size after it (``top_k`` keeps k rows)."""
    def header() -> str:
        return f"attr_{rng.randint(1, SIZE)}"

    if prim == "filter_gt":
        src_val = fed(2)
        val = None if src_val else rng.randint(0, 1000)
        h = header()
        return NodeParams(prim, var, (view, h, src_val.var if src_val else str(val)), h=h, val=val), size
    if prim in ("top_k", "kth_max", "kth_argmax"):
        h = header()
        k = rng.randint(2, size)
        return NodeParams(prim, var, (view, h, str(k)), h=h, k=k), k if prim == "top_k" else size
    if prim == "filter_gt_c":
        src_col = fed(2)
        col = None if src_col else header()
        avoid = src_col.col_header if src_col else col
        h = header()
        while h == avoid:
            h = header()
        return NodeParams(prim, var, (view, h, src_col.var if src_col else str(col)), h=h, col=col), size
    if prim == "sum":
        h = header()
        return NodeParams(prim, var, (view, h), h=h), size
    if prim == "count":
        return NodeParams(prim, var, (view,)), size
    if prim == "hop":
        src_row = fed(0)
        row = None if src_row else f"item_{rng.randint(1, size)}"
        h = header()
        return NodeParams(prim, var, (src_row.var if src_row else str(row), h), h=h, row=row), size
    if prim == "add":
        a, b = fed(0), fed(1)
        v1 = None if a else rng.randint(0, 1000)
        v2 = None if b else rng.randint(0, 1000)
        return NodeParams(prim, var, (a.var if a else str(v1), b.var if b else str(v2)), val=v1, val2=v2), size
    if prim == "add_c":
        h = header()
        src_val = fed(1)
        val = None if src_val else rng.randint(0, 1000)
        return NodeParams(prim, var, (h, src_val.var if src_val else str(val)), val=val, col_header=h), size
    raise ValueError(f"unknown primitive {prim}")  # pragma: no cover - SIGNATURES lists the same ten


def instantiate(dag: FilledDag, rng: random.Random, repeat: int = 0) -> Sample:
    """Give every node of ``dag`` fresh parameters and build the question."""
    counters: dict[str, int] = {}
    size = SIZE
    nodes: list[NodeParams] = []
    for i, prim in enumerate(dag.prims):
        out = out_type(prim)
        counters[out] = counters.get(out, 0) + 1
        slots = dag.slots[i]

        def fed(slot: int) -> NodeParams | None:
            return nodes[slots[slot]] if slots[slot] != -1 else None

        view = "all"  # an unfilled view input reads the whole table
        if SIGNATURES[prim][0][0] == "view" and (src := fed(0)) is not None:
            view = src.var
        node, size = _node_params(prim, f"{out}_{counters[out]}", view, fed, rng, size)
        nodes.append(node)
    return Sample(dag=dag, repeat=repeat, nodes=nodes, question=question(dag.shape, nodes), tags=node_tags(nodes))


def _rng(seed: int, purpose: str, *keys: object) -> random.Random:
    """An independent, reproducible stream (string seeds hash with SHA-512, stable across runs)."""
    return random.Random("dedc/" + "/".join(str(x) for x in (seed, purpose, *keys)))


# ------------------------------------------------------------------ demo drawing


class _Repeated(OnDemand[int]):
    """The pool indices ``k * period + d`` for every repeat ``k`` and every ``d`` in ``dags``, in
    ascending order, without a list of them (a 100,000-sample pool would need one per tag set)."""

    def __init__(self, dags: Sequence[int], period: int, repeats: int):
        self.dags, self.period, self.repeats = dags, period, repeats

    def __len__(self) -> int:
        return len(self.dags) * self.repeats

    def element(self, index: int) -> int:
        repeat, position = divmod(index, len(self.dags))
        return repeat * self.period + self.dags[position]


class _Pool:
    """The demonstration pool and its candidate lists per tag set.

    The samples are repeat-major (sample ``k * period + d`` is repeat ``k`` of filled DAG
    ``d``), and a sample's tags and graph type depend on its DAG only, so candidates are
    found among the first ``period`` samples and repeated (``_Repeated``) for the rest;
    ``kind(i)`` is the first sample of ``i``'s DAG, which answers for it without making it.
    """

    def __init__(self, samples: Samples):
        self.samples = samples
        self.period = samples.period
        self.repeats = samples.repeats
        self.by_tag: dict[str, list[int]] = {}
        for d, s in enumerate(samples.first):
            for t in s.tags:
                self.by_tag.setdefault(t, []).append(d)
        self._cache: dict[tuple[frozenset[str], Any], _Repeated] = {}

    def kind(self, index: int) -> Sample:
        """A sample with the DAG (so the fill, tags and graph type) of sample ``index``."""
        return self.samples.first[index % self.period]

    def candidates(self, tags: frozenset[str], exclude_tp: Any = None) -> _Repeated:
        """Every sample sharing a tag with ``tags`` (and not of graph type ``exclude_tp``), ascending."""
        key = (tags, exclude_tp)
        if key not in self._cache:
            found = {d for t in tags for d in self.by_tag.get(t, ())}
            first = self.samples.first
            dags = [d for d in sorted(found) if exclude_tp is None or first[d].graph_tp != exclude_tp]
            self._cache[key] = _Repeated(dags, self.period, self.repeats)
        return self._cache[key]


def _draw(pool: _Pool, rng: random.Random, item: Sample, shots: int, exclude_tp: Any = None,
          aim_tp: Any = None) -> list[int]:
    """Draw ``shots`` demos covering the item's tags (and with one of ``aim_tp`` if given)."""
    cands = pool.candidates(item.tags, exclude_tp)
    kind = pool.kind
    own = item.dag.fill
    need = item.tags

    def ok(pick: Sequence[int]) -> bool:
        covered: set[str] = set()
        for i in pick:
            if kind(i).dag.fill == own:
                return False
            covered |= kind(i).tags
        if not need <= covered:
            return False
        return aim_tp is None or any(kind(i).graph_tp == aim_tp for i in pick)

    if len(cands) >= shots:
        for _ in range(MAX_TRIES):
            pick = rng.sample(cands, shots)
            if ok(pick):
                return pick
    # Constructive fallback (never needed with the paper's 3 shots): one shot of the aimed
    # graph type first, then greedily the shot adding the most uncovered tags.
    order = [i for i in cands if kind(i).dag.fill != own]
    rng.shuffle(order)
    chosen: list[int] = []
    if aim_tp is not None:
        chosen += [i for i in order if kind(i).graph_tp == aim_tp][:1]
    covered = set().union(*(kind(i).tags for i in chosen)) if chosen else set()
    while len(chosen) < min(shots, len(order)):
        rest = [i for i in order if i not in chosen]
        best = max(rest, key=lambda i: len((kind(i).tags & need) - covered))
        chosen.append(best)
        covered |= kind(best).tags
    return chosen


# ------------------------------------------------------------------ generated build


def _demo(sample: Sample, names: str) -> dict[str, str]:
    return {"question": sample.question, "answer": sample.answer(names)}


class Samples(OnDemand[Sample]):
    """All filled DAGs x repeats, repeat-major, each with its own parameter stream, made when
    asked for: sample ``k * period + d`` is repeat ``k`` of filled DAG ``d``.

    Only repeat 0 (``first``) is kept, since it stands for every repeat of its DAG in the
    pool's lists: a 100,000-item build has 125,000 samples (about 1 KB each), which the
    items made from them would otherwise hold while the store writes them."""

    def __init__(self, seed: int, repeats: int):
        self.seed = seed
        self.dags = filled_dags()
        self.period = len(self.dags)
        self.repeats = repeats
        self.first = tuple(self._make(d, 0) for d in range(self.period)) if repeats else ()

    def __len__(self) -> int:
        return self.period * self.repeats

    def element(self, index: int) -> Sample:
        repeat, d = divmod(index, self.period)
        return self.first[d] if repeat == 0 else self._make(d, repeat)

    def _make(self, d: int, repeat: int) -> Sample:
        dag = self.dags[d]
        return instantiate(dag, _rng(self.seed, "params", dag.fill, repeat), repeat)


@lru_cache(maxsize=8)
def _primitive_samples(seed: int) -> dict[str, Sample]:
    return {name: instantiate(d, _rng(seed, "primitive-demo", name)) for name, d in primitive_demo_dags().items()}


class GeneratedItems(OnDemand[Item]):
    """The generated items, each built when asked for: item ``i`` depends only on the seed,
    the sample pool and its own random streams, so a 100,000-item run never holds its
    items all at once (they are 180 MB of JSON) while the store writes them."""

    def __init__(self, settings: DedcSettings, seed: int):
        self.settings = settings
        self.seed = seed
        self.samples = Samples(seed, settings.repeat)
        self.pool = _Pool(self.samples)
        self.prim_samples = _primitive_samples(seed) if settings.primitives else {}
        self.tests = [d for d, dag in enumerate(self.samples.dags) if dag.scheme is not None]  # per repeat

    def __len__(self) -> int:
        return len(self.tests) * self.samples.repeats

    def element(self, index: int) -> Item:
        repeat, test = divmod(index, len(self.tests))
        settings, seed, samples, pool = self.settings, self.seed, self.samples, self.pool
        sample = samples[repeat * samples.period + self.tests[test]]
        scheme = sample.dag.scheme
        k = sample.repeat
        tp = sample.graph_tp
        shots = _draw(pool, _rng(seed, "shots", scheme, k), sample, settings.shots)
        if settings.gap == "0" and without_shared_type(tp, (pool.kind(i).graph_tp for i in shots)):
            shots = _draw(pool, _rng(seed, "shots-gap0", scheme, k), sample, settings.shots, aim_tp=tp)
        elif settings.gap == "100" and not without_shared_type(tp, (pool.kind(i).graph_tp for i in shots)):
            shots = _draw(pool, _rng(seed, "shots-gap100", scheme, k), sample, settings.shots, exclude_tp=tp)
        demos = [_demo(samples[i], settings.names) for i in shots]
        prims = [n.prim for n in sample.nodes]
        n_prim = 0
        if settings.primitives:
            for name in sorted(set(prims)):
                demos.append(_demo(self.prim_samples[name], settings.names))
                n_prim += 1
        item_id = f"dedc-{scheme:03d}" if settings.repeat == 1 else f"dedc-{scheme:03d}-{k}"
        return Item(
            id=item_id,
            engine=ENGINE,
            inputs={"question": sample.question, "demonstrations": demos, "n_primitive_demos": n_prim},
            gold={"answer": sample.answer(settings.names)},
            meta={
                "scheme": scheme,
                "shape": sample.dag.shape,
                "graph_type": sample.dag.graph_type,
                "gap": without_shared_type(tp, (pool.kind(i).graph_tp for i in shots)),
                "primitives": prims,
                "names": settings.names,
                "primitive_demos": settings.primitives,
                "source": "generated",
                "repeat": k,
            },
        )


def generate_items(settings: DedcSettings, seed: int) -> GeneratedItems:
    return GeneratedItems(settings, seed)


# ------------------------------------------------------------------------ public API


def build_items(settings: DedcSettings, seed: int) -> Sequence[Item]:
    """The items for these settings: generated (``dataset=""``) or loaded from an official file."""
    if settings.dataset:
        return load_dataset(settings.dataset, settings.shots)
    return generate_items(settings, seed)
