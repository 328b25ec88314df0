"""The CompoST error taxonomy and the tagger, comparing the output's triples with the gold's."""

from __future__ import annotations

from collections import Counter

from engines.compost.compare import SEMANTIC_FEATURES, Triple, align
from engines.compost.lexicon import RDF_TYPE
from engines.compost.parse import Parsed
from engines.core import Tag, TagType

TYPE = f"<{RDF_TYPE}>"

TAXONOMY = [
    TagType("wrong_property", "wrong property", "a triple uses a property the gold does not use there", "triples"),
    TagType("inverted_direction", "inverted direction", "a triple has subject and object swapped", "triples"),
    TagType("missing_triple", "missing triple", "fewer relation triples than the gold", "triples"),
    TagType("extra_triple", "extra triple", "more relation triples than the gold, or other constructs", "triples"),
    TagType("wrong_entity", "wrong entity", "a gold entity is missing or replaced", "entities"),
    TagType("missing_type_constraint", "missing type constraint", "a gold rdf:type constraint is absent",
            "triples"),
    TagType("wrong_projection", "wrong projection", "the query does not select exactly the answer variable",
            "form"),
    TagType("empty_result", "empty result", "the query returns no rows", "execution"),
    TagType("query_failed", "query failed", "the query was refused, timed out or did not run", "execution"),
    TagType("unparseable", "unparseable", "no SPARQL query could be read from the reply", "form"),
    TagType("format_violation", "format violation", "prose around the query, or not a SELECT query", "form"),
]
LABELS = {t.code: t.label for t in TAXONOMY}


def tag(code: str, evidence: str) -> Tag:
    return Tag(code, LABELS[code], evidence)


def short(term: str) -> str:
    """A compact rendering of a term for evidence and tables (dbo:spouse, dbr:X, ?v)."""
    for iri, prefix in (("http://dbpedia.org/ontology/", "dbo:"), ("http://dbpedia.org/resource/", "dbr:"),
                        ("http://dbpedia.org/property/", "dbp:"), (RDF_TYPE, "a")):
        if term.startswith("<" + iri):
            return prefix + term[len(iri) + 1:-1]
    return term


def show(t: Triple) -> str:
    return " ".join(short(x) for x in t)


def triple_tags(parsed: Parsed, gold: list[Triple]) -> list[Tag]:
    """Differences between the output's and the gold's triple patterns, each with its evidence."""
    tags: list[Tag] = []
    g_rel = [t for t in gold if t[1] != TYPE]
    o_rel = [t for t in parsed.triples if t[1] != TYPE]
    if len(parsed.projection) != 1 or parsed.projection[0] == "*":
        tags.append(tag("wrong_projection", "SELECT " + " ".join(parsed.projection or ["(nothing)"])))
    if parsed.prose:
        tags.append(tag("format_violation", "text around the query"))
    not_select = sorted(parsed.features & {"ASK", "CONSTRUCT", "DESCRIBE"})
    if not_select:
        tags.append(tag("format_violation", f"{not_select[0]} query, not SELECT"))
    for g, o in align(o_rel, g_rel):
        if g is None or o is None:
            continue
        if g[1] != o[1]:
            tags.append(tag("wrong_property", f"{show(o)} where the gold has {show(g)}"))
        elif (o[0], o[2]) != (g[0], g[2]) and (o[2] == g[0] or o[0] == g[2]):
            tags.append(tag("inverted_direction", f"{show(o)} where the gold has {show(g)}"))
    if len(o_rel) < len(g_rel):
        tags.append(tag("missing_triple", f"{len(o_rel)} relation triples, the gold has {len(g_rel)}"))
    extra = sorted(parsed.features & SEMANTIC_FEATURES)
    if len(o_rel) > len(g_rel) or extra:
        what = f"{len(o_rel)} relation triples, the gold has {len(g_rel)}" if len(o_rel) > len(g_rel) else ""
        tags.append(tag("extra_triple", "; ".join(x for x in (what, " ".join(extra)) if x)))
    g_ents = Counter(x for t in g_rel for x in (t[0], t[2]) if not x.startswith("?"))
    o_ents = Counter(x for t in o_rel for x in (t[0], t[2]) if not x.startswith("?"))
    missing = sorted(set(g_ents) - set(o_ents))
    if missing:
        tags.append(tag("wrong_entity", "missing " + ", ".join(short(m) for m in missing)))
    o_types = {t[2] for t in parsed.triples if t[1] == TYPE}
    lost = sorted({t[2] for t in gold if t[1] == TYPE} - o_types)
    if lost:
        tags.append(tag("missing_type_constraint", "no " + ", ".join(short(c) for c in lost)))
    return tags
