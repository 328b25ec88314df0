"""DEDC sample and task construction (paper sections 2.1-2.2, 4.1, 4.2; the released
``construction.py``), and loading of the official dataset files.

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

import json
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from engines.core import DataError, Item, OnDemand
from engines.dedc.graphs import (
    SIGNATURES,
    FilledDag,
    filled_dags,
    graph_type_str,
    out_type,
    primitive_demo_dags,
    scheme_index,
    shape_of,
    tag_type,
)
from engines.dedc.primitives import NAME_MAPPINGS, display_names, meanings_by_symbol
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


def instantiate(dag: FilledDag, rng: random.Random, repeat: int = 0) -> Sample:
    """Give every node of ``dag`` fresh parameters and build the question."""
    counters: dict[str, int] = {}
    size = SIZE
    nodes: list[NodeParams] = []

    def header() -> str:
        return f"attr_{rng.randint(1, SIZE)}"

    for i, prim in enumerate(dag.prims):
        out = out_type(prim)
        counters[out] = counters.get(out, 0) + 1
        var = f"{out}_{counters[out]}"
        slots = dag.slots[i]

        def fed(slot: int) -> NodeParams | None:
            return nodes[slots[slot]] if slots[slot] != -1 else None

        view = "all"  # an unfilled view input reads the whole table
        if SIGNATURES[prim][0][0] == "view" and (src := fed(0)) is not None:
            view = src.var
        if prim == "filter_gt":
            src_val = fed(2)
            val = None if src_val else rng.randint(0, 1000)
            h = header()
            node = NodeParams(prim, var, (view, h, src_val.var if src_val else str(val)), h=h, val=val)
        elif prim == "top_k" or prim == "kth_max" or prim == "kth_argmax":
            h = header()
            k = rng.randint(2, size)
            if prim == "top_k":
                size = k
            node = NodeParams(prim, var, (view, h, str(k)), h=h, k=k)
        elif prim == "filter_gt_c":
            src_col = fed(2)
            col = None if src_col else header()
            avoid = src_col.col_header if src_col else col
            h = header()
            while h == avoid:
                h = header()
            node = NodeParams(prim, var, (view, h, src_col.var if src_col else str(col)), h=h, col=col)
        elif prim == "sum":
            h = header()
            node = NodeParams(prim, var, (view, h), h=h)
        elif prim == "count":
            node = NodeParams(prim, var, (view,))
        elif prim == "hop":
            src_row = fed(0)
            row = None if src_row else f"item_{rng.randint(1, size)}"
            h = header()
            node = NodeParams(prim, var, (src_row.var if src_row else str(row), h), h=h, row=row)
        elif prim == "add":
            a, b = fed(0), fed(1)
            v1 = None if a else rng.randint(0, 1000)
            v2 = None if b else rng.randint(0, 1000)
            node = NodeParams(prim, var, (a.var if a else str(v1), b.var if b else str(v2)), val=v1, val2=v2)
        elif prim == "add_c":
            h = header()
            src_val = fed(1)
            val = None if src_val else rng.randint(0, 1000)
            node = NodeParams(prim, var, (h, src_val.var if src_val else str(val)), val=val, col_header=h)
        else:  # pragma: no cover - SIGNATURES and this function list the same ten
            raise ValueError(f"unknown primitive {prim}")
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
    found among the first ``period`` samples and repeated (``_Repeated``) for the rest.
    """

    def __init__(self, samples: Sequence[Sample], period: int):
        self.samples = samples
        self.period = period
        self.repeats = len(samples) // period if period else 0
        self.by_tag: dict[str, list[int]] = {}
        for d, s in enumerate(samples[:period]):
            for t in s.tags:
                self.by_tag.setdefault(t, []).append(d)
        self._cache: dict[tuple[frozenset[str], Any], _Repeated] = {}

    def candidates(self, tags: frozenset[str], exclude_tp: Any = None) -> _Repeated:
        """Every sample sharing a tag with ``tags`` (and not of graph type ``exclude_tp``), ascending."""
        key = (tags, exclude_tp)
        if key not in self._cache:
            found = {d for t in tags for d in self.by_tag.get(t, ())}
            dags = [d for d in sorted(found) if exclude_tp is None or self.samples[d].graph_tp != exclude_tp]
            self._cache[key] = _Repeated(dags, self.period, self.repeats)
        return self._cache[key]


def _draw(pool: _Pool, rng: random.Random, item: Sample, shots: int, exclude_tp: Any = None,
          aim_tp: Any = None) -> list[int]:
    """Draw ``shots`` demos covering the item's tags (and with one of ``aim_tp`` if given)."""
    cands = pool.candidates(item.tags, exclude_tp)
    samples = pool.samples
    own = item.dag.fill
    need = item.tags

    def ok(pick: Sequence[int]) -> bool:
        covered: set[str] = set()
        for i in pick:
            if samples[i].dag.fill == own:
                return False
            covered |= samples[i].tags
        if not need <= covered:
            return False
        return aim_tp is None or any(samples[i].graph_tp == aim_tp for i in pick)

    if len(cands) >= shots:
        for _ in range(MAX_TRIES):
            pick = rng.sample(cands, shots)
            if ok(pick):
                return pick
    # Constructive fallback (never needed with the paper's 3 shots): one shot of the aimed
    # graph type first, then greedily the shot adding the most uncovered tags.
    order = [i for i in cands if samples[i].dag.fill != own]
    rng.shuffle(order)
    chosen: list[int] = []
    if aim_tp is not None:
        chosen += [i for i in order if samples[i].graph_tp == aim_tp][:1]
    covered = set().union(*(samples[i].tags for i in chosen)) if chosen else set()
    while len(chosen) < min(shots, len(order)):
        rest = [i for i in order if i not in chosen]
        best = max(rest, key=lambda i: len((samples[i].tags & need) - covered))
        chosen.append(best)
        covered |= samples[best].tags
    return chosen


# ------------------------------------------------------------------ generated build


def _gap(item_tp: Any, shot_tps: Iterable[Any]) -> bool:
    return not any(tp == item_tp for tp in shot_tps)


def _demo(sample: Sample, names: str) -> dict[str, str]:
    return {"question": sample.question, "answer": sample.answer(names)}


def _instances(seed: int, repeat: int) -> tuple[Sample, ...]:
    """All filled DAGs x repeats, repeat-major, each with its own parameter stream.

    Not cached: the items that need them hold them, and a large run's samples are freed
    with its items instead of staying for the life of the process."""
    return tuple(instantiate(d, _rng(seed, "params", d.fill, k), k) for k in range(repeat) for d in filled_dags())


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
        self.samples = _instances(seed, settings.repeat)
        self.pool = _Pool(self.samples, len(filled_dags()))
        self.prim_samples = _primitive_samples(seed) if settings.primitives else {}
        self.positions = [i for i, s in enumerate(self.samples) if s.dag.scheme is not None]

    def __len__(self) -> int:
        return len(self.positions)

    def element(self, index: int) -> Item:
        sample = self.samples[self.positions[index]]
        settings, seed, samples, pool = self.settings, self.seed, self.samples, self.pool
        scheme = sample.dag.scheme
        k = sample.repeat
        tp = sample.graph_tp
        shots = _draw(pool, _rng(seed, "shots", scheme, k), sample, settings.shots)
        if settings.gap == "0" and _gap(tp, (samples[i].graph_tp for i in shots)):
            shots = _draw(pool, _rng(seed, "shots-gap0", scheme, k), sample, settings.shots, aim_tp=tp)
        elif settings.gap == "100" and not _gap(tp, (samples[i].graph_tp for i in shots)):
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
                "gap": _gap(tp, (samples[i].graph_tp for i in shots)),
                "primitives": prims,
                "names": settings.names,
                "primitive_demos": settings.primitives,
                "source": "generated",
                "repeat": k,
            },
        )


def generate_items(settings: DedcSettings, seed: int) -> GeneratedItems:
    return GeneratedItems(settings, seed)


# ------------------------------------------------------------------- answer parsing

_STEP = re.compile(r"^\s*([A-Za-z_]\w*)\s*:=\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_RESULT = re.compile(r"^\s*result\s*:=\s*([A-Za-z_]\w*)\s*$")


@dataclass(frozen=True)
class ParsedStep:
    var: str
    symbol: str
    args: tuple[str, ...]


def parse_answer(text: str) -> tuple[list[ParsedStep], str | None]:
    """Split an answer in the official format into steps and the ``result`` variable.

    Raises ValueError on a piece that is neither ``var := sym (args)`` nor ``result := var``.
    """
    steps: list[ParsedStep] = []
    result = None
    for piece in text.split(";"):
        if not piece.strip():
            continue
        m = _RESULT.match(piece)
        if m:
            result = m.group(1)
            continue
        m = _STEP.match(piece)
        if not m:
            raise ValueError(f"not an assignment: {piece.strip()!r}")
        args = tuple(a.strip() for a in m.group(3).split(",")) if m.group(3).strip() else ()
        steps.append(ParsedStep(m.group(1), m.group(2), args))
    return steps, result


def naming_of(symbols: Iterable[str]) -> str | None:
    """The naming setting whose symbol set contains all ``symbols`` (None if none does)."""
    used = set(symbols)
    for names in ("opaque", "anomalous", "cross"):
        if used <= set(NAME_MAPPINGS[names].values()):
            return names
    return None


def dag_of_answer(text: str, names: str) -> tuple[list[str], int | None, str]:
    """(primitive meanings in node order, base graph number or None, graph type or "?")."""
    steps, _ = parse_answer(text)
    meaning = meanings_by_symbol(names)
    prims = [meaning.get(s.symbol, "?") for s in steps]
    where = {s.var: i for i, s in enumerate(steps)}
    prev = tuple(tuple(sorted({where[a] for a in s.args if a in where})) for s in steps)
    shape = shape_of(prev) if len(steps) == 4 and "?" not in prims else None
    if shape is None:
        return prims, None, "?"
    return prims, shape, graph_type_str(shape, [out_type(p) for p in prims[:-1]])


# ------------------------------------------------------------------- official files


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"DEDC dataset file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read DEDC dataset file {path}: {exc}") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}: line {n}: expected a JSON object")
        rows.append(row)
    if not rows:
        raise DataError(f"{path}: no items in DEDC dataset file")
    return rows


def _need(row: dict[str, Any], key: str, path: Path, n: int, kind: type = str) -> Any:
    if key not in row or not isinstance(row[key], kind):
        raise DataError(f"{path}: line {n}: missing or malformed field {key!r}")
    return row[key]


def _demo_pairs(row: dict[str, Any], path: Path, n: int, full: bool) -> list[dict[str, str]]:
    key, q, a = ("demo", "question", "output_steps") if full else ("demonstration", "input", "output")
    demos = _need(row, key, path, n, list)
    out = []
    for d in demos:
        if not isinstance(d, dict) or not isinstance(d.get(q), str) or not isinstance(d.get(a), str):
            raise DataError(f"{path}: line {n}: malformed demonstration")
        out.append({"question": d[q], "answer": d[a]})
    return out


def _tp_str(tp: Any) -> str | None:
    """A .full.jsonl graph_tp ``[shape, [types]]`` as our graph type string."""
    if isinstance(tp, list) and len(tp) == 2 and isinstance(tp[0], int) and isinstance(tp[1], list):
        return graph_type_str(tp[0], [tag_type(str(t)) for t in tp[1]])
    return None


def load_dataset(path_text: str, shots: int = 3) -> list[Item]:
    """Items of an official DEDC file (``.jsonl``, with its ``.full.jsonl`` companion when present)."""
    path = Path(path_text).expanduser()
    name = path.name
    if name.endswith(".full.jsonl"):
        full_path: Path | None = path
        plain_path: Path | None = None
        stem = name[: -len(".full.jsonl")]
    else:
        stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else path.stem
        plain_path = path
        companion = path.with_name(stem + ".full.jsonl")
        full_path = companion if companion.is_file() else None
    if not path.is_file():
        raise DataError(f"DEDC dataset file not found: {path}")

    plain = _read_jsonl(plain_path) if plain_path else None
    full = _read_jsonl(full_path) if full_path else None
    if plain is not None and full is not None:
        if len(plain) != len(full) or any(p.get("input") != f.get("question") for p, f in zip(plain, full)):
            raise DataError(f"{path}: its companion {full_path.name} does not hold the same items")
    rows = full if full is not None else plain
    assert rows is not None
    is_full = full is not None
    src = full_path if is_full else plain_path
    assert src is not None

    m = re.search(r"shot(\d+)", stem)
    n_shots = int(m.group(1)) if m else shots

    golds = [_need(r, "output_steps" if is_full else "output", src, i + 1) for i, r in enumerate(rows)]
    symbols: set[str] = set()
    for i, g in enumerate(golds):
        try:
            symbols |= {s.symbol for s in parse_answer(g)[0]}
        except ValueError as exc:
            raise DataError(f"{src}: line {i + 1}: malformed gold answer ({exc})") from None
    names = naming_of(symbols)
    if names is None:
        raise DataError(f"{src}: primitive symbols {sorted(symbols)} match no naming setting")

    lookup = scheme_index()
    items = []
    for i, row in enumerate(rows):
        n = i + 1
        q = _need(row, "question" if is_full else "input", src, n)
        gold_answer = golds[i]
        demos = _demo_pairs(row, src, n, is_full)
        prims, shape, graph_type = dag_of_answer(gold_answer, names)
        inputs: dict[str, Any] = {"question": q, "demonstrations": demos}
        gold: dict[str, Any] = {"answer": gold_answer}
        shot_types: list[str | None]
        if is_full:
            inputs["prompt"] = _need(row, "input_text", src, n)
            gold["accepted"] = list(_need(row, "candi_outputs", src, n, list))
            if isinstance(row.get("graph_nodes"), list):
                prims = [str(p) for p in row["graph_nodes"]]
            if isinstance(row.get("graph_idx"), int):
                shape = row["graph_idx"]
            graph_type = _tp_str(row.get("graph_tp")) or graph_type
            shot_types = [_tp_str(d.get("graph_tp")) for d in row["demo"][:n_shots]]
        else:
            shot_types = []
            for d in demos[:n_shots]:
                try:
                    shot_types.append(dag_of_answer(d["answer"], names)[2])
                except ValueError:
                    shot_types.append("?")
        n_prim = max(0, len(demos) - n_shots)
        inputs["n_primitive_demos"] = n_prim
        scheme = lookup.get((shape, tuple(prims)), i) if shape is not None else i
        gap = None if graph_type == "?" or "?" in shot_types else _gap(graph_type, shot_types)
        items.append(Item(
            id=f"{stem}-{i:03d}",
            engine=ENGINE,
            inputs=inputs,
            gold=gold,
            meta={
                "scheme": scheme,
                "shape": shape if shape is not None else -1,
                "graph_type": graph_type,
                "gap": gap,
                "primitives": prims,
                "names": names,
                "primitive_demos": n_prim > 0,
                "source": name,
                "repeat": 0,
            },
        ))
    return items


# ------------------------------------------------------------------------ public API


def build_items(settings: DedcSettings, seed: int) -> Sequence[Item]:
    """The items for these settings: generated (``dataset=""``) or loaded from an official file."""
    if settings.dataset:
        return load_dataset(settings.dataset, settings.shots)
    return generate_items(settings, seed)
