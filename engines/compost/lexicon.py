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

Lemon lexica (Turtle files as released with CompoST) are imported by ``lemon.load_lemon``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

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


ENTRIES = [
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
    return Lexicon(ENTRIES, TYPES, ADJECTIVES)
