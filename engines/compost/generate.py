"""Generated CompoST items: pattern instances found in the bundled graph, verbalised.

For each base pattern shape (depth, breadth) in 2..3 x 2..3 the generator walks the
graph from a random centre along lexicon properties (in either direction, so some
triples come out inverted), fixes one lexical entry per property and, per node, a
random sample of its rdf:type, dbo:country, dbo:nationality and dbo:industry facts the
lexicon can verbalise (paper section 3.2), then verbalises the base pattern and every
connected sub-pattern with those same choices: a node that is a variable of a
sub-pattern carries its "that" clause in the question and its facts in the query.
Every gold query is satisfied by the instance it was built from, so it has a non-empty
answer on the graph. The "that" clause facts are not pattern edges: splits, edge ids
and shots count pattern edges only.

Questions follow the paper's EBNF (Figure 3), reconstructed as
    S   -> "Give me" DP (CP | eps) PP "." | "Who is" DP (CP | eps) PP "?"
    VP  -> "is" DP | "works" PP | VP CP | (VP | DP) "and" (VP | DP)
    DP  -> Det N | Det N "industry"          Det -> "the" | "a" | "an" | eps
    CP  -> ", that" VP ","
    PP  -> P DP PP | CP PP | PP "and" DP PP | eps
    N   -> canonical form of a lexical entry | label of a DBpedia entity
    P   -> preposition of a NounPPFrame entry | "in"
("and" DP PP joins a further branch: "the spouse of X and parent of Y", the paper's
Figure 2.)
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from math import floor
from typing import Any, Iterable, Sequence, TypeVar

from engines.compost.kg import Graph, Hop, load_graph
from engines.compost.lemon import load_lemon
from engines.compost.lexicon import CLAUSE_PROPS, RDF_TYPE, Entry, Lexicon, default_lexicon
from engines.compost.patterns import CENTRE, PatternNode, SubPattern, node, self_contained_cover, sub_patterns
from engines.compost.settings import CompostSettings
from engines.core import Item

SHAPES = ((2, 2), (3, 2), (2, 3), (3, 3))  # (depth, breadth), the paper's four base patterns
FRACTIONS = {"easy": 0.75, "medium": 0.5, "hard": 0.25}
MAX_CLAUSE_FACTS = 3  # the official items have up to four; three keeps questions readable
LEAN = 0.5  # how often a walk's centre or step prefers a node with a country, nationality or industry fact
MAX_FANOUT = 200  # skip hub nodes: a centre or inner node with more facts makes vague questions


@dataclass(frozen=True)
class Edge:
    """Edge ``(branch, level)`` of an instance: ``inner`` is nearer the centre than ``outer``."""

    prop: str
    forward: bool  # the inner node is the subject
    inner: str
    outer: str


Fact = tuple[str, str]  # (property IRI, value IRI) of a "that" clause about a node
T = TypeVar("T")


@dataclass
class Instance:
    depth: int
    breadth: int
    nodes: dict[tuple[int, int], str]
    edges: dict[tuple[int, int], Edge]
    entries: dict[str, Entry]
    clauses: dict[tuple[int, int], list[Fact]]


def centres(graph: Graph, breadth: int) -> list[str]:
    """Nodes with enough facts to start ``breadth`` branches (sorted: the choice must not depend on load order)."""
    return sorted(n for n, hops in graph.adjacency.items() if breadth <= len(hops) <= MAX_FANOUT)


def described(graph: Graph, lexicon: Lexicon) -> frozenset[str]:
    """Nodes with a dbo:country, dbo:nationality or dbo:industry fact the lexicon can verbalise.

    The bundled graph has such facts for few nodes (DBpedia has them for most), and a
    uniform walk stays in the densely linked music part of the graph; leaning towards
    these nodes lets the generated items show the clauses the paper describes.
    """
    return frozenset(n for n, hops in graph.adjacency.items()
                     if any(h.forward and h.prop in CLAUSE_PROPS and lexicon.describes(h.prop, h.other) for h in hops))


@dataclass(frozen=True)
class Starts:
    """The centres a walk may begin at, and those of them it leans to: built once per breadth, not per walk."""

    nodes: list[str]
    leaning: list[str]


def starts_for(graph: Graph, breadth: int, lean_to: frozenset[str]) -> Starts:
    nodes = centres(graph, breadth)
    return Starts(nodes, [n for n in nodes if n in lean_to])


def _leaning(rng: random.Random, options: Sequence[T], preferred: Sequence[T]) -> T:
    return rng.choice(preferred if preferred and rng.random() < LEAN else options)


def find_instance(graph: Graph, lexicon: Lexicon, depth: int, breadth: int, rng: random.Random,
                  starts: Starts, lean_to: frozenset[str] = frozenset(), tries: int = 2000) -> Instance:
    """A random instance of the shape from one of ``starts``: distinct nodes, lexicon properties;
    the centre and each step are a node of ``lean_to`` with probability ``LEAN`` when there is one."""
    for _ in range(tries):
        centre = _leaning(rng, starts.nodes, starts.leaning)
        nodes = {CENTRE: centre}
        edges: dict[tuple[int, int], Edge] = {}
        used = {centre}
        ok = True
        for j in range(breadth):
            current = centre
            for level in range(1, depth + 1):
                options = [h for h in graph.adjacency.get(current, ()) if h.other not in used
                           and h.prop in lexicon.props and len(graph.adjacency.get(h.other, ())) <= MAX_FANOUT]
                if not options:
                    ok = False
                    break
                hop: Hop = _leaning(rng, options, [h for h in options if h.other in lean_to])
                edges[(j, level)] = Edge(hop.prop, hop.forward, current, hop.other)
                nodes[(j, level)] = hop.other
                used.add(hop.other)
                current = hop.other
            if not ok:
                break
        if not ok or len({e.prop for e in edges.values()}) < 2:
            continue
        entries = {p: rng.choice(lexicon.by_prop[p]) for p in sorted({e.prop for e in edges.values()})}
        clauses = {}
        for key, iri in sorted(nodes.items()):  # "a random sample of random size" (paper, section 3.2)
            known = clause_facts(graph, lexicon, iri, edges.values())
            size = rng.randint(0, min(MAX_CLAUSE_FACTS, len(known)))
            if size:
                clauses[key] = rng.sample(known, size)
        return Instance(depth, breadth, nodes, edges, entries, clauses)
    raise RuntimeError(f"no instance of depth {depth}, breadth {breadth} found in {tries} tries")


def clause_facts(graph: Graph, lexicon: Lexicon, iri: str, edges: Iterable[Edge]) -> list[Fact]:
    """The facts about ``iri`` a "that" clause can verbalise, sorted; none that is already a pattern edge
    of the instance (the official data says "the citizen, that is Spanish, of Spain" twice over)."""
    own = {(e.prop, e.outer if e.forward else e.inner) for e in edges if (e.inner if e.forward else e.outer) == iri}
    facts = {(RDF_TYPE, cls) for cls in graph.types.get(iri, ())}
    facts.update((h.prop, h.other) for h in graph.adjacency.get(iri, ()) if h.forward and h.prop in CLAUSE_PROPS)
    return sorted(f for f in facts - own if lexicon.describes(*f))


# ------------------------------------------------------------------ verbalising


def that_clause(facts: list[Fact], graph: Graph, lexicon: Lexicon) -> str:
    """The EBNF's CP for ``facts``: ", that" VP "," with the "is" complements joined by "and"
    ("is a politician and German") and then each "works" PP ("and works in the software industry")."""
    if not facts:
        return ""
    said = [lexicon.predicate(prop, value, graph.label(value)) for prop, value in facts]
    copula = [words for verb, words in said if verb == "is"]
    vps = (["is " + " and ".join(copula)] if copula else []) + [f"{verb} {words}" for verb, words in said
                                                                 if verb != "is"]
    return ", that " + " and ".join(vps) + ","


def _phrase(instance: Instance, graph: Graph, lexicon: Lexicon, branch: int, level: int, end: int,
            with_clause: bool, article: bool) -> str:
    """The noun phrase for edge ``(branch, level)`` describing its inner node, down to ``end``."""
    edge = instance.edges[(branch, level)]
    reading = instance.entries[edge.prop].subj if edge.forward else instance.entries[edge.prop].obj
    inner = node(branch, level - 1)
    rest = (graph.label(edge.outer) if level == end
            else _phrase(instance, graph, lexicon, branch, level + 1, end, True, True))
    clause = that_clause(instance.clauses.get(inner, []), graph, lexicon) if with_clause else ""
    words = ["the" if article else "", reading.noun + clause, reading.prep, rest]
    return " ".join(w for w in words if w)


def question(instance: Instance, sp: SubPattern, graph: Graph, lexicon: Lexicon, rng: random.Random) -> str:
    """The question of the paper's EBNF (see the module docstring): "Give me DP CP PP." or
    "Who is DP CP PP?", the centre's clause after the first noun, further branches joined by "and"."""
    parts = [_phrase(instance, graph, lexicon, p.branch, p.start + 1, p.end, i == 0, i == 0)
             for i, p in enumerate(sp.pieces)]
    body = " and ".join(parts)
    return f"Give me {body}." if rng.random() < 0.5 else f"Who is {body}?"


def triples(instance: Instance, sp: SubPattern) -> list[tuple[str, str, str]]:
    """The gold triple patterns as SPARQL terms: ``?result``, ``?v<n>`` and full IRIs."""
    answer = sp.answer
    ends = {(p.branch, p.end) for p in sp.pieces}
    names: dict[tuple[int, int], str] = {answer: "?result"}
    out: list[tuple[str, str, str]] = []

    def term(key: tuple[int, int]) -> str:
        if key in ends:
            return f"<{instance.nodes[key]}>"
        if key not in names:
            names[key] = f"?v{len(names) - 1}"
        return names[key]

    for p in sp.pieces:
        for level in range(p.start + 1, p.end + 1):
            edge = instance.edges[(p.branch, level)]
            a, b = term(node(p.branch, level - 1)), term((p.branch, level))
            out.append((a, f"<{edge.prop}>", b) if edge.forward else (b, f"<{edge.prop}>", a))
    for key, var in list(names.items()):
        out.extend((var, f"<{prop}>", f"<{value}>") for prop, value in instance.clauses.get(key, []))
    return out


def render_query(tps: list[tuple[str, str, str]]) -> str:
    return "SELECT ?result WHERE { " + " ".join(f"{s} {p} {o} ." for s, p, o in tps) + " }"


# ---------------------------------------------------------------------- splits


def assign_splits(sizes: list[int], level: str) -> list[str]:
    """Train/val/test per sub-pattern of one base (by edge count; the last one is the full pattern)."""
    max_edges = sizes[-1]
    limit = max(2, floor(FRACTIONS[level] * max_edges))
    splits = ["train" if n <= limit else "" for n in sizes]
    rest = sorted((n, i) for i, n in enumerate(sizes[:-1]) if n > limit)
    n_val = min(len(rest) // 2, splits.count("train"))
    for k, (_, i) in enumerate(rest):
        splits[i] = "val" if k < n_val else "test"
    splits[-1] = "test"
    return splits


def edge_id(key: tuple[int, int]) -> str:
    return f"{key[0]}.{key[1]}"


def build_items(settings: CompostSettings, seed: int) -> list[Item]:
    graph = load_graph()
    lexicon = load_lemon(settings.lexicon) if settings.lexicon else default_lexicon()
    records: list[dict[str, Any]] = []
    lean_to = described(graph, lexicon)
    starts = {b: starts_for(graph, b, lean_to) for b in {breadth for _, breadth in SHAPES}}
    for shape_index, (depth, breadth) in enumerate(SHAPES):
        for b in range(settings.bases):
            rng = random.Random(f"{seed}:{depth}:{breadth}:{b}")
            instance = find_instance(graph, lexicon, depth, breadth, rng, starts[breadth], lean_to)
            subs = sub_patterns(depth, breadth)
            splits = assign_splits([len(sp.edges) for sp in subs], settings.level)
            base = f"b{shape_index}{b:02d}"
            for gid, (sp, split) in enumerate(zip(subs, splits)):
                tps = triples(instance, sp)
                records.append({
                    "id": f"{settings.level}-{base}-g{gid}",
                    "question": question(instance, sp, graph, lexicon, random.Random(f"{seed}:{base}:{gid}")),
                    "triples": tps, "split": split, "base": base, "gid": gid,
                    "edges": sorted(edge_id(e) for e in sp.edges), "depth": sp.depth, "breadth": sp.breadth,
                    "base_depth": depth, "base_breadth": breadth, "full": gid == len(subs) - 1,
                })
    train = [i for i, r in enumerate(records) if r["split"] == "train"]
    train_by_base: dict[str, list[int]] = defaultdict(list)
    for i in train:
        train_by_base[records[i]["base"]].append(i)
    return [_item(r, _shots(r, records, train, train_by_base[r["base"]], settings, seed), settings)
            for r in records if _wanted(r, settings)]


def _wanted(record: dict[str, Any], settings: CompostSettings) -> bool:
    if settings.task == "self-contained" and record["split"] == "train":
        return False
    return settings.split == "all" or record["split"] == settings.split


def _shots(record: dict[str, Any], records: list[dict[str, Any]], train: list[int], same_base: list[int],
           settings: CompostSettings, seed: int) -> list[dict[str, str]]:
    """Shots by index into ``records``: ``train`` holds every train record, ``same_base`` those of ``record``'s base."""
    if settings.task == "self-contained":
        by_gid = {records[i]["gid"]: i for i in same_base}
        picked = [by_gid[n.gid] for n in self_contained_cover(_node(record), [_node(records[i]) for i in same_base])]
    elif settings.shots:
        pool = [i for i in train if records[i]["id"] != record["id"]]
        picked = random.Random(f"{seed}:shots:{record['id']}").sample(pool, min(settings.shots, len(pool)))
    else:
        picked = []
    return [{"question": records[i]["question"], "query": render_query(records[i]["triples"])} for i in picked]


def _node(record: dict[str, Any]) -> PatternNode:
    return PatternNode(record["gid"], frozenset(record["edges"]), record["depth"], record["breadth"])


def _item(record: dict[str, Any], shots: list[dict[str, str]], settings: CompostSettings) -> Item:
    query = render_query(record["triples"])
    meta = {k: record[k] for k in ("split", "base", "gid", "edges", "depth", "breadth", "base_depth",
                                   "base_breadth", "full")}
    meta.update(level=settings.level, task=settings.task, num_edges=len(record["edges"]), source="generated")
    return Item(id=record["id"], engine="compost",
                inputs={"question": record["question"], "shots": shots},
                gold={"query": query, "triples": [list(t) for t in record["triples"]]}, meta=meta)
