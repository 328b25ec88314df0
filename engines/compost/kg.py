"""The bundled knowledge graph, read in pure Python for the generator.

The engine never executes SPARQL (the sessions layer does, with pyoxigraph); to find
pattern instances it only needs the graph's adjacency, labels and types, which a
single pass over the gzip N-Triples file gives.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from engines.compost.lexicon import RDF_TYPE, RDFS_LABEL

KG_PATH = Path(__file__).resolve().parent / "data" / "kg.nt.gz"


class Hop(NamedTuple):
    """One step from a node along a fact: ``forward`` when the node is the fact's subject.

    A tuple rather than a dataclass: the graph holds ~180,000 of them and building
    them is most of the load time.
    """

    prop: str
    other: str
    forward: bool


@dataclass
class Graph:
    adjacency: dict[str, list[Hop]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    types: dict[str, list[str]] = field(default_factory=dict)

    def label(self, iri: str) -> str:
        """The entity's name for a question (labels come from percent-encoded DBpedia local names)."""
        return unquote(self.labels.get(iri) or iri.rsplit("/", 1)[-1].replace("_", " "))


def _literal(term: str) -> str:
    body = term[1:term.rindex('"')]
    return body.encode("utf-8").decode("unicode_escape") if "\\" in body else body


@lru_cache(maxsize=2)
def load_graph(path: Path = KG_PATH) -> Graph:
    """Adjacency (both directions), labels and types of the N-Triples file at ``path``."""
    graph = Graph()
    label, rdf_type = f"<{RDFS_LABEL}>", f"<{RDF_TYPE}>"
    adjacency = graph.adjacency
    for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
        s, p, o = line[:-2].split(" ", 2)
        if p == label:
            graph.labels[s[1:-1]] = _literal(o)
        elif p == rdf_type:
            graph.types.setdefault(s[1:-1], []).append(o[1:-1])
        else:
            subj, prop, obj = s[1:-1], p[1:-1], o[1:-1]
            adjacency.setdefault(subj, []).append(Hop(prop, obj, True))
            adjacency.setdefault(obj, []).append(Hop(prop, subj, False))
    return graph
