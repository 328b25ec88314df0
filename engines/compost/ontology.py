"""Reading a query modulo DBpedia property facts: the same fact stated with another property or from its other end.

The facts are data (``data/ontology_facts.tsv``, each row with its source): ``same``
(either property may stand for the other: ``dbp:starring`` / ``dbo:starring``), ``inverse``
(``?x dbo:parent Y`` states ``Y dbo:child ?x``) and ``symmetric`` (``dbo:spouse`` either way
round). ``unified`` writes each ``same`` property one way; ``canonical`` rewrites a pattern
into one spelling per fact (a ``same`` property into the first of its row, an inverse triple
into its row's first property read the other way); ``readings`` gives every orientation of the pattern's symmetric triples, so that two
patterns state the same facts when some reading of one maps onto the canonical other.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from engines.sparql.pattern import Triple

FACTS = Path(__file__).with_name("data") / "ontology_facts.tsv"
MAX_SYMMETRIC = 6  # symmetric triples whose orientations are tried (2**6 readings at most)


@dataclass(frozen=True)
class Facts:
    same: dict[str, str]  # property -> the one that stands for both
    inverse: dict[str, str]  # property -> the property it is the inverse of (only the second of a row)
    symmetric: frozenset[str]
    sources: dict[tuple[str, str, str], str]  # (kind, property, other) -> where the fact comes from


@lru_cache(maxsize=1)
def facts() -> Facts:
    """The table, read once (``#`` lines are comments; a malformed row is a packaging error)."""
    same: dict[str, str] = {}
    inverse: dict[str, str] = {}
    symmetric: set[str] = set()
    sources: dict[tuple[str, str, str], str] = {}
    for line in FACTS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, prop, other, source = line.split("\t")
        a, b = f"<{prop}>", f"<{other}>" if other != "-" else ""
        if kind == "same":
            same[b] = a
        elif kind == "inverse":
            inverse[b] = a
        elif kind == "symmetric":
            symmetric.add(a)
        else:
            raise ValueError(f"{FACTS.name}: unknown kind {kind!r}")
        sources[(kind, a, b)] = source
    return Facts(same, inverse, frozenset(symmetric), sources)


def unified(triples: list[Triple]) -> list[Triple]:
    """``same`` properties in one spelling, nothing turned round."""
    table = facts()
    return sorted({(s, table.same.get(p, p), o) for s, p, o in triples})


def canonical(triples: list[Triple]) -> list[Triple]:
    """One spelling per fact: ``same`` properties unified, inverse triples turned round."""
    table = facts()
    out = []
    for s, p, o in unified(triples):
        if p in table.inverse:
            s, p, o = o, table.inverse[p], s
        out.append((s, p, o))
    return sorted(set(out))


def readings(triples: list[Triple]) -> Iterator[list[Triple]]:
    """The canonical pattern with each of its symmetric triples either way round."""
    base = canonical(triples)
    table = facts()
    flips = [i for i, (_, p, _) in enumerate(base) if p in table.symmetric][:MAX_SYMMETRIC]
    for choice in itertools.product((False, True), repeat=len(flips)):
        turned = list(base)
        for flip, i in zip(choice, flips):
            if flip:
                s, p, o = turned[i]
                turned[i] = (o, p, s)
        yield sorted(set(turned))

