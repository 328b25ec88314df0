"""What a parsed SPARQL query asks for: its form, projection, basic graph pattern and other constructs.

Read off the grammar's tree (``engines/sparql/grammar.py``). Terms are normalised to one
spelling so that two queries compare by string: ``<full IRI>`` (prefixed names expanded,
``a`` as rdf:type, relative IRIs resolved against BASE), ``?var`` (``$var`` too),
literals in N-Triples form (``"text"``, ``"text"@en``, ``"5"^^<...#integer>``). Blank nodes
become variables (``?_:label``; ``[]`` and ``[ ... ]`` get fresh ones): in a pattern they
match like variables and cannot be projected.

The basic graph pattern is the triples of the WHERE group and of groups nested in it
without any operator (``{ { ... } }`` is a join). Sequence paths (``p/q``) become a chain
through fresh variables and inverse paths (``^p``) a swapped triple, which mean the same.
Everything else (FILTER, OPTIONAL, UNION, other paths, modifiers...) is recorded as a
feature by name; nothing is dropped without a feature saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urljoin

from lark import Token, Tree

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = f"<{RDF}type>"
NUMERIC_TYPES = {"INTEGER": "integer", "DECIMAL": "decimal", "DOUBLE": "double"}
Node = Tree[Any]  # a SPARQL parse tree: which children are trees and which tokens is the grammar's to say

Triple = tuple[str, str, str]

# Grammar rules that add a construct beyond the basic graph pattern, by feature name.
RULE_FEATURES = {
    "filter": "FILTER", "optional_graph_pattern": "OPTIONAL", "minus_graph_pattern": "MINUS", "bind": "BIND",
    "inline_data": "VALUES", "graph_graph_pattern": "GRAPH", "service_graph_pattern": "SERVICE",
    "sub_select": "SUBQUERY", "group_clause": "GROUP", "having_clause": "HAVING", "order_clause": "ORDER",
    "limit_clause": "LIMIT", "offset_clause": "OFFSET", "aggregate": "AGGREGATE", "dataset_clause": "FROM",
}
FORMS = {"select_query": "SELECT", "ask_query": "ASK", "construct_query": "CONSTRUCT", "describe_query": "DESCRIBE"}
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)
_LOCAL_ESCAPE = re.compile(r"\\(.)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass
class Structure:
    form: str  # SELECT, ASK, CONSTRUCT or DESCRIBE
    projection: list[str]  # "?var" names, or ["*"]
    triples: list[Triple]
    features: set[str] = field(default_factory=set)
    prefixes_used: list[Token] = field(default_factory=list)  # PNAME tokens outside the prologue
    declared: dict[str, str] = field(default_factory=dict)  # the prologue's PREFIX declarations


def unescape(text: str) -> str:
    """A string's or IRI's characters with ECHAR and \\u/\\U escapes resolved."""
    def one(m: re.Match[str]) -> str:
        code, whole = m.group(1), m.group(0)
        if code[0] in "uU" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ECHAR.get(code, whole)
    return _ESCAPE.sub(one, text) if "\\" in text else text


def literal(lexical: str, suffix: str = "") -> str:
    return '"' + lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"' + suffix


def prologue(tree: Node) -> tuple[dict[str, str], str]:
    """The prologue's PREFIX declarations (last one wins) and BASE IRI."""
    query = tree.children[0]
    declared: dict[str, str] = {}
    base = ""
    for decl in query.children[0].children:
        if decl.data == "prefix_decl":
            declared[str(decl.children[1])[:-1]] = unescape(str(decl.children[2])[1:-1])
        else:
            base = urljoin(base, unescape(str(decl.children[1])[1:-1])) if base else unescape(str(decl.children[1])[1:-1])
    return declared, base


def survey(tree: Node) -> tuple[set[str], list[Token]]:
    """One pass over the tree: the features its rules add, and every prefixed name outside the prologue
    (in text order)."""
    found: set[str] = set()
    names: list[Token] = []
    stack = list(tree.children[0].children[1:])
    while stack:
        node = stack.pop()
        name = RULE_FEATURES.get(node.data)
        if name:
            found.add(name)
        elif node.data == "group_or_union_graph_pattern" and len(node.children) > 1:
            found.add("UNION")
        elif node.data == "projection" and len(node.children) > 1:
            found.add("EXPRESSION")
        for child in node.children:
            if isinstance(child, Tree):
                stack.append(child)
            elif child.type in ("PNAME_LN", "PNAME_NS"):
                names.append(child)
            elif child.type in ("DISTINCT", "REDUCED") and node.data == "select_clause":
                found.add(child.type)
    names.sort(key=lambda t: (t.line or 0, t.column or 0))
    return found, names


def features(tree: Node) -> set[str]:
    return survey(tree)[0]


class _Reader:
    """One walk over a query tree, resolving terms with the given prefix table."""

    def __init__(self, prefixes: dict[str, str], base: str):
        self.prefixes, self.base = prefixes, base
        self.fresh = 0
        self.features: set[str] = set()

    def new_var(self, kind: str) -> str:
        self.fresh += 1
        return f"?_:{kind}{self.fresh}"

    # terms -------------------------------------------------------------------------------
    def iri(self, token: Token) -> str:
        text = str(token)
        if token.type == "IRIREF":
            iri = unescape(text[1:-1])
            return f"<{urljoin(self.base, iri) if self.base and not _SCHEME.match(iri) else iri}>"
        prefix, _, local = text.partition(":")
        return "<" + self.prefixes[prefix] + _LOCAL_ESCAPE.sub(r"\1", local) + ">"

    def term(self, node: Node | Token, out: list[Triple]) -> str:
        if isinstance(node, Token):
            return self.token_term(node)
        kind = node.data
        if kind in ("var", "iri", "blank_node"):
            return self.token_term(_leaf(node.children[0]))
        if kind == "rdf_literal":
            lexical = unescape(_string_body(_leaf(node.children[0].children[0])))
            if len(node.children) == 1:
                return literal(lexical)
            extra = node.children[1]
            if isinstance(extra, Token) and extra.type == "LANGTAG":
                return literal(lexical, str(extra).lower())
            return literal(lexical, "^^" + self.term(extra, out))
        if kind == "numeric_literal":
            token = _leaf(node.children[0])
            kind_name = token.type.split("_")[0]
            return literal(str(token).lstrip("+") if kind_name == "INTEGER" else str(token),
                           f"^^<{XSD}{NUMERIC_TYPES[kind_name]}>")
        if kind == "boolean_literal":
            return literal(str(node.children[0]).lower(), f"^^<{XSD}boolean>")
        if kind in ("collection", "collection_path"):
            return self.collection(node.children, out)
        if kind in ("blank_node_property_list", "blank_node_property_list_path"):
            subject = self.new_var("b")
            self.properties(subject, node.children[0], out)
            return subject
        raise ValueError(f"unexpected term {kind}")

    def token_term(self, token: Token) -> str:
        kind = token.type
        if kind in ("VAR1", "VAR2"):
            return "?" + str(token)[1:]
        if kind in ("IRIREF", "PNAME_LN", "PNAME_NS"):
            return self.iri(token)
        if kind == "A":
            return RDF_TYPE
        if kind == "NIL":
            return f"<{RDF}nil>"
        if kind == "ANON":
            return self.new_var("b")
        if kind == "BLANK_NODE_LABEL":
            return "?_:" + str(token)[2:]
        raise ValueError(f"unexpected token {kind}")

    def collection(self, items: list[Node | Token], out: list[Triple]) -> str:
        head = self.new_var("list")
        node = head
        for k, item in enumerate(items):
            out.append((node, f"<{RDF}first>", self.term(item, out)))
            rest = self.new_var("list") if k + 1 < len(items) else f"<{RDF}nil>"
            out.append((node, f"<{RDF}rest>", rest))
            node = rest
        return head

    # triples -----------------------------------------------------------------------------
    def properties(self, subject: str, plist: Node, out: list[Triple]) -> None:
        parts = [c for c in plist.children if not isinstance(c, Token) or c.type not in ("SEMICOLON",)]
        for verb, objects in zip(parts[::2], parts[1::2]):
            for obj in objects.children:
                self.edge(subject, verb, self.term(obj, out), out)

    def edge(self, subject: str, verb: Node | Token, obj: str, out: list[Triple]) -> None:
        """The triples of ``subject verb obj``; a path verb expands to what it means, if it can."""
        if isinstance(verb, Token):
            out.append((subject, self.token_term(verb), obj))
        elif verb.data in ("var", "iri"):
            out.append((subject, self.term(verb, out), obj))
        else:
            self.path(subject, verb, obj, out)

    def path(self, subject: str, node: Node, obj: str, out: list[Triple]) -> None:
        kind = node.data
        parts = [c for c in node.children if isinstance(c, Tree)]
        if kind == "path_primary" and len(node.children) == 1:
            child = node.children[0]
            if isinstance(child, Token) or child.data == "iri":
                out.append((subject, self.term(child, out), obj))
                return
            self.path(subject, child, obj, out)  # "(" path ")"
            return
        if kind == "path_elt_or_inverse":
            self.path(obj, parts[0], subject, out)
            return
        if kind == "path_sequence":
            nodes = [subject] + [self.new_var("path") for _ in parts[:-1]] + [obj]
            for k, part in enumerate(parts):
                self.path(nodes[k], part, nodes[k + 1], out)
            return
        # alternatives, ?, *, + and negated sets: no triple means the same; kept as one opaque predicate
        self.features.add("PATH")
        out.append((subject, "path(" + " ".join(_text(node)) + ")", obj))

    def triples_block(self, block: Node, out: list[Triple]) -> None:
        """The triples of a block; the grammar nests each next triple a level deeper, so this walks them
        in a loop (a 20,000-triple block is 20,000 levels)."""
        blocks: Node | None = block
        while blocks is not None:
            parts, blocks = blocks.children, None
            for part in parts:
                if isinstance(part, Tree) and part.data == "triples_same_subject_path":
                    first, plist = part.children
                    subject = self.term(first, out)
                    if plist.children:
                        target = plist if plist.data == "property_list_path_not_empty" else plist.children[0]
                        self.properties(subject, target, out)
                elif isinstance(part, Tree) and part.data == "triples_block":
                    blocks = part

    def group(self, ggp: Node, out: list[Triple]) -> None:
        """The basic graph pattern of a group: its triples blocks and operator-free nested groups."""
        inner = ggp.children[0]
        if inner.data == "sub_select":
            return
        for part in inner.children:
            if not isinstance(part, Tree):
                continue
            if part.data == "triples_block":
                self.triples_block(part, out)
            elif part.data == "group_or_union_graph_pattern" and len(part.children) == 1:
                self.group(part.children[0], out)


def _leaf(branch: Node | Token) -> Token:
    """A child the grammar makes a terminal."""
    assert isinstance(branch, Token), f"a {branch.data} rule where the grammar has a terminal"
    return branch


def _string_body(token: Token) -> str:
    text = str(token)
    quote = 3 if token.type.startswith("STRING_LITERAL_LONG") else 1
    return text[quote:-quote]


def _text(node: Node | Token) -> Iterator[str]:
    if isinstance(node, Token):
        yield str(node)
    else:
        for child in node.children:
            yield from _text(child)


def read_structure(tree: Node, prefixes: dict[str, str], heading: tuple[dict[str, str], str] | None = None,
                   surveyed: tuple[set[str], list[Token]] | None = None) -> Structure:
    """The query's form, projection, basic graph pattern and features; ``prefixes`` must bind every prefix used.
    ``heading`` and ``surveyed`` are ``prologue(tree)`` and ``survey(tree)`` when the caller has them."""
    query = tree.children[0]
    declared, base = heading or prologue(tree)
    reader = _Reader({**prefixes, **declared}, base)
    body = query.children[1]
    form = FORMS[body.data]
    projection: list[str] = []
    if form == "SELECT":
        clause = body.children[0]
        for part in clause.children:
            if isinstance(part, Token) and part.type == "STAR":
                projection.append("*")
            elif isinstance(part, Tree) and part.data == "projection":
                projection.append(reader.term(part.children[-1], []))
    triples: list[Triple] = []
    where = next((c for c in body.children if isinstance(c, Tree) and c.data == "where_clause"), None)
    if where is not None:
        reader.group(where.children[-1], triples)
    elif form == "CONSTRUCT":
        reader.features.add("CONSTRUCT")
    rule_features, names = surveyed or survey(tree)
    found = rule_features | reader.features
    if query.children[2].children:
        found.add("VALUES")
    if form != "SELECT":
        found.add(form)
    return Structure(form, projection, triples, found, names, declared)
