"""Offline replies: the gold query, or one with a realistic SPARQL mistake of the taxonomy."""

from __future__ import annotations

import random

from engines.compost.lexicon import DBO, RDF_TYPE
from engines.compost.ontology import facts
from engines.core import Item, SimOptions

TYPE = f"<{RDF_TYPE}>"
SIMULATED = ("wrong_property", "inverted_direction", "missing_triple", "wrong_entity", "missing_type_constraint",
             "wrong_projection", "format_violation", "unparseable")
SWAPS = [f"<{DBO}{p}>" for p in ("birthPlace", "deathPlace", "spouse", "child", "team", "country", "genre")]


def oracle(item: Item) -> str:
    return str(item.gold["query"])


def render(projection: str, triples: list[list[str]]) -> str:
    return f"SELECT {projection} WHERE {{ " + " ".join(f"{s} {p} {o} ." for s, p, o in triples) + " }"


def inject(item: Item, code: str, rng: random.Random) -> str | None:
    """The gold query with mistake ``code``, or None when this item cannot show it."""
    triples = [list(t) for t in item.gold["triples"]]
    rel = [k for k, t in enumerate(triples) if t[1] != TYPE]
    types = [k for k, t in enumerate(triples) if t[1] == TYPE]
    if code == "wrong_property":
        k = rng.choice(rel)
        triples[k][1] = rng.choice([p for p in SWAPS if p != triples[k][1]])
    elif code == "inverted_direction":
        turnable = [k for k in rel if f"{triples[k][1]}" not in facts().symmetric]  # spouse either way is no mistake
        if not turnable:
            return None
        k = rng.choice(turnable)
        triples[k][0], triples[k][2] = triples[k][2], triples[k][0]
    elif code == "missing_triple":
        if len(rel) < 2:
            return None
        del triples[rel[-1]]
    elif code == "wrong_entity":
        ents = [k for k in rel if not triples[k][0].startswith("?") or not triples[k][2].startswith("?")]
        k = rng.choice(ents)
        side = 0 if not triples[k][0].startswith("?") else 2
        triples[k][side] = "<http://dbpedia.org/resource/Nowhere>"
    elif code == "missing_type_constraint":
        if not types:
            return None
        del triples[rng.choice(types)]
    elif code == "wrong_projection":
        others = sorted({x for t in triples for x in (t[0], t[2]) if x.startswith("?") and x != "?result"})
        extra = others[0] if others else "?p"
        if not others:
            triples.append(["?result", "?p", "?o"])
            extra = "?p"
        return render(f"?result {extra}", triples)
    elif code == "format_violation":
        return f"Sure! Here is the query:\n```sparql\n{item.gold['query']}\n```\nIt finds the answer."
    elif code == "unparseable":
        return "I am sorry, I cannot write a query for this question."
    return render("?result", triples)


def simulate(item: Item, options: SimOptions, seed: int) -> str:
    rng = random.Random(seed)
    if options.error:
        codes = [options.error]
    elif rng.random() < options.error_rate:
        codes = rng.sample(SIMULATED, len(SIMULATED))
    else:
        return oracle(item)
    for code in codes:
        reply = inject(item, code, rng) if code in SIMULATED else None
        if reply is not None:
            return reply
    return oracle(item)
