"""A study: a reproducible sample of a run's items for people to label.

``study.json`` in the run's folder records how the sample was drawn and the item ids
it holds, in run order::

    {"size": 50, "seed": 0, "stratify": "tag", "only": "wrong", "items": [...], "strata": {...}}

The candidates are the scored items (infrastructure ``error`` excluded; with
``only="wrong"``, the items not judged correct). Stratified by a key (``tag``: an item's
first automatic tag code, ``-`` for none; ``status``; else a field of the item's meta,
such as ``graph_type``), each stratum gets its proportional share of the size (largest
remainders, ties by stratum name) and its items are drawn with the seed, stratum by
stratum in name order. The same run, size, seed and options give the same items on
every machine, which is how several people label one study without sharing a file.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from engines.core import UNJUDGED
from sessions.errors import InputError
from sessions.store.files import atomic_write_bytes, now_iso
from sessions.study.labels import RunLabels
from sessions.store.runs import RunStore

FILE = "study.json"
ONLY = ("all", "wrong")


@dataclass
class Study:
    size: int
    seed: int
    stratify: str
    only: str
    items: list[str]
    strata: dict[str, int] = field(default_factory=dict)  # stratum -> items drawn from it
    created: str = ""

    def same_draw(self, other: "Study") -> bool:
        return (self.size, self.seed, self.stratify, self.only) == (other.size, other.seed, other.stratify, other.only)

    def progress(self, labels: RunLabels) -> dict[str, int]:
        """Annotator -> how many of the study's items they reviewed."""
        return {name: sum(name in labels.items[i].by_annotator for i in self.items if i in labels.items)
                for name in labels.annotators}


def stratum_of(key: str, summary: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    if key == "tag":
        tags = summary.get("tags") or []
        return str(tags[0]) if tags else "-"
    if key == "status":
        return str(summary.get("status", ""))
    return str(meta.get(key, "-"))


def allocate(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Proportional shares of ``total`` over strata of ``sizes`` (largest remainders; ties by name)."""
    population = sum(sizes.values())
    exact = {name: total * count / population for name, count in sizes.items()}
    shares = {name: int(value) for name, value in exact.items()}
    rest = sorted(sizes, key=lambda name: (-(exact[name] - shares[name]), name))
    for name in rest[: total - sum(shares.values())]:
        shares[name] += 1
    return shares


def draw(store: RunStore, size: int, seed: int, stratify: str = "", only: str = "all") -> Study:
    """The study's sample (not written); see the module docstring for how it is drawn."""
    if size < 1:
        raise InputError("--size must be at least 1")
    if only not in ONLY:
        raise InputError(f"--only takes one of: {', '.join(ONLY)}")
    summaries = store.summaries()
    ids = store.item_ids()
    items = store.brief_items() if stratify not in ("", "tag", "status") else None
    candidates = [i for i in sorted(summaries) if summaries[i].get("status") not in UNJUDGED
                  and (only == "all" or summaries[i].get("status") != "correct")]
    if not candidates:
        raise InputError(f"run {store.label} has no {'wrong ' if only == 'wrong' else ''}scored item to sample")
    if items is not None and not any(stratify in items[i].meta for i in candidates):
        known = sorted({k for i in candidates[:200] for k in items[i].meta})
        raise InputError(f"cannot stratify by {stratify!r}: use tag, status or an item field ({', '.join(known)})")
    groups: dict[str, list[int]] = {}
    for index in candidates:
        key = stratum_of(stratify, summaries[index], items[index].meta if items is not None else {}) if stratify else "*"
        groups.setdefault(key, []).append(index)
    shares = allocate({k: len(v) for k, v in groups.items()}, min(size, len(candidates)))
    rng = random.Random(seed)
    chosen: list[int] = []
    for name in sorted(groups):
        chosen += rng.sample(groups[name], shares[name])
    strata = {name: shares[name] for name in sorted(groups) if shares[name]} if stratify else {}
    return Study(size=size, seed=seed, stratify=stratify, only=only, items=[ids[i] for i in sorted(chosen)],
                 strata=strata, created=now_iso())


def create(store: RunStore, size: int, seed: int, stratify: str = "", only: str = "all",
           replace: bool = False) -> tuple[Study, bool]:
    """Draw and write the run's study; (study, written). The same draw again writes nothing."""
    study = draw(store, size, seed, stratify, only)
    existing = load(store)
    if existing is not None and not replace:
        if existing.same_draw(study):
            return existing, False
        raise InputError(f"run {store.label} already has a study ({describe(existing)}); "
                         "--replace replaces it (labels are kept)")
    atomic_write_bytes(store.folder / FILE, json.dumps(asdict(study), ensure_ascii=False, indent=1).encode("utf-8"))
    return study, True


def load(store: RunStore) -> Study | None:
    path = store.folder / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Study(**data)
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, TypeError) as exc:
        raise InputError(f"{path} is not a study file ({exc})") from None


def describe(study: Study) -> str:
    how = f", stratified by {study.stratify}" if study.stratify else ""
    which = ", wrong items only" if study.only == "wrong" else ""
    return f"{len(study.items)} items, seed {study.seed}{how}{which}"
