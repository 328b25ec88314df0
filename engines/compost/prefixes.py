"""The prefixes a query may use without declaring them, as the authors' validity test bound them.

The authors checked a generated query with rdflib's SPARQL parser on an empty graph whose
namespace manager starts from rdflib's default bindings (``Graph()``'s "rdflib" set) and
then binds their own (``lemon/namespaces.py``, overriding). A query without any ``PREFIX``
got their declarations prepended before it went to the endpoint. Any other prefix had to be
declared in the query, or it was invalid (F1 0): ``dbpedia:``, ``dbpprop:`` and ``res:``
are common in model outputs and are **not** bound.

``ALIASES`` are what those unbound prefixes mean on DBpedia; they are used only to show
what an invalid query would have meant, and under ``extract=lenient``.
"""

from __future__ import annotations

RDFLIB_DEFAULTS = {
    "brick": "https://brickschema.org/schema/Brick#",
    "csvw": "http://www.w3.org/ns/csvw#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcat": "http://www.w3.org/ns/dcat#",
    "dcmitype": "http://purl.org/dc/dcmitype/",
    "dcterms": "http://purl.org/dc/terms/",
    "dcam": "http://purl.org/dc/dcam/",
    "doap": "http://usefulinc.com/ns/doap#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "geo": "http://www.opengis.net/ont/geosparql#",
    "odrl": "http://www.w3.org/ns/odrl/2/",
    "org": "http://www.w3.org/ns/org#",
    "prof": "http://www.w3.org/ns/dx/prof/",
    "prov": "http://www.w3.org/ns/prov#",
    "qb": "http://purl.org/linked-data/cube#",
    "schema": "https://schema.org/",
    "sh": "http://www.w3.org/ns/shacl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "sosa": "http://www.w3.org/ns/sosa/",
    "ssn": "http://www.w3.org/ns/ssn/",
    "time": "http://www.w3.org/2006/time#",
    "vann": "http://purl.org/vocab/vann/",
    "void": "http://rdfs.org/ns/void#",
    "wgs": "https://www.w3.org/2003/01/geo/wgs84_pos#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "xml": "http://www.w3.org/XML/1998/namespace",
}

AUTHORS = {
    "lemon": "http://localhost:8000/lemon.owl#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "dbo": "http://dbpedia.org/ontology/",
    "dbp": "http://dbpedia.org/property/",
    "dbr": "http://dbpedia.org/resource/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "dct": "http://purl.org/dc/terms/",
    "oils": "http://localhost:8000/oils.owl/",
    "local": "http://localhost:8000/#",
    "lexicon": "http://localhost:8000/lexicon#",
    "yago": "http://dbpedia.org/class/yago/",
    "yago-res": "https://yago-knowledge.org/resource/",
    "ex": "http://example.org/",
    "dul": "http://www.ontologydesignpatterns.org/ont/dul/DUL.owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "time": "http://www.w3.org/2006/time#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}

BOUND = {**RDFLIB_DEFAULTS, **AUTHORS}

ALIASES = {
    "dbpedia": "http://dbpedia.org/resource/",
    "res": "http://dbpedia.org/resource/",
    "dbpprop": "http://dbpedia.org/property/",
    "dbpedia-owl": "http://dbpedia.org/ontology/",
    "dbont": "http://dbpedia.org/ontology/",
    "wd": "http://www.wikidata.org/entity/",
    "wdt": "http://www.wikidata.org/prop/direct/",
}


def declarations(names: set[str] | frozenset[str], table: dict[str, str]) -> str:
    """PREFIX lines for ``names`` (those ``table`` knows), to prepend to a query before it runs."""
    return "".join(f"PREFIX {n}: <{table[n]}>\n" for n in sorted(names) if n in table)
