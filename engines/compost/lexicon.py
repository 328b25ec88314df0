"""The lexicon the generator verbalises with: entries per DBpedia property, and the
words of the "that" clauses.

Each entry names the property's two readings, because a pattern edge is verbalised from
the side nearer to the answer: ``subj`` when the answer side is the triple's subject
("the person born in Melbourne" for ``?x dbo:birthPlace dbr:Melbourne``) and ``obj``
when it is the object ("the birth place of Mark" for ``dbr:Mark dbo:birthPlace ?x``).
Entries are chosen once per base pattern, so a pattern and all its sub-patterns use the
same words (the paper's consistency requirement).

The "that" clauses verbalise facts about a node that are not pattern edges (paper
section 3.2): its rdf:type ("that is a politician": the class noun), its dbo:country
or dbo:nationality ("that is German": the country's adjective) and its dbo:industry
("that works in the software industry": the industry's label, no lexicon entry).

Lemon lexica (Turtle files as released with CompoST) are read with pyoxigraph's Turtle
parser; see ``load_lemon``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pyoxigraph

from engines.core import DataError

DBO = "http://dbpedia.org/ontology/"
DBP = "http://dbpedia.org/property/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DBR = "http://dbpedia.org/resource/"
COUNTRY, NATIONALITY, INDUSTRY = DBO + "country", DBO + "nationality", DBO + "industry"
ADJECTIVE_PROPS = (COUNTRY, NATIONALITY)  # verbalised "is <adjective>"
CLAUSE_PROPS = (RDF_TYPE, COUNTRY, NATIONALITY, INDUSTRY)  # the facts a "that" clause may verbalise


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


# rdf:type verbalisations ("that is a politician"): the class noun of the released Lemon lexicon
# (nouns/NounPredicateFrame-*, one per class by ``preferred_noun``) for every class the bundled
# graph has; ``load_lemon`` reads the same entries.
TYPES: dict[str, str] = {DBO + name: words for name, words in [
    ("Academic", "academic person"), ("Actor", "actor"), ("AdministrativeRegion", "administrative region"),
    ("Agent", "agent"), ("Aircraft", "aircraft"), ("Airline", "airline"), ("Airport", "airport"),
    ("Album", "album"), ("Ambassador", "ambassador"), ("AmericanFootballPlayer", "american football player"),
    ("AmericanFootballTeam", "american football team"),
    ("AmusementParkAttraction", "amusement park attraction"), ("AnatomicalStructure", "anatomical structure"),
    ("Anime", "anime"), ("Architect", "architect"), ("ArchitecturalStructure", "architectural structure"),
    ("ArtificialSatellite", "artificial satellite"), ("Artist", "artist"),
    ("ArtistDiscography", "artist discography"), ("Athlete", "athlete"), ("Automobile", "automobile"),
    ("Award", "award"), ("Band", "band"), ("Bank", "bank"), ("BaseballPlayer", "baseball player"),
    ("BaseballTeam", "baseball team"), ("BasketballPlayer", "basketball player"),
    ("BasketballTeam", "basketball team"), ("BeautyQueen", "beauty queen"), ("Bird", "bird"),
    ("BodyOfWater", "body of water"), ("Book", "book"), ("Boxer", "boxer"),
    ("BroadcastNetwork", "broadcast network"), ("Broadcaster", "broadcaster"), ("Castle", "castle"),
    ("ChemicalCompound", "chemical compound"), ("ChristianBishop", "christian bishop"), ("City", "city"),
    ("CityDistrict", "city district"), ("College", "college"), ("CollegeCoach", "college coach"),
    ("Colour", "colour"), ("Comedian", "comedian"), ("ComicsCharacter", "comics character"),
    ("ComicsCreator", "comics creator"), ("Company", "company"), ("Congressman", "congress man"),
    ("Continent", "continent"), ("Convention", "convention"), ("Country", "country"),
    ("Cricketer", "cricketer"), ("Criminal", "criminal"), ("Dam", "dam"), ("Device", "device"),
    ("Disease", "disease"), ("Drug", "drug"), ("Economist", "economist"), ("Election", "election"),
    ("Engineer", "engineer"), ("EthnicGroup", "ethnic group"), ("Eukaryote", "eukaryote"), ("Event", "event"),
    ("FictionalCharacter", "fictional character"), ("FigureSkater", "figure skater"), ("Film", "film"),
    ("Food", "food"), ("FootballLeagueSeason", "football league season"), ("FootballMatch", "football match"),
    ("FormerMunicipality", "one-time municipality"), ("FormulaOneRacer", "formula one racer"),
    ("GolfLeague", "golf league"), ("GolfPlayer", "golf player"), ("GovernmentAgency", "government agency"),
    ("Governor", "governor"), ("GrandPrix", "grand prix"), ("Grape", "grape"), ("Gymnast", "gymnast"),
    ("HandballPlayer", "handball player"), ("Historian", "historian"), ("HockeyTeam", "hockey team"),
    ("Holiday", "holiday"), ("HollywoodCartoon", "hollywood cartoon"), ("Horse", "horse"),
    ("HorseRace", "horse race"), ("HorseTrainer", "horse trainer"), ("Hospital", "hospital"),
    ("IceHockeyPlayer", "ice hockey player"), ("InformationAppliance", "information appliance"),
    ("Insect", "insect"), ("Island", "island"), ("Jockey", "jockey"), ("Lake", "lake"),
    ("Language", "language"), ("Legislature", "legislature"), ("Magazine", "magazine"), ("Mammal", "mammal"),
    ("Manga", "manga"), ("MartialArtist", "martial artist"), ("Mayor", "mayor"),
    ("MeanOfTransportation", "mean of transportation"), ("Medician", "medician"),
    ("MilitaryConflict", "military conflict"), ("MilitaryPerson", "military person"),
    ("MilitaryStructure", "military structure"), ("MilitaryUnit", "military unit"), ("Model", "model"),
    ("MotorsportSeason", "motorsport season"), ("Mountain", "mountain"), ("MountainPass", "mountain pass"),
    ("MountainRange", "mountain range"), ("Museum", "museum"), ("MusicGenre", "music genre"),
    ("MusicalArtist", "musical artist"), ("MusicalWork", "musical work"), ("Newspaper", "newspaper"),
    ("Noble", "noble"), ("OfficeHolder", "office holder"), ("OlympicEvent", "olympic event"),
    ("Organisation", "organisation"), ("Park", "park"), ("Person", "person"),
    ("PersonFunction", "person function"), ("Philosopher", "philosopher"), ("Place", "place"),
    ("Plant", "plant"), ("Play", "play"), ("PlayboyPlaymate", "playboy playmate"),
    ("PoliticalParty", "political party"), ("Politician", "politician"), ("PopulatedPlace", "populated place"),
    ("President", "president"), ("PrimeMinister", "prime minister"), ("Prison", "prison"),
    ("ProgrammingLanguage", "programming language"), ("ProtectedArea", "protected area"),
    ("PublicTransitSystem", "public transit system"), ("Publisher", "publisher"), ("Racecourse", "race course"),
    ("RacingDriver", "racing driver"), ("RadioProgram", "radio program"), ("RadioStation", "radio station"),
    ("RailwayLine", "railway line"), ("RecordLabel", "record label"), ("Religious", "religious"),
    ("River", "river"), ("Road", "road"), ("Royalty", "royalty"), ("RugbyClub", "rugby club"),
    ("RugbyPlayer", "rugby player"), ("Saint", "saint"), ("School", "school"), ("Scientist", "scientist"),
    ("ScreenWriter", "screen writer"), ("Sea", "sea"), ("Senator", "senator"), ("Settlement", "settlement"),
    ("Ship", "ship"), ("Single", "single"), ("Skier", "skier"), ("SoccerClub", "soccer club"),
    ("SoccerClubSeason", "soccer club season"), ("SoccerLeague", "soccer league"),
    ("SoccerManager", "soccer manager"), ("SoccerPlayer", "soccer player"), ("SocietalEvent", "societal event"),
    ("Software", "software"), ("Song", "song"), ("Sport", "sport"), ("SportFacility", "sport facility"),
    ("SportsEvent", "sports event"), ("SportsLeague", "sports league"), ("SportsTeam", "sports team"),
    ("SportsTeamMember", "sports team member"), ("Stadium", "stadium"), ("Star", "star"),
    ("Station", "station"), ("Swimmer", "swimmer"), ("TelevisionEpisode", "television episode"),
    ("TelevisionSeason", "television season"), ("TelevisionShow", "television show"),
    ("TelevisionStation", "television station"), ("TennisPlayer", "tennis player"),
    ("TimePeriod", "time period"), ("TopicalConcept", "topical concept"), ("Town", "town"),
    ("TradeUnion", "trade union"), ("University", "university"), ("Venue", "venue"),
    ("VideoGame", "video game"), ("Village", "village"), ("VolleyballPlayer", "volleyball player"),
    ("Website", "website"), ("Work", "work"), ("Wrestler", "wrestler"), ("WrestlingEvent", "wrestling event"),
    ("Writer", "writer"), ("Year", "year"),
]}

# dbo:country / dbo:nationality verbalisations ("that is German"): the adjective of the released
# Lemon lexicon (adjective/*, one per value by ``preferred_adjective``) for every value the bundled
# graph has; both properties take the same adjective.
ADJECTIVES: dict[tuple[str, str], str] = {(prop, DBR + name): words for name, words in [
    ("Afghanistan", "Afghan"), ("Albania", "Albanian"), ("Algeria", "Algerian"), ("Andorra", "Andorran"),
    ("Angola", "Angolan"), ("Argentina", "Argentine"), ("Australia", "Australian"), ("Austria", "Austrian"),
    ("Azerbaijan", "Azerbaijani"), ("Bangladesh", "Bangladeshi"), ("Belarus", "Belarusian"),
    ("Belgium", "Belgian"), ("Benin", "Benin"), ("Bolivia", "Bolivian"), ("Botswana", "Batswana"),
    ("Brazil", "Brazilian"), ("Bulgaria", "Bulgarian"), ("Cambodia", "Cambodian"), ("Canada", "Canadian"),
    ("Chile", "Chilean"), ("China", "Chinese"), ("Colombia", "Colombian"), ("Costa_Rica", "Costa Rican"),
    ("Croatia", "Croatian"), ("Cuba", "Cuban"), ("Czech_Republic", "Czech"), ("Denmark", "Danish"),
    ("Dominican_Republic", "Dominican"), ("Ecuador", "Ecuadorian"), ("Egypt", "Egyptian"),
    ("El_Salvador", "Salvadorian"), ("England", "English"), ("Estonia", "Estonian"), ("Fiji", "Fijian"),
    ("Finland", "Finnish"), ("France", "French"), ("Germany", "German"), ("Ghana", "Ghanaian"),
    ("Greece", "Greek"), ("Guatemala", "Guatemalan"), ("Haiti", "Haitian"), ("Honduras", "Honduran"),
    ("Hungary", "Hungarian"), ("Iceland", "Icelandic"), ("India", "Indian"), ("Indonesia", "Indonesian"),
    ("Iran", "Iranian"), ("Iraq", "Iraqi"), ("Ireland", "Irish"), ("Israel", "Israeli"), ("Italy", "Italian"),
    ("Jamaica", "Jamaican"), ("Japan", "Japanese"), ("Jordan", "Jordanian"), ("Kenya", "Kenyan"),
    ("Kuwait", "Kuwaiti"), ("Laos", "Lao"), ("Latvia", "Latvian"), ("Lebanon", "Lebanese"), ("Libya", "Libyan"),
    ("Lithuania", "Lithuanian"), ("Madagascar", "Malagasy"), ("Malaysia", "Malaysian"), ("Mali", "Malian"),
    ("Malta", "Maltese"), ("Mexico", "Mexican"), ("Mongolia", "Mongolian"), ("Morocco", "Moroccan"),
    ("Mozambique", "Mozambican"), ("Namibia", "Namibian"), ("Nepal", "Nepalese"), ("Netherlands", "Dutch"),
    ("New_Zealand", "New Zealand"), ("Nicaragua", "Nicaraguan"), ("Nigeria", "Nigerian"),
    ("Norway", "Norwegian"), ("Pakistan", "Pakistani"), ("Panama", "Panamanian"), ("Paraguay", "Paraguayan"),
    ("Peru", "Peruvian"), ("Philippines", "Philippine"), ("Poland", "Polish"), ("Portugal", "Portuguese"),
    ("Romania", "Romanian"), ("Russia", "Russian"), ("Saudi_Arabia", "Saudi"), ("Scotland", "Scottish"),
    ("Senegal", "Senegalese"), ("Serbia", "Serbian"), ("Singapore", "Singaporean"), ("Slovakia", "Slovak"),
    ("South_Africa", "South African"), ("South_Korea", "Korean"), ("Spain", "Spanish"),
    ("Sri_Lanka", "Sri Lankan"), ("Sudan", "Sudanese"), ("Sweden", "Swedish"), ("Switzerland", "Swiss"),
    ("Syria", "Syrian"), ("Taiwan", "Taiwanese"), ("Tajikistan", "Tajikistani"), ("Thailand", "Thai"),
    ("Tunisia", "Tunisian"), ("Turkey", "Turkish"), ("Ukraine", "Ukrainian"),
    ("United_Arab_Emirates", "Emirati"), ("United_Kingdom", "British"), ("United_States", "American"),
    ("Uruguay", "Uruguayan"), ("Venezuela", "Venezuelan"), ("Vietnam", "Vietnamese"), ("Wales", "Welsh"),
    ("Zambia", "Zambian"), ("Zimbabwe", "Zimbabwean"),
] for prop in ADJECTIVE_PROPS}

_AN = re.compile(r"(?:[aio]|e(?!u)|u(?!ni|s[eu]))")


def article(words: str) -> str:
    """The indefinite article before ``words`` ("an office holder", "a university", "a eukaryote")."""
    return "an" if _AN.match(words) else "a"


def industry_phrase(label: str) -> str:
    """The PP of "works in the software industry" from an industry's label ("Software", "Video game industry")."""
    words = re.sub(r"\s*\([^)]*\)$", "", label)
    words = re.sub(r"\s+industry$", "", words, flags=re.IGNORECASE)
    if words[1:2].islower():
        words = words[0].lower() + words[1:]
    return f"in the {words} industry"


class Lexicon:
    """Entries by property IRI, class nouns by class IRI and adjectives by (property, value)."""

    def __init__(self, entries: Iterable[Entry], types: dict[str, str],
                 adjectives: dict[tuple[str, str], str]):
        self.by_prop: dict[str, list[Entry]] = {}
        for entry in dict.fromkeys(entries):  # the same entry from two files is one choice, not two
            self.by_prop.setdefault(entry.prop, []).append(entry)
        self.props = frozenset(self.by_prop)  # an attribute: the walk tests it for every hop
        self.types = dict(types)
        self.adjectives = dict(adjectives)

    def type_phrase(self, cls: str) -> str:
        words = self.types[cls]
        return f"{article(words)} {words}"

    def describes(self, prop: str, value: str) -> bool:
        """Whether a "that" clause can verbalise the fact ``?node prop value``."""
        if prop == RDF_TYPE:
            return value in self.types
        if prop == INDUSTRY:
            return value.startswith(DBR)
        return (prop, value) in self.adjectives

    def predicate(self, prop: str, value: str, label: str) -> tuple[str, str]:
        """The fact ``?node prop value`` as (verb, complement) for the EBNF's VP: ("is", "a politician"),
        ("is", "German") or ("works", "in the software industry"); ``label`` names ``value``."""
        if prop == RDF_TYPE:
            return "is", self.type_phrase(value)
        if prop == INDUSTRY:
            return "works", industry_phrase(label)
        return "is", self.adjectives[(prop, value)]


def default_lexicon() -> Lexicon:
    return Lexicon(_ENTRIES, TYPES, ADJECTIVES)


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
    default = next((e for e in _ENTRIES if e.prop == prop), None)
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
    return Lexicon([*_ENTRIES, *paired_entries(lemon, nouns)], nouns, adjectives)


def load_lemon(directory: Path | str) -> Lexicon:
    """The default lexicon plus every usable entry of the Lemon files under ``directory``."""
    return lemon_lexicon(read_lemon(Path(directory)))
