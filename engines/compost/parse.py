"""Reading a model's reply as the CompoST authors did: extract, check prefixes, parse with the SPARQL grammar.

Extraction (``extract=strict``, the default, the paper's): the reply is stripped, then a
leading "```sparql" and a trailing "```" are removed and nothing else, as the authors'
``get_results_query`` does. Prose around the query therefore makes it unreadable, as it
made it invalid for them (F1 0).

Prefixes: those the authors' validity test bound (``engines/compost/prefixes.py``) may be
used undeclared; any other prefix must be declared in the query. A query using an
undeclared, unbound prefix is unreadable.

``extract=lenient`` is for exploratory runs: it also takes a query out of prose (the
first fenced block holding a query, else the text from a query keyword on, cut where the
grammar stops accepting it) and resolves the usual unbound DBpedia prefixes
(``dbpedia:``, ``dbpprop:``...). When the strict reading fails, the lenient one is still
tried, as a diagnosis: what the query would have meant, and why it did not count.

Every query is parsed whole by the SPARQL 1.1 grammar (``engines/sparql/grammar.py``);
a syntax error says its line, column and what the grammar expected there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from lark import ParseTree, Token

from engines.compost.prefixes import ALIASES, AUTHORS, BOUND, declarations
from engines.sparql.grammar import CACHED, SparqlSyntaxError, cached_tree, offset
from engines.sparql.guard import refused_features
from engines.sparql.pattern import Triple, prologue, read_structure, survey

EXTRACT = ("strict", "lenient")
FENCE_OPEN, FENCE_CLOSE = "```sparql", "```"


_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_START = re.compile(r"\b(PREFIX|BASE|SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.IGNORECASE)


class QueryError(ValueError):
    """The reply holds no readable query. ``diagnosis`` is what the lenient reading found, if
    anything, and ``reasons`` the (tag code, evidence) pairs saying why it did not count."""

    def __init__(self, message: str, diagnosis: "Parsed | None" = None,
                 reasons: tuple[tuple[str, str], ...] = ()):
        super().__init__(message)
        self.diagnosis, self.reasons = diagnosis, reasons

    def fresh(self) -> "QueryError":
        """A new instance to raise: raising the cached one would tie the raiser's frames to the cache."""
        return QueryError(str(self), self.diagnosis, self.reasons)


@dataclass
class Parsed:
    text: str  # the query as read from the reply
    executable: str  # the query with declarations of the bound prefixes it uses undeclared prepended
    tree: ParseTree  # the grammar's parse tree
    form: str  # SELECT, ASK, CONSTRUCT or DESCRIBE
    projection: list[str]  # variable names with "?", or ["*"]
    triples: list[Triple]  # the basic graph pattern, terms normalised (engines/sparql/pattern.py)
    features: set[str] = field(default_factory=set)
    forbidden: list[str] = field(default_factory=list)
    prose: bool = False  # lenient reading only: the reply held text beyond the query and its fence
    undeclared: tuple[str, ...] = ()  # unbound prefixes read through ALIASES (lenient reading only)


def authors_text(reply: str) -> str:
    """The query text exactly as the authors' scorer handed it to rdflib (after a strip)."""
    return reply.strip().removeprefix(FENCE_OPEN).removesuffix(FENCE_CLOSE)


def _prefix(token: Token) -> str:
    return str(token).partition(":")[0]


@lru_cache(maxsize=CACHED)
def _query(query: str, aliases: bool) -> Parsed | QueryError:
    tree = cached_tree(query)
    if isinstance(tree, SparqlSyntaxError):
        return QueryError(f"not SPARQL: {tree}")
    surveyed = survey(tree)
    used = surveyed[1]
    heading = prologue(tree)
    declared = heading[0]
    unbound = [t for t in used if _prefix(t) not in declared and _prefix(t) not in BOUND]
    if unbound and not (aliases and all(_prefix(t) in ALIASES for t in unbound)):
        first = next(t for t in unbound if not aliases or _prefix(t) not in ALIASES)
        return QueryError(f"undeclared prefix {_prefix(first)}: at line {first.line}, column {first.column} "
                          f"(bound without a declaration: {', '.join(sorted(AUTHORS))} and rdflib's defaults)")
    table = {**BOUND, **ALIASES} if aliases else BOUND
    structure = read_structure(tree, table, heading, surveyed)
    needed = {_prefix(t) for t in used} - set(declared)
    executable = declarations(needed, table) + query if needed else query
    forbidden = refused_features(structure.features)
    return Parsed(query, executable, tree, structure.form, structure.projection, structure.triples,
                  structure.features, forbidden,
                  undeclared=tuple(sorted({_prefix(t) for t in unbound})))


def parse_query(query: str, aliases: bool = False) -> Parsed:
    """One query text, parsed whole; QueryError if it is not SPARQL or uses an unbound prefix.
    ``aliases`` also resolves the unbound DBpedia prefixes (the lenient reading). Cached: read-only."""
    result = _query(query, aliases)
    if isinstance(result, QueryError):
        raise result.fresh() from None
    return result


def longest_query(text: str) -> str | None:
    """``text`` if it is a query, else its part up to where the grammar stopped, if that is one."""
    found = cached_tree(text)
    if not isinstance(found, SparqlSyntaxError):
        return text
    cut = text[:offset(text, found.line, found.column)].rstrip()
    return cut if cut and not isinstance(cached_tree(cut), SparqlSyntaxError) else None


def candidates(reply: str) -> list[str]:
    """Query texts inside a reply, in the order the lenient reading tries them: fenced blocks
    holding a query keyword, then the text from each query keyword on."""
    out = [m.group(1).strip() for m in _FENCE.finditer(reply) if _START.search(m.group(1))]
    out += [reply[m.start():].strip() for m in _START.finditer(reply)]
    return list(dict.fromkeys(q for q in out if q))


def _lenient(reply: str) -> Parsed | QueryError:
    first: QueryError | None = None
    wrapper = authors_text(reply).strip()
    for text in candidates(reply):
        query = longest_query(text)
        if query is None:
            continue
        result = _query(query, True)
        if isinstance(result, QueryError):
            first = first or result
            continue
        return replace(result, prose=wrapper != query)
    return first or QueryError("no SPARQL query found (no SELECT, ASK, CONSTRUCT, DESCRIBE or PREFIX that parses)")


@lru_cache(maxsize=CACHED)
def _reply(reply: str, extract: str) -> Parsed | QueryError:
    if extract == "lenient":
        return _lenient(reply)
    strict = _query(authors_text(reply), False)
    if isinstance(strict, Parsed):
        return strict
    diagnosis = _lenient(reply)
    if isinstance(diagnosis, QueryError):
        return strict
    reasons = []
    if diagnosis.prose or diagnosis.text != authors_text(reply).strip():
        reasons.append(("format_violation", "text around the query: the authors' scorer removes only a leading "
                                            "```sparql and a trailing ```"))
    if diagnosis.undeclared:
        reasons.append(("undeclared_prefix", "undeclared " + ", ".join(p + ":" for p in diagnosis.undeclared)
                        + " (read here as " + ", ".join(f"{p}: = <{ALIASES[p]}>" for p in diagnosis.undeclared)
                        + ")"))
    return QueryError(str(strict), diagnosis, tuple(reasons))


def parse_reply(reply: str, extract: str = "strict") -> Parsed:
    """The query of a reply under the extraction policy (cached: next_step, the tool and score all
    read the same reply; treat the result as read-only)."""
    result = _reply(reply, extract)
    if isinstance(result, QueryError):
        raise result.fresh() from None
    return result
