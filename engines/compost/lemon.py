"""Importing a Lemon lexicon (the Turtle files released with CompoST) as a generator lexicon.

The files are read with pyoxigraph's Turtle parser. What the generator uses: the
NounPPFrame senses of DBpedia properties (each names one side of its property; the two
sides of a property are paired into an ``Entry``), the nouns of classes (rdf:type) and the
adjectives of countries and nationalities.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph

from engines.compost.lexicon import (ADJECTIVE_PROPS, ADJECTIVES, DBO, DBP, ENTRIES, RDF_TYPE, TYPES, Entry, Lexicon,
                                     Reading)
from engines.core import DataError

# ------------------------------------------------------------------- Turtle

# The released files write prefixed names with "/" in them (``:welsh-/-english_231_155``),
# which Turtle allows only escaped; outside IRIs and strings such a name is escaped before
# parsing (the file then reads as its authors meant it).
_SLASHED_NAME = re.compile(r'<[^>]*>|"(?:[^"\\\n]|\\.)*"|(?<![\w:])((?:[A-Za-z][\w-]*)?:[\w.-]*/[\w./-]*)')


class TurtleError(DataError):
    """A Lemon file is not Turtle, even read leniently."""


def _escape_slashes(text: str) -> str:
    return _SLASHED_NAME.sub(lambda m: m.group(1).replace("/", "\\/") if m.group(1) else m.group(0), text)


def _value(term: pyoxigraph.NamedNode | pyoxigraph.BlankNode | pyoxigraph.Literal) -> str:
    return f"_:{term.value}" if isinstance(term, pyoxigraph.BlankNode) else term.value


def turtle_triples(text: str) -> list[tuple[str, str, str]]:
    """The triples of a Turtle document as (subject, predicate, object) strings: IRIs, ``_:`` blank
    nodes and literals' lexical forms (the lexicon needs neither language tag nor datatype).

    Read by pyoxigraph in lenient mode, after escaping the "/" the released files put in
    prefixed names."""
    try:
        return [(_value(t.subject), t.predicate.value, _value(t.object))
                for t in pyoxigraph.parse(_escape_slashes(text), format=pyoxigraph.RdfFormat.TURTLE, lenient=True)]
    except SyntaxError as exc:
        raise TurtleError(str(exc)) from None


# ------------------------------------------------------------------- Lemon import



@dataclass(frozen=True)
class LemonReading:
    """One NounPPFrame sense: ``side`` is the side of ``prop`` the noun names.

    The frame's copulative argument is the noun's referent ("X is the alma mater of Y")
    and its prepositional adjunct the other node. The sense says which of them is the
    property's subject (``subjOfProp``): "the alma mater of Y" names the object of
    ``Y dbo:almaMater X``, "the song on Y" names the subject of ``X dbo:album Y``.
    """

    prop: str
    side: str  # "obj" or "subj", as the Entry fields
    reading: Reading
    domain: str
    range: str


@dataclass
class LemonLexicon:
    """What the generator can use from a Lemon lexicon, before the two readings are paired."""

    readings: list[LemonReading]
    class_nouns: dict[str, list[str]]  # class IRI -> the written forms of its NounPredicateFrame entries
    adjectives: dict[tuple[str, str], list[str]]  # (country or nationality, value) -> adjectives


def _local(iri: str) -> str:
    return re.split(r"[#/]", iri)[-1]


class _Nodes:
    """The triples of one file by subject and predicate local name (the files' namespaces vary)."""

    def __init__(self, triples: list[tuple[str, str, str]]):
        self.facts: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for s, p, o in triples:
            self.facts[s][_local(p)].append(o)

    def all(self, node: str, key: str) -> list[str]:
        return self.facts[node][key] if node in self.facts else []

    def one(self, node: str, key: str) -> str:
        values = self.all(node, key)
        return values[0] if values else ""

    def kinds(self, node: str) -> set[str]:
        return {_local(t) for t in self.all(node, "type")}

    def written(self, node: str) -> str:
        return self.one(self.one(node, "canonicalForm"), "writtenRep").strip()


def _read_file(nodes: _Nodes, into: LemonLexicon) -> None:
    for entry in [n for n in nodes.facts if "LexicalEntry" in nodes.kinds(n)]:
        form = nodes.written(entry)
        frames = nodes.all(entry, "synBehavior")
        pos = _local(nodes.one(entry, "partOfSpeech"))
        if not form:
            continue
        for sense in nodes.all(entry, "sense"):
            ref = nodes.one(sense, "reference")
            on, value = nodes.one(ref, "onProperty"), nodes.one(ref, "hasValue")
            if on == RDF_TYPE and pos == "noun":  # the class entries' predicate frames carry no type
                into.class_nouns.setdefault(value, []).append(form)
            elif on in ADJECTIVE_PROPS and pos == "adjective":
                into.adjectives.setdefault((on, value), []).append(form)
            elif not on and ref.startswith((DBO, DBP)):
                condition = nodes.one(sense, "condition")
                for frame in (f for f in frames if "NounPPFrame" in nodes.kinds(f)):
                    copula = nodes.one(frame, "copulativeArg")
                    prep = nodes.written(nodes.one(nodes.one(frame, "prepositionalAdjunct"), "marker"))
                    side = ("subj" if copula in nodes.all(sense, "subjOfProp")
                            else "obj" if copula in nodes.all(sense, "objOfProp") else "")
                    if prep and side:
                        into.readings.append(LemonReading(ref, side, Reading(form, prep),
                                                          nodes.one(condition, "propertyDomain"),
                                                          nodes.one(condition, "propertyRange")))


def read_lemon(directory: Path) -> LemonLexicon:
    """NounPPFrame readings, class nouns and country/nationality adjectives of every ``*.ttl`` below
    ``directory`` (sorted, so the result does not depend on the file system's order)."""
    paths = sorted(Path(directory).rglob("*.ttl"))
    if not paths:
        raise DataError(f"{directory}: no Lemon lexicon (*.ttl) files")
    found = LemonLexicon([], {}, {})
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            _read_file(_Nodes(turtle_triples(text)), found)
        except TurtleError as exc:
            raise TurtleError(f"{path.name}: {exc}") from None
    return found


def _camel_words(iri: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", _local(iri)).lower()


def preferred_noun(cls: str, forms: list[str]) -> str:
    """One noun per class: the class name's own words if an entry has them ("film", not "movie",
    for dbo:Film), else the most frequent form (the lexicon repeats its entries), then alphabetical."""
    hint = _camel_words(cls)
    if hint in forms:
        return hint
    return min(Counter(forms).items(), key=lambda kv: (-kv[1], kv[0]))[0]


def preferred_adjective(forms: list[str]) -> str:
    """One adjective per value: capitalised forms first ("German", not "german"), then the most frequent;
    capitalised in any case (the lexicon also has only-lowercase entries such as "andorran")."""
    form = min(Counter(forms).items(), key=lambda kv: (not kv[0][:1].isupper(), -kv[1], kv[0]))[0]
    return form[:1].upper() + form[1:]


def _other_side(prop: str, side: str, readings: list[LemonReading], nouns: dict[str, str]) -> Reading:
    """The missing reading of a property that has imported readings on one side only.

    The default lexicon's hand-written reading when it knows the property; otherwise one
    derived from an imported reading and the condition's class nouns ("entity" without one):
    for "the alma mater of X" (object side), "the person with the alma mater X"; for "the
    song on X" (subject side), "the album of the song X".
    """
    default = next((e for e in ENTRIES if e.prop == prop), None)
    if default is not None:
        return default.subj if side == "obj" else default.obj
    first = next(r for r in readings if r.prop == prop and r.side == side)
    if side == "obj":
        return Reading(nouns.get(first.domain, "entity"), f"with the {first.reading.noun}")
    return Reading(nouns.get(first.range, "entity"), f"of the {first.reading.noun}")


def paired_entries(lemon: LemonLexicon, nouns: dict[str, str]) -> list[Entry]:
    """Entries with both readings: imported readings of the two sides paired in turn, a missing side
    filled by ``_other_side``."""
    sides: dict[str, dict[str, list[Reading]]] = defaultdict(lambda: {"obj": [], "subj": []})
    for r in lemon.readings:
        if r.reading not in sides[r.prop][r.side]:
            sides[r.prop][r.side].append(r.reading)
    entries = []
    for prop, both in sorted(sides.items()):
        obj = both["obj"] or [_other_side(prop, "subj", lemon.readings, nouns)]
        subj = both["subj"] or [_other_side(prop, "obj", lemon.readings, nouns)]
        entries += [Entry(prop, obj[i % len(obj)], subj[i % len(subj)]) for i in range(max(len(obj), len(subj)))]
    return entries


def lemon_lexicon(lemon: LemonLexicon) -> Lexicon:
    """The default lexicon extended by a read Lemon lexicon; its class nouns and adjectives win."""
    nouns = {**TYPES, **{cls: preferred_noun(cls, forms) for cls, forms in lemon.class_nouns.items()}}
    adjectives = {**ADJECTIVES, **{key: preferred_adjective(forms) for key, forms in lemon.adjectives.items()}}
    return Lexicon([*ENTRIES, *paired_entries(lemon, nouns)], nouns, adjectives)


def load_lemon(directory: Path | str) -> Lexicon:
    """The default lexicon plus every usable entry of the Lemon files under ``directory``."""
    return lemon_lexicon(read_lemon(Path(directory)))
