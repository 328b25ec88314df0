"""The lexicon the generator verbalises with: one or more entries per DBpedia property.

Each entry names the property's two readings, because a pattern edge is verbalised from
the side nearer to the answer: ``subj`` when the answer side is the triple's subject
("the person born in Melbourne" for ``?x dbo:birthPlace dbr:Melbourne``) and ``obj``
when it is the object ("the birth place of Mark" for ``dbr:Mark dbo:birthPlace ?x``).
Entries are chosen once per base pattern, so a pattern and all its sub-patterns use the
same words (the paper's consistency requirement). Lemon lexica can be imported too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DBO = "http://dbpedia.org/ontology/"
DBP = "http://dbpedia.org/property/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


@dataclass(frozen=True)
class Reading:
    """A NounPPFrame reading: noun phrase head and the preposition before the other node."""

    noun: str
    prep: str


@dataclass(frozen=True)
class Entry:
    prop: str  # full IRI
    obj: Reading  # the answer side is the object: "the <noun> <prep> <subject>"
    subj: Reading  # the answer side is the subject: "the <noun> <prep> <object>"


def _e(local: str, obj: tuple[str, str], subj: tuple[str, str]) -> Entry:
    return Entry(DBO + local, Reading(*obj), Reading(*subj))


_ENTRIES = [
    _e("birthPlace", ("birth place", "of"), ("person born", "in")),
    _e("birthPlace", ("birthplace", "of"), ("native", "of")),
    _e("deathPlace", ("death place", "of"), ("person decedent", "at")),
    _e("spouse", ("spouse", "of"), ("spouse", "of")),
    _e("spouse", ("husband or wife", "of"), ("person married", "to")),
    _e("child", ("child", "of"), ("parent", "of")),
    _e("parent", ("parent", "of"), ("child", "of")),
    _e("relative", ("relative", "of"), ("relative", "of")),
    _e("team", ("team", "of"), ("player", "of")),
    _e("country", ("country", "of"), ("place located", "in")),
    _e("almaMater", ("alma mater", "of"), ("alumnus", "of")),
    _e("occupation", ("occupation", "of"), ("person working", "as")),
    _e("recordLabel", ("record label", "of"), ("release", "of")),
    _e("associatedBand", ("associated band", "of"), ("band associated", "with")),
    _e("associatedMusicalArtist", ("associated artist", "of"), ("artist associated", "with")),
    _e("hometown", ("hometown", "of"), ("person", "from the town")),
    _e("starring", ("star", "of"), ("film", "starring")),
    _e("producer", ("producer", "of"), ("work produced", "by")),
    _e("writer", ("writer", "of"), ("work written", "by")),
    _e("director", ("director", "of"), ("film directed", "by")),
    _e("author", ("author", "of"), ("book written", "by")),
    _e("successor", ("successor", "of"), ("predecessor", "of")),
    _e("predecessor", ("predecessor", "of"), ("successor", "of")),
    _e("award", ("award", "of"), ("winner", "of")),
    _e("influencedBy", ("influence", "of"), ("person influenced", "by")),
    _e("location", ("location", "of"), ("thing located", "in")),
    _e("isPartOf", ("whole", "of"), ("part", "of")),
    _e("language", ("language", "of"), ("work", "in")),
    _e("managerClub", ("club", "managed by"), ("manager", "of")),
    _e("nationality", ("nationality", "of"), ("citizen", "of")),
    _e("residence", ("residence", "of"), ("resident", "of")),
    _e("headquarter", ("headquarters", "of"), ("organisation headquartered", "in")),
    _e("capital", ("capital", "of"), ("state", "with the capital")),
    _e("genre", ("genre", "of"), ("work", "in the genre")),
    _e("battle", ("battle", "of"), ("combatant", "in")),
    _e("bandMember", ("band", "with the member"), ("member", "of")),
    _e("formerBandMember", ("former band", "of"), ("former member", "of")),
]

# rdf:type verbalisations ("that is a politician"): the classes the generator may use.
TYPES: dict[str, str] = {DBO + name: words for name, words in [
    ("SoccerPlayer", "soccer player"), ("MusicalArtist", "musical artist"), ("Album", "album"),
    ("Single", "single"), ("Song", "song"), ("Film", "film"), ("Settlement", "settlement"),
    ("Politician", "politician"), ("Band", "band"), ("TelevisionShow", "television show"),
    ("OfficeHolder", "office holder"), ("SoccerManager", "soccer manager"), ("SoccerClub", "soccer club"),
    ("AdministrativeRegion", "administrative region"), ("City", "city"), ("Company", "company"),
    ("MilitaryPerson", "military person"), ("Scientist", "scientist"), ("Town", "town"),
    ("IceHockeyPlayer", "ice hockey player"), ("Writer", "writer"), ("Book", "book"),
    ("University", "university"), ("RecordLabel", "record label"), ("SportsTeam", "sports team"),
    ("MilitaryConflict", "military conflict"), ("MusicGenre", "music genre"), ("Country", "country"),
    ("Royalty", "royal"), ("Athlete", "athlete"), ("Village", "village"), ("Actor", "actor"),
]}


class Lexicon:
    """Entries by property IRI, plus the type verbalisations."""

    def __init__(self, entries: list[Entry], types: dict[str, str]):
        self.by_prop: dict[str, list[Entry]] = {}
        for entry in entries:
            self.by_prop.setdefault(entry.prop, []).append(entry)
        self.types = dict(types)

    @property
    def props(self) -> frozenset[str]:
        return frozenset(self.by_prop)

    def type_phrase(self, cls: str) -> str:
        words = self.types[cls]
        return ("an " if words[0] in "aeiou" else "a ") + words


def default_lexicon() -> Lexicon:
    return Lexicon(list(_ENTRIES), TYPES)


# ------------------------------------------------------------------- Lemon import

_REF_RE = re.compile(r"lemon:reference\s*<([^>]+)>")
_WRITTEN_RE = re.compile(r'lemon:writtenRep\s*"([^"]+)"@en')


def lemon_reading(text: str) -> tuple[str, Reading] | None:
    """(property, reading) of one Lemon NounPPFrame Turtle file, with a small pattern reader.

    Only what the generator needs: the property (``lemon:reference``), the noun (the
    first ``writtenRep``: the canonical form) and the preposition (the frame marker's
    ``writtenRep``, written last). A NounPPFrame puts the subject after the
    preposition ("the abbreviation of X"), so this is the property's object reading.
    """
    refs = [r for r in _REF_RE.findall(text) if r.startswith((DBO, DBP))]
    written = _WRITTEN_RE.findall(text)
    if "NounPPFrame" not in text or not refs or len(written) < 2:
        return None
    return refs[0], Reading(written[0], written[-1])


def load_lemon(directory: Path) -> Lexicon:
    """The default lexicon plus one entry per Lemon NounPPFrame under ``directory``.

    An imported reading gives the object side; the subject side is taken from a default
    entry of the same property, so only properties the default lexicon knows are added
    (the generator needs both readings of every property it walks).
    """
    entries = list(_ENTRIES)
    defaults = {e.prop: e for e in _ENTRIES}
    for path in sorted(Path(directory).rglob("*.ttl")):
        found = lemon_reading(path.read_text(encoding="utf-8", errors="replace"))
        if found and found[0] in defaults:
            entries.append(Entry(found[0], found[1], defaults[found[0]].subj))
    return Lexicon(entries, TYPES)
