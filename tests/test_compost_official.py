"""The official CompoST files: sub-pattern edges from the powersetgraphs, checked against the queries;
self-contained shots against the released ``*_10_fixed_*`` files; official runs through ``n2f``."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from engines.compost.official import lattices, load_official
from engines.compost.parse import parse_query
from engines.compost.patterns import PatternNode, self_contained_cover, sub_patterns
from engines.compost.settings import CompostSettings
from engines.core import DataError
from official_data import DATA_ROOT
from cli_support import n2f as cli_n2f

DATA = DATA_ROOT / "compost"
FILES = ("easy", "medium", "max")
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def path(file: str) -> Path:
    return DATA / f"compositionality_subgraph_{file}.json"


def raw(file: str) -> dict:
    return json.loads(path(file).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def items(file: str, **settings: str) -> tuple:
    """The official items, loaded once per file and task for the module (3 s a load; several tests read them)."""
    return tuple(load_official(CompostSettings(dataset=str(path(file)), **settings)))


def properties(query: str) -> Counter:
    """The relation triples' properties (rdf:type constraints are node labels, not edges)."""
    return Counter(t[1] for t in parse_query(query).triples if t[1] != RDF_TYPE)


@pytest.mark.needs_data
@pytest.mark.parametrize("file", FILES)
def test_the_powersetgraphs_are_the_sub_pattern_lattices(file):
    data = raw(file)
    shapes = lattices(data)
    assert sorted(shapes) == [(2, 2), (2, 3), (3, 2), (3, 3)]
    for graph in data["powersetgraphs"]:
        depth, breadth = graph["max_depth"], graph["max_breadth"]
        nodes = shapes[(depth, breadth)]
        ours = {frozenset(f"{b}.{lvl}" for b, lvl in sp.edges): sp for sp in sub_patterns(depth, breadth)}
        assert len(nodes) == len(ours) == graph["subgraphs"] + 1  # gid 0..subgraphs, the full pattern last
        assert {n.edges for n in nodes.values()} == set(ours)
        assert len(nodes[graph["subgraphs"]].edges) == graph["max_edges"] == depth * breadth
        for n in nodes.values():
            assert (n.depth, n.breadth) == (ours[n.edges].depth, ours[n.edges].breadth)
        links = json.loads(graph["powersetgraph"])
        gid_at = [node["gid"] for node in links["nodes"]]
        contains = {(gid_at[link["source"]], gid_at[link["target"]]) for link in links["links"]}
        assert contains == {(a, b) for a in nodes for b in nodes if nodes[b].edges < nodes[a].edges}


@pytest.mark.slow
@pytest.mark.needs_data
@pytest.mark.parametrize("file", FILES)
def test_every_item_gets_its_exact_edges(file):
    loaded = items(file)
    assert len(loaded) == 2803
    assert all(i.meta["edges"] and len(i.meta["edges"]) == i.meta["num_edges"] for i in loaded)
    assert all(i.meta["edges"] == sorted(i.meta["edges"]) for i in loaded)
    assert sorted(Counter(len(i.meta["edges"]) for i in loaded).items()) == [
        (1, 499), (2, 461), (3, 460), (4, 460), (5, 386), (6, 287), (7, 150), (8, 75), (9, 25)]
    full = [i for i in loaded if i.meta["full"]]
    assert len(full) == 75  # one per base instance
    assert all(i.meta["edges"] == [f"{b}.{lvl}" for b in range(i.meta["base_breadth"])
                                   for lvl in range(1, i.meta["base_depth"] + 1)] for i in full)


@pytest.mark.slow
@pytest.mark.needs_data
@pytest.mark.parametrize("file", FILES)
def test_the_edges_agree_with_the_queries(file):
    by_base = defaultdict(list)
    for i in items(file):
        by_base[i.meta["base"]].append((frozenset(i.meta["edges"]), properties(i.gold["query"])))
    pairs = exact = 0
    for group in by_base.values():
        for edges, props in group:
            for sub_edges, sub_props in group:
                if sub_edges < edges:  # a sub-pattern's relation triples are among its super-pattern's
                    pairs += 1
                    assert not sub_props - props
        # Bases whose questions carry no adjective constraint ("that is Spanish" -> dbo:country):
        # each item's properties are exactly those of its edges, read off the one-edge items.
        if all(sum(props.values()) == len(edges) for edges, props in group):
            prop_of = {next(iter(edges)): next(iter(props)) for edges, props in group if len(edges) == 1}
            assert all(props == Counter(prop_of[e] for e in edges) for edges, props in group)
            exact += 1
    assert pairs == 32005
    assert exact == {"easy": 61, "medium": 64, "max": 68}[file]


@pytest.mark.slow
@pytest.mark.needs_data
def test_a_known_base_spelled_out():
    loaded = {i.id: i for i in items("easy")}
    segment, chain, full = loaded["easy-o513-3x2-g9"], loaded["easy-o513-3x2-g15"], loaded["easy-o513-3x2-g20"]
    assert segment.inputs["question"] == "Give me the award of the reference to George Hamilton Cameron."
    assert segment.meta["edges"] == ["0.2", "0.3"]  # a segment of branch 0 away from the centre
    assert (segment.meta["depth"], segment.meta["breadth"], segment.meta["split"]) == (2, 1, "train")
    assert chain.inputs["question"] == ("Give me the residence of Doug Beattie and entity in the award of the "
                                        "reference to George Hamilton Cameron.")
    assert chain.meta["edges"] == ["0.1", "0.2", "0.3", "1.1"]
    assert full.meta["edges"] == ["0.1", "0.2", "0.3", "1.1", "1.2", "1.3"] and full.meta["split"] == "test"
    for gid, edge, prop in ((0, "0.1", "ontology/country"), (3, "0.2", "property/awards"), (2, "0.3", "foaf/0.1/name")):
        one = loaded[f"easy-o513-3x2-g{gid}"]
        assert one.meta["edges"] == [edge] and prop in one.gold["query"] and prop in full.gold["query"]


def test_the_cover_is_exact_then_shows_a_join():
    def node(gid: int, *edges: str) -> PatternNode:
        branches = {e.split(".")[0] for e in edges}
        levels = {e.split(".")[1] for e in edges}
        return PatternNode(gid, frozenset(edges), len(levels), len(branches))

    singles = [node(g, e) for g, e in enumerate(("0.1", "1.1", "0.2", "1.2"))]
    chains, join = [node(5, "0.1", "0.2"), node(6, "1.1", "1.2")], node(8, "0.1", "1.1")
    pool = [*singles, join, *chains]
    # Disjoint, largest first; then the join the chains do not show.
    assert self_contained_cover(node(9, "0.1", "0.2", "1.1", "1.2"), pool) == [*chains, join]
    # The join overlaps the chain already taken, so edge 1.1 comes alone and the join follows.
    assert self_contained_cover(node(7, "0.1", "0.2", "1.1"), pool) == [chains[0], singles[1], join]
    # A chain target covered by single edges gets a chain shot, from outside it if none is inside.
    assert self_contained_cover(node(5, "0.1", "0.2"), [*singles, join, chains[1]]) == [singles[0], singles[2],
                                                                                          chains[1]]


def released_shots(file: str) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Target (question, query) -> its shots' (question, query) in the released self-contained files."""
    out = {}
    for part in ("train", "test"):
        for line in (DATA / f"compositionality_subgraph_{file}_10_fixed_{part}.jsonl").open(encoding="utf-8"):
            turns = [m["content"] for m in json.loads(line)["messages"][1:]]
            pairs = list(zip(turns[::2], turns[1::2]))
            out[pairs[-1]] = pairs[:-1]
    return out


@pytest.mark.slow
@pytest.mark.needs_data
@pytest.mark.parametrize("file,same", [("easy", 0), ("medium", 0), ("max", 1745)])
def test_self_contained_shots_cover_and_match_the_released_files(file, same):
    edges = {(i.meta["base"], i.inputs["question"], i.gold["query"]): frozenset(i.meta["edges"])
             for i in items(file)}
    loaded = items(file, task="self-contained")
    assert {i.meta["split"] for i in loaded} == {"val", "test"}
    released = released_shots(file)
    inside = matched = 0
    for i in loaded:
        shots = [(s["question"], s["query"]) for s in i.inputs["shots"]]
        assert 0 < len(shots) <= 10
        assert frozenset().union(*(edges[(i.meta["base"], *s)] for s in shots)) >= frozenset(i.meta["edges"])
        theirs = released.get((i.inputs["question"], i.gold["query"]))
        if theirs is not None:
            inside += set(shots) <= set(theirs)
            matched += set(shots) == set(theirs)
    # Ours are the released shots minus their random parts: easy and medium pad to 10 shots with
    # random train items of the base, and a random join/chain shot differs in 98 max items.
    assert inside == {"easy": 373, "medium": 1070, "max": 1745}[file] and matched == same


@pytest.mark.needs_data
def test_an_inconsistent_file_is_refused(tmp_path):
    data = raw("easy")
    data["train"][0]["num_edges"] += 1
    bad = tmp_path / "compositionality_subgraph_easy.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match="powersetgraph has 1/1/1"):
        load_official(CompostSettings(dataset=str(bad)))


def n2f(*args: str) -> str:
    return cli_n2f(*args, check=True).stdout


@pytest.mark.slow
@pytest.mark.needs_data
def test_the_cli_serves_self_contained_items_and_scores_compositionality():
    dataset = f"dataset={path('easy')}"
    lines = n2f("items", "compost", "-s", dataset, "-s", "task=self-contained", "-s", "split=test").splitlines()
    assert len(lines) == 206 and all(json.loads(line)["inputs"]["shots"] for line in lines)
    report = json.loads(n2f("run", "compost", "-m", "oracle", "--json", "-q", "-s", dataset, "-s", "split=test"))
    # Train items are missing from the run: the authors' scorer counts them as green train items.
    assert report["metrics"]["compositionality_f1_test"] == 1.0 and report["metrics"]["compositionality_f1_def"] == 1.0
    assert not any("edge data" in note for note in report["notes"])
