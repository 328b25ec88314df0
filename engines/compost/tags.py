"""The CompoST error taxonomy and the tagger: each difference of the optimal alignment, with its evidence.

Evidence lines name the triples that really differ: the alignment (``compare.align``)
pairs every output triple with the gold triple it plays, so a ``wrong_property`` line
never names a gold triple the output also has. Output triples are shown with their own
variable names, gold triples with the gold's.
"""

from __future__ import annotations

from engines.compost.compare import ANSWER, PARAPHRASE, SEMANTIC_FEATURES, Alignment, Pair, align
from engines.compost.parse import Parsed
from engines.sparql.pattern import RDF_TYPE, Triple
from engines.core import Tag, TagType
from engines.taxonomy import Taxonomy, format_violation, unparseable

TYPE = RDF_TYPE

TAXONOMY = Taxonomy((
    TagType("wrong_property", "Wrong property", "a triple uses a property the gold does not use there", "triples"),
    TagType("inverted_direction", "Inverted direction", "a triple has subject and object swapped", "triples"),
    TagType("missing_triple", "Missing triple", "a gold relation triple has no counterpart in the output", "triples"),
    TagType("extra_triple", "Extra triple", "an output triple the gold does not have", "triples"),
    TagType("extra_construct", "Construct beyond the pattern",
            "FILTER, OPTIONAL, UNION, BIND, a modifier...: a construct the gold (a basic graph pattern) does not "
            "have; it is no triple and is not aligned as one", "form"),
    TagType("wrong_entity", "Wrong entity", "a gold entity is missing or replaced", "entities"),
    TagType("wrong_join", "Wrong join", "a triple connects to a different variable than in the gold", "triples"),
    TagType("missing_type_constraint", "Missing type constraint", "a gold rdf:type constraint is absent",
            "triples"),
    TagType("wrong_projection", "Wrong projection", "the query does not select exactly the answer variable",
            "form"),
    TagType("turned_reading", "Facts from their other end",
            "the query states the gold's facts only through an inverse or symmetric property read the other way; "
            "without an endpoint the item is set aside (DBpedia stores such facts one way round only in part)",
            "triples"),
    TagType("empty_result", "Empty result", "the query returns no rows", "execution"),
    TagType("query_failed", "Query failed", "the query was refused, timed out or did not run", "execution"),
    unparseable("no SPARQL query could be read from the reply", "form"),
    format_violation("prose around the query, or not a SELECT query", "form"),
    TagType("undeclared_prefix", "Undeclared prefix",
            "a prefix neither declared nor bound by the authors' scorer (the query was invalid for them)", "form"),
))
LABELS = TAXONOMY.labels


tag = TAXONOMY.tag


def short(term: str) -> str:
    """A compact rendering of a term for evidence and tables (dbo:spouse, dbr:X, ?v)."""
    if term == TYPE:
        return "a"
    for iri, prefix in (("http://dbpedia.org/ontology/", "dbo:"), ("http://dbpedia.org/resource/", "dbr:"),
                        ("http://dbpedia.org/property/", "dbp:")):
        if term.startswith("<" + iri):
            return prefix + term[len(iri) + 1:-1]
    return term


def show(t: Triple) -> str:
    return " ".join(short(x) for x in t)


def _where(output: Triple, gold: Triple) -> str:
    return f"{show(output)} where the gold has {show(gold)}"


def pair_tags(pair: Pair, renaming: dict[str, str]) -> list[Tag]:
    """What one aligned pair says: nothing when it matches, else one tag per kind of difference."""
    g, o = pair.gold, pair.output
    if g is None:
        assert o is not None, "a pair holds a gold triple, an output triple or both"
        return [tag("extra_triple", f"{show(o)} has no counterpart in the gold")]
    if o is None:
        if g[1] == TYPE:
            return [tag("missing_type_constraint", f"no {show(g)}")]
        return [tag("missing_triple", f"{show(g)} has no counterpart in the output")]
    if pair.cost == 0:
        return []
    s, p, obj = (o[2], o[1], o[0]) if pair.inverted else o
    tags: list[Tag] = []
    if pair.paraphrase:
        same = "the same fact read the other way" if pair.cost == PARAPHRASE else "read the other way"
        tags.append(tag("wrong_property", f"{_where(o, g)}: an inverse-property paraphrase ({short(p)} is the "
                                          f"inverse of {short(g[1])}), {same}"))
    elif pair.inverted and p == g[1]:
        tags.append(tag("inverted_direction", f"{_where(o, g)}: subject and object swapped"))
    if g[1] == TYPE:
        if obj != g[2]:
            tags.append(tag("missing_type_constraint", f"{_where(o, g)}"))
        return tags
    if not pair.paraphrase and p != g[1]:
        tags.append(tag("wrong_property", _where(o, g)))
    for mine, theirs in ((s, g[0]), (obj, g[2])):
        if mine.startswith("?") and theirs.startswith("?"):
            if renaming.get(mine) != theirs:
                tags.append(tag("wrong_join", f"{_where(o, g)}: {mine} plays {renaming.get(mine, 'no gold variable')} "
                                              f"elsewhere, not {theirs}"))
        elif mine != theirs:
            what = "a variable" if mine.startswith("?") else short(mine)
            tags.append(tag("wrong_entity", f"{_where(o, g)}: {what} instead of "
                                            f"{'a variable' if theirs.startswith('?') else short(theirs)}"))
    return tags


def triple_tags(parsed: Parsed, gold: list[Triple], alignment: Alignment | None = None) -> list[Tag]:
    """Differences between the output's and the gold's queries, each with its evidence."""
    alignment = alignment or align(parsed.triples, gold, parsed.projection)
    tags: list[Tag] = []
    if len(parsed.projection) != 1 or parsed.projection[0] == "*":
        tags.append(tag("wrong_projection", "SELECT " + " ".join(parsed.projection or ["(nothing)"])))
    elif alignment.renaming.get(parsed.projection[0]) != ANSWER:
        plays = alignment.renaming.get(parsed.projection[0])
        tags.append(tag("wrong_projection", f"SELECT {parsed.projection[0]}, which plays "
                                            f"{plays or 'no gold variable'}, not the answer {ANSWER}"))
    if parsed.prose:
        tags.append(tag("format_violation", "text around the query (accepted under extract=lenient)"))
    if parsed.form != "SELECT":
        tags.append(tag("format_violation", f"{parsed.form} query, not SELECT"))
    if parsed.undeclared:
        tags.append(tag("undeclared_prefix", "undeclared " + ", ".join(p + ":" for p in parsed.undeclared)
                        + " (accepted under extract=lenient)"))
    for pair in alignment.pairs:
        tags.extend(pair_tags(pair, alignment.renaming))
    extra = sorted(parsed.features & SEMANTIC_FEATURES - {"ASK", "CONSTRUCT", "DESCRIBE"})
    if extra:
        tags.append(tag("extra_construct", "constructs beyond a basic graph pattern: " + ", ".join(extra)))
    return tags

