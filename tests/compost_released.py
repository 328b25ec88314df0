"""The authors' released results CSVs (``results/<level>__...csv_evaluated.csv``) beside the official items.

Used by the replay checks and their benchmark: each row's item, its generated query and
the authors' own per-item verdict (TP, FP, FN, F1 from DBpedia 2022-12).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from engines.core import DataError, Item
from official_data import DATA_ROOT

FILES = {"easy": "easy", "medium": "medium", "hard": "max"}  # level -> official file's name part


@dataclass(frozen=True)
class Row:
    item: Item
    generated: str
    tp: int
    fp: int
    fn: int
    f1: float

    @property
    def answered(self) -> bool:
        """The authors' endpoint returned rows, so their validity test accepted the query."""
        return self.tp + self.fp > 0


def read_rows(path: Path, items: dict[str, Item], level: str) -> list[Row]:
    csv.field_size_limit(1 << 30)
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            key = f"{level}-o{row['id']}-{row['base_depth']}x{row['base_breadth']}-g{row['subid']}"
            if key not in items:
                raise DataError(f"{path}: row {key} has no official item")
            out.append(Row(items[key], row["generated_sparql"], int(row["TP"]), int(row["FP"]), int(row["FN"]),
                           float(row["F1"])))
    return out


DATA = DATA_ROOT / "compost"


def released_csv(level: str) -> Path:
    return next((DATA / "results").glob(f"{level}__*.csv"))


def official_file(level: str) -> Path:
    return DATA / f"compositionality_subgraph_{FILES[level]}.json"


def level_rows(level: str) -> list[Row]:
    """The level's 2,803 released rows with their official items."""
    from engines.compost.official import load_official
    from engines.compost.settings import CompostSettings

    items = {i.id: i for i in load_official(CompostSettings(dataset=str(official_file(level))))}
    return read_rows(released_csv(level), items, level)


# Where our grammar and pyoxigraph's SPARQL parser disagree on the released outputs, and why.
# Each class: (name, why, detector(query text) -> bool); the detectors look at the query only.
_DOTTED_LOCAL = re.compile(r"(?<![\w<])[A-Za-z][\w.-]*:[\w%-]*\.[\w%.-]*[\w%-]")
_BIND_AS = re.compile(r"\bBIND\s*\(.*?\bAS\s+([?$]\w+)\s*\)", re.IGNORECASE | re.DOTALL)
_GROUP_BY = re.compile(r"\bGROUP\s+BY\b", re.IGNORECASE)


def _rebinds(query: str) -> bool:
    return any(m.group(1)[1:] in {v[1:] for v in re.findall(r"[?$]\w+", query[:m.start()])}
               for m in _BIND_AS.finditer(query))


DISAGREEMENTS = [
    ("dotted local name", "ours accepts, pyoxigraph rejects: a prefixed name with '.' inside its local part "
     "(dbr:P._D._Houston_Jr._House, res:R.E.M. before a final '.'); SPARQL 1.1's PN_LOCAL allows '.' anywhere "
     "but last, so the query is valid and pyoxigraph is wrong", lambda q: bool(_DOTTED_LOCAL.search(q))),
    ("BIND to a variable in scope", "ours accepts, pyoxigraph rejects: BIND(... AS ?v) where ?v is already used "
     "before it in the group; SPARQL 1.1 forbids it in section 18.2.1 (a scope rule, not the grammar, which our "
     "grammar is)", _rebinds),
    ("ungrouped projection", "ours accepts, pyoxigraph rejects: GROUP BY with a projected variable that is not "
     "grouped; SPARQL 1.1 forbids it in section 18.2.4.1 (not the grammar)", lambda q: bool(_GROUP_BY.search(q))),
]


def disagreement_class(query: str, ours: bool) -> str:
    """The name of the documented class a disagreement falls in ('' if none fits)."""
    for name, why, detect in DISAGREEMENTS:
        if why.startswith("ours accepts") == ours and detect(query):
            return name
    return ""


# Why our structural verdict misses an answer the authors scored F1 = 1 on DBpedia (the residual classes).
def residual_class(reply: str, gold: list[tuple[str, str, str]]) -> str:
    from engines.compost import ontology
    from engines.compost.compare import ANSWER, SEMANTIC_FEATURES, mapping
    from engines.sparql.pattern import RDF_TYPE
    from engines.compost.score import read_output

    parsed, _ = read_output(reply)
    if parsed is None:
        return "unreadable by the strict reading"
    constructs = sorted(parsed.features & SEMANTIC_FEATURES)
    if constructs:
        return "a construct beyond a basic graph pattern (" + ", ".join(constructs) + ")"
    if len(parsed.projection) != 1 or parsed.projection[0] == "*":
        return "not exactly one projected variable"
    fixed = {parsed.projection[0]: ANSWER}
    out, want = ontology.canonical(parsed.triples), ontology.canonical(gold)

    def untyped(triples):
        return [t for t in triples if t[1] != RDF_TYPE]

    if mapping(untyped(out), untyped(want), fixed) is not None:
        return "the same relations, other rdf:type constraints"

    def unnamed(triples):
        return sorted({(s, "<p>", o) for s, _, o in untyped(triples)})

    if mapping(unnamed(out), unnamed(want), fixed) is not None:
        return "the same shape with another property (dbo:award for dbp:awards ...)"
    return "another pattern (other entities, joins or number of triples)"
