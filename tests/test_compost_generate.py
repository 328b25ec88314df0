"""CompoST generation: patterns, sub-patterns, verbalisation, splits, shots, and gold answers on the KG."""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from engines.compost.generate import assign_splits, build_items, edge_cover
from engines.compost.kg import load_graph
from engines.compost.patterns import sub_patterns
from engines.compost.settings import CompostSettings
from sessions.sparql import sparql

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.parametrize("depth,breadth,count", [(2, 2, 10), (3, 2, 21), (2, 3, 29), (3, 3, 72)])
def test_sub_pattern_counts_match_the_official_data(depth, breadth, count):
    subs = sub_patterns(depth, breadth)
    assert len(subs) == count  # official: gid 0..subgraphs, subgraphs = 9, 20, 28, 71
    assert len(subs[-1].edges) == depth * breadth


def test_splits_follow_the_edge_fraction_rule():
    sizes = [len(sp.edges) for sp in sub_patterns(3, 3)]
    easy = assign_splits(sizes, "easy")
    assert all(s == "train" for n, s in zip(sizes, easy) if n <= 6)
    assert easy[-1] == "test"
    hard = assign_splits(sizes, "hard")
    assert {n for n, s in zip(sizes, hard) if s == "train"} == {1, 2}  # 25% of 9 -> the minimum of two
    val = [n for n, s in zip(sizes, hard) if s == "val"]
    test = [n for n, s in zip(sizes[:-1], hard[:-1]) if s == "test"]
    assert max(val) <= min(test)


@pytest.fixture(scope="module")
def items():
    return build_items(CompostSettings(bases=2), seed=3)


def test_every_generated_gold_query_has_answers_on_the_embedded_graph(items):
    async def run_all():
        out = []
        for item in items:
            out.append(json.loads(await sparql({"query": "", "gold": item.gold["query"]})))
        return out

    for item, result in zip(items, asyncio.run(run_all())):
        assert result["gold"]["rows"], item.id


def _words(text: str) -> list[str]:
    return text.replace("?", " ").replace(".", " ").replace(",", " ").split()


def test_sub_patterns_reuse_the_base_patterns_words(items):
    graph = load_graph()
    by_base = defaultdict(list)
    for item in items:
        by_base[item.meta["base"]].append(item)
    for group in by_base.values():
        full = next(i for i in group if i.meta["full"])
        assert len(group) == len(sub_patterns(full.meta["base_depth"], full.meta["base_breadth"]))
        words = set(_words(full.inputs["question"]))
        for item in group:  # the entities at the ends of sub-patterns are inner nodes of the base
            for t in item.gold["triples"]:
                words.update(w for x in (t[0], t[2]) if x.startswith("<") for w in _words(graph.label(x[1:-1])))
        for item in group:
            q = item.inputs["question"]
            assert q.startswith(("Give me the ", "Who is the ")) and q.endswith((".", "?"))
            assert set(_words(q)) - words <= {"Give", "me", "Who", "is"}


def test_item_shape_and_determinism(items):
    again = build_items(CompostSettings(bases=2), seed=3)
    assert [i.to_json() for i in items] == [i.to_json() for i in again]
    item = items[-1]
    assert item.gold["query"].startswith("SELECT ?result WHERE {")
    assert Counter(i.meta["split"] for i in items)["test"] >= 8
    assert {(i.meta["base_depth"], i.meta["base_breadth"]) for i in items} == {(2, 2), (3, 2), (2, 3), (3, 3)}
    assert any("that is" in i.inputs["question"] for i in items)
    assert any(t[0] != "?result" and t[2] == "?result" for i in items for t in i.gold["triples"])  # inverted


def test_self_contained_shots_cover_the_target_from_train():
    items = build_items(CompostSettings(bases=1, task="self-contained", level="hard"), seed=1)
    assert items and all(i.meta["split"] in ("val", "test") for i in items)
    for item in items:
        assert 1 <= len(item.inputs["shots"]) <= 10


def test_few_shot_classic_items_carry_train_shots():
    items = build_items(CompostSettings(bases=1, shots=4, split="test"), seed=1)
    assert all(len(i.inputs["shots"]) == 4 for i in items)


def test_edge_cover_is_greedy_and_exact():
    target = frozenset({"a", "b", "c"})
    assert sorted(edge_cover(target, [(frozenset({"a"}), 0), (frozenset({"a", "b"}), 1), (frozenset({"c"}), 2),
                                      (frozenset({"d"}), 3)])) == [1, 2]


def test_official_self_contained_items_carry_a_cover_from_train():
    from engines.compost.official import load_official

    settings = CompostSettings(dataset=str(DATA / "compost" / "compositionality_subgraph_easy.json"),
                               task="self-contained")
    items = load_official(settings)
    assert len(items) == 180 + 206  # val + test
    assert sum(bool(i.inputs["shots"]) for i in items) > 0.95 * len(items)
    assert all(len(i.inputs["shots"]) <= 10 for i in items)
