"""Reading a model's SPARQL: find the query in the reply, then its projection and triple patterns.

Replies wrap queries in code fences and prose, use PREFIX declarations, prefixed names
(``dbo:``, ``dbr:`` and friends even when undeclared), ``a``, and the ``;``/``,``
abbreviations. This reader tokenises the query (strings, IRIs and comments are single
tokens, so keywords inside them never count) and collects the basic graph pattern of
the WHERE clause; any other construct (FILTER, OPTIONAL, UNION...) is recorded as a
feature, which the structural comparison treats as a difference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from engines.compost.lexicon import RDF_TYPE

KNOWN_PREFIXES = {
    "dbo": "http://dbpedia.org/ontology/",
    "dbr": "http://dbpedia.org/resource/",
    "dbp": "http://dbpedia.org/property/",
    "res": "http://dbpedia.org/resource/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "yago": "http://dbpedia.org/class/yago/",
    "dct": "http://purl.org/dc/terms/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "dcterms": "http://purl.org/dc/terms/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "dbpedia-owl": "http://dbpedia.org/ontology/",
    "dbpprop": "http://dbpedia.org/property/",
    "dbpedia": "http://dbpedia.org/resource/",
    "schema": "http://schema.org/",
}

_TOKEN = re.compile(r"""
    (?P<comment>\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<langtag>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<dtype>\^\^)
  | (?P<var>[?$][A-Za-z0-9_\u00C0-\uFFFF]+)
  | (?P<pname>(?:[A-Za-z][\w\-.]*)?:(?:[\w\-%]|\\.|\.(?=[\w%]))*)
  | (?P<number>[+-]?\d+(?:\.\d+)?)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<punct>[{}().;,*=!<>&|+/-])
  | (?P<space>\s+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

FORBIDDEN = {"SERVICE": "a federated SERVICE clause", "INSERT": "an update (INSERT)",
             "DELETE": "an update (DELETE)", "LOAD": "an update (LOAD)", "CLEAR": "an update (CLEAR)",
             "CREATE": "an update (CREATE)", "DROP": "an update (DROP)", "COPY": "an update (COPY)",
             "MOVE": "an update (MOVE)", "ADD": "an update (ADD)", "FROM": "a remote dataset clause (FROM)"}
FEATURES = {"FILTER", "OPTIONAL", "UNION", "MINUS", "BIND", "VALUES", "GRAPH", "GROUP", "ORDER", "LIMIT",
            "OFFSET", "HAVING", "DISTINCT", "COUNT", "ASK", "CONSTRUCT", "DESCRIBE", "REDUCED", "NOT", "EXISTS"}


# Keywords followed by a bracketed expression or group that is not part of the top-level BGP.
GROUPED = {"BIND", "FILTER", "OPTIONAL", "MINUS", "GRAPH", "VALUES", "EXISTS", "SERVICE"}


class QueryError(ValueError):
    """The reply holds no readable query; the message says why."""


@dataclass(frozen=True)
class Token:
    kind: str
    text: str


@dataclass
class Parsed:
    text: str  # the query as extracted from the reply
    projection: list[str]  # variable names with "?", or ["*"]
    triples: list[tuple[str, str, str]]  # terms normalised: <iri>, ?var, "literal"...
    features: set[str] = field(default_factory=set)
    forbidden: list[str] = field(default_factory=list)
    prose: bool = False  # the reply held text beyond the query (and its fence)


def tokenize(text: str) -> list[Token]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind not in ("space", "comment"):
            out.append(Token(kind, m.group()))
    return out


def forbidden_clauses(text: str) -> list[str]:
    """What in this query a read-only endpoint must refuse, found among keyword tokens only."""
    return _forbidden(tokenize(text))


def _forbidden(tokens: list[Token]) -> list[str]:
    return sorted({FORBIDDEN[t.text.upper()] for t in tokens if t.kind == "word" and t.text.upper() in FORBIDDEN})


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_START = re.compile(r"\b(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE|INSERT|DELETE|LOAD|CLEAR|DROP|CREATE)\b",
                    re.IGNORECASE)


def candidates(reply: str) -> list[tuple[str, bool]]:
    """(query text, whether prose surrounds it) to try in order: the first fenced block holding
    a query keyword, else the text from each keyword on (prose may say "select" before the query)."""
    text = reply.strip()
    fences = [m for m in _FENCE.finditer(text) if _START.search(m.group(2))]
    if fences:
        block = fences[0]
        return [(_cut(block.group(2).strip()), bool(text[:block.start()].strip() or text[block.end():].strip()))]
    out = []
    for m in _START.finditer(text):
        query = _cut(text[m.start():])
        out.append((query, bool(text[:m.start()].strip() or text[m.start() + len(query):].strip())))
    if not out:
        raise QueryError("no SPARQL query found (no SELECT, ASK or PREFIX)")
    return out


def _cut(text: str) -> str:
    """The query up to its last balanced closing brace and trailing solution modifiers."""
    depth, end, opened = 0, None, False
    for m in _TOKEN.finditer(text):
        if m.lastgroup == "punct" and m.group() == "{":
            depth += 1
            opened = True
        elif m.lastgroup == "punct" and m.group() == "}":
            depth -= 1
            if depth == 0:
                end = m.end()
        elif opened and depth == 0 and m.lastgroup == "word" and m.group().upper() not in (
                "LIMIT", "OFFSET", "ORDER", "GROUP", "BY", "ASC", "DESC", "HAVING"):
            break
    if end is None:
        return text.strip()
    tail = re.match(r"(\s*(?:(?:LIMIT|OFFSET)\s+\d+|(?:ORDER|GROUP)\s+BY\s+[^{}\n]*))*", text[end:], re.I)
    return text[:end + (tail.end() if tail else 0)].strip()


@lru_cache(maxsize=4096)
def parse_reply(reply: str) -> Parsed:
    """The query in a reply (cached: next_step, the tool and score all read the same reply; treat as read-only)."""
    first: QueryError | None = None
    for query, prose in candidates(reply):
        try:
            return replace(parse_query(query), prose=prose)
        except QueryError as exc:
            first = first or exc
    raise first  # type: ignore[misc]


@lru_cache(maxsize=4096)
def parse_query(query: str) -> Parsed:
    tokens = tokenize(query)
    if any(t.kind == "other" for t in tokens):
        bad = next(t.text for t in tokens if t.kind == "other")
        raise QueryError(f"unexpected character {bad!r}")
    prefixes = dict(KNOWN_PREFIXES)
    i = 0
    while i + 2 < len(tokens) and tokens[i].text.upper() == "PREFIX":
        name, iri = tokens[i + 1], tokens[i + 2]
        if name.kind != "pname" or iri.kind != "iri":
            raise QueryError(f"malformed PREFIX declaration near {name.text!r}")
        prefixes[name.text.rstrip(":")] = iri.text[1:-1]
        i += 3
    features = {t.text.upper() for t in tokens if t.kind == "word" and t.text.upper() in FEATURES}
    forbidden = _forbidden(tokens)
    head = [t for t in tokens[i:] if t.text != "{"][:1]
    if not head or head[0].text.upper() not in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
        if forbidden:
            return Parsed(query, [], [], features, forbidden)
        raise QueryError(f"expected SELECT after the prefixes, found {head[0].text if head else 'nothing'!r}")
    depth = 0
    projection: list[str] = []
    j = i + 1
    while j < len(tokens) and tokens[j].text != "{" and tokens[j].text.upper() != "WHERE":
        t = tokens[j]
        if t.kind == "var":
            projection.append("?" + t.text[1:])
        elif t.text == "*":
            projection.append("*")
        j += 1
    body: list[Token] = []
    for t in tokens[j:]:
        if t.text == "{":
            depth += 1
            if depth == 1:
                continue
        elif t.text == "}":
            depth -= 1
            if depth == 0:
                break
        if depth >= 1:
            body.append(t)
    if depth != 0:
        raise QueryError("unbalanced braces in the WHERE clause")
    if not body and not projection:
        raise QueryError("the query has no WHERE clause")
    return Parsed(query, projection, _triples(body, prefixes, features), features, forbidden)


def _term(t: Token, prefixes: dict[str, str]) -> str:
    if t.kind == "iri":
        return t.text
    if t.kind == "var":
        return "?" + t.text[1:]
    if t.kind == "pname":
        prefix, _, local = t.text.partition(":")
        if prefix not in prefixes:
            raise QueryError(f"undeclared prefix {prefix + ':'!r}")
        return f"<{prefixes[prefix]}{local.replace(chr(92), '')}>"
    if t.kind == "word" and t.text == "a":
        return f"<{RDF_TYPE}>"
    return t.text


def _triples(body: list[Token], prefixes: dict[str, str], features: set[str]) -> list[tuple[str, str, str]]:
    """The triple patterns of the top-level group; nested groups and expressions are skipped."""
    out: list[tuple[str, str, str]] = []
    terms: list[str] = []
    subject = predicate = None
    skip = 0  # depth inside a skipped expression or group
    pending = False  # a keyword was read; its "(" or "{" starts what to skip
    for t in body:
        if skip:
            skip += {"(": 1, "{": 1, ")": -1, "}": -1}.get(t.text, 0)
            continue
        if pending:
            if t.text in ("(", "{"):
                skip, pending = 1, False
            continue
        if t.kind == "word" and t.text.upper() in FEATURES | GROUPED:
            pending = t.text.upper() in GROUPED
            continue
        if t.text in ("{", "}"):
            continue
        if t.kind in ("langtag", "dtype"):
            if terms:
                terms[-1] += t.text
            continue
        if terms and terms[-1].endswith("^^") and t.kind in ("iri", "pname"):
            terms[-1] += _term(t, prefixes)
            continue
        if t.text in (".", ";", ","):
            if len(terms) == 3:
                subject, predicate = terms[0], terms[1]
                out.append((terms[0], terms[1], terms[2]))
            elif len(terms) == 2 and subject is not None:
                out.append((subject, terms[0], terms[1]))
                predicate = terms[0]
            elif len(terms) == 1 and predicate is not None:
                out.append((subject, predicate, terms[0]))
            elif terms:
                raise QueryError(f"incomplete triple pattern: {' '.join(terms)}")
            if t.text == ".":
                subject = predicate = None
            terms = []
            continue
        if t.kind in ("iri", "var", "pname", "string", "number") or (t.kind == "word" and t.text == "a"):
            terms.append(_term(t, prefixes))
        elif t.kind == "word" and t.text.lower() in ("true", "false"):
            terms.append(t.text.lower())
        else:
            features.add(t.text.upper())
    if terms:
        if len(terms) == 3:
            out.append((terms[0], terms[1], terms[2]))
        elif len(terms) == 2 and subject is not None:
            out.append((subject, terms[0], terms[1]))
        elif len(terms) == 1 and predicate is not None:
            out.append((subject, predicate, terms[0]))
        else:
            raise QueryError(f"incomplete triple pattern: {' '.join(terms)}")
    return out
