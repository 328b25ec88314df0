"""What a read-only executor refuses before running a model's query: updates, federation, cross products.

Read from the grammar's tokens and tree, never from the text: ``SERVICE`` inside an IRI,
a string or a comment does not count. An update is not a query, so the grammar stops at
its keyword; the word where it stops says which one. A basic graph pattern whose triples
fall apart into several parts joined by no variable is a cross product: its size is the
product of the parts' answers, so an executor bounds the number of parts.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engines.sparql.grammar import SparqlSyntaxError, cached_tree, offset
from engines.sparql.pattern import Triple, features, read_structure

FORBIDDEN_FEATURES = {"SERVICE": "a federated SERVICE clause", "FROM": "a remote dataset clause (FROM)"}
UPDATES = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH")
_WORD = re.compile(r"[A-Za-z]+")


class _AnyPrefix(dict[str, str]):
    """A prefix table binding every prefix: the parts of a pattern do not depend on what its IRIs mean."""

    def __missing__(self, prefix: str) -> str:
        return f"urn:prefix:{prefix}:"


def refused_features(found: set[str]) -> list[str]:
    """The refused clauses among a query's features, as a person reads them, sorted."""
    return sorted(FORBIDDEN_FEATURES[f] for f in found if f in FORBIDDEN_FEATURES)


@lru_cache(maxsize=256)
def _forbidden(text: str) -> tuple[str, ...]:
    tree = cached_tree(text)
    if isinstance(tree, SparqlSyntaxError):
        word = _WORD.match(text, offset(text, tree.line, tree.column))
        found = word.group().upper() if word else ""
        return (f"an update ({found})",) if found in UPDATES else ()
    return tuple(refused_features(features(tree)))


def forbidden_clauses(text: str) -> list[str]:
    """What in this text a read-only endpoint must refuse: SERVICE and FROM in a query, or the update
    keyword where the query grammar stops (updates are not queries)."""
    return list(_forbidden(text))


def pattern_parts(text: str) -> int | None:
    """Connected parts of the query's basic graph pattern, joined by shared variables; None if not SPARQL."""
    tree = cached_tree(text)
    if isinstance(tree, SparqlSyntaxError):
        return None
    return components(read_structure(tree, _AnyPrefix()).triples)


def components(triples: list[Triple]) -> int:
    """Connected parts of a basic graph pattern, joined by shared variables (union-find)."""
    parent = list(range(len(triples)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: dict[str, int] = {}
    for i, triple in enumerate(triples):
        for term in triple:
            if term.startswith("?"):
                if term in seen:
                    parent[find(i)] = find(seen[term])
                else:
                    seen[term] = i
    return len({find(i) for i in range(len(triples))})
