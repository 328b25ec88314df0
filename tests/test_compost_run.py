"""CompoST through the real ``n2f`` entry point: oracle, simulator, official data and replay, report."""

from __future__ import annotations

import json

import pytest

from engines import engine_names
from official_data import DATA_ROOT
from cli_support import n2f as cli_n2f

DATA = DATA_ROOT / "compost"


def n2f(*args: str) -> dict:
    return json.loads(cli_n2f(*args, check=True).stdout)


def test_registered_next_to_the_other_engines():
    assert {"dedc", "logic", "robogrid", "rgp", "compost"} <= set(engine_names())


# Sub-patterns (besides the full pattern) and edges per base shape (released-code notes):
# (3,3) 71/9, (2,2) 9/4, (3,2) 20/6, (2,3) 28/6.
SHAPES = {(3, 3): (71, 9), (2, 2): (9, 4), (3, 2): (20, 6), (2, 3): (28, 6)}


@pytest.mark.slow
def test_the_oracle_scores_the_authors_compositionality_f1_with_one_edge_items_as_false_positives():
    report = n2f("run", "compost", "-m", "oracle", "--json", "-q")  # 3 bases per shape
    m = report["metrics"]
    n = 3 * sum(subs + 1 for subs, _ in SHAPES.values())
    one_edge = 3 * sum(edges for _, edges in SHAPES.values())
    assert report["counts"]["correct"] == report["n"] == n
    precision = (n - one_edge) / n  # every one-edge item is green without descendants: FP; no FN
    assert m["macro_f1"] == 1.0 and m["compositionality_f1"] == pytest.approx(2 * precision / (1 + precision))
    assert m["compositionality_f1_val"] == m["compositionality_f1_test"] == 1.0  # one-edge items are train
    assert m["compositionality_f1_def"] == 1.0
    for split in ("train", "val", "test"):
        assert m[f"macro_f1_{split}"] == 1.0 and m[f"compositionality_f1_def_{split}"] == 1.0
    counts = next(t for t in report["tables"] if t["name"] == "Compositionality")
    assert counts["rows"][0][:6] == ["all", n - one_edge, one_edge, 0, 0, 0]
    assert any("extract=strict" in note for note in report["notes"])
    names = [t["name"] for t in report["tables"]]
    assert names == ["Table 1", "Compositionality", "Figure 4", "Figure 5", "Tags", "Review"]


@pytest.mark.slow
def test_the_simulator_makes_tagged_mistakes_and_the_run_finishes():
    report = n2f("run", "compost", "-m", "sim:error_rate=0.5", "--json", "-q", "-s", "level=hard")
    assert report["status"] == "finished" and report["counts"]["error"] == 0
    assert 0 < report["metrics"]["macro_f1"] < 1
    assert {"wrong_property", "inverted_direction", "unparseable"} <= set(report["tags"])


# The released outputs replayed through the CLI, level by level: test_papers.py's
# test_replayed_released_outputs_sit_beside_table_1 (one replay serves both checks; each costs 30-45 s).


@pytest.mark.slow
@pytest.mark.needs_data
def test_official_oracle_on_the_test_split():
    report = n2f("run", "compost", "-m", "oracle", "--json", "-q",
                 "-s", f"dataset={DATA / 'compositionality_subgraph_medium.json'}", "-s", "split=test")
    assert report["n"] == 561 and report["metrics"]["macro_f1"] == 1.0


def test_replay_reads_released_results_csv(tmp_path):
    import pytest

    from sessions.backends.offline import load_replay
    from sessions.errors import InputError

    path = tmp_path / "medium__zeroshot.csv"
    path.write_text('id,subid,base_depth,base_breadth,generated_sparql\n7,3,2,3,"SELECT ?x WHERE {\n ?x ?p ?o }"\n',
                    encoding="utf-8")
    assert load_replay(path) == {"medium-o7-2x3-g3": ["SELECT ?x WHERE {\n ?x ?p ?o }"]}
    with pytest.raises(InputError, match="easy__"):
        load_replay(tmp_path.joinpath("x.csv"))
    bad = tmp_path / "hard__x.csv"
    bad.write_text("id,subid\n1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        load_replay(bad)


@pytest.mark.slow
def test_unsafe_queries_are_refused_and_the_run_continues(tmp_path):
    items = cli_n2f("items", "compost", "-s", "bases=1", check=True).stdout.splitlines()
    ids = [json.loads(line)["id"] for line in items[:4]]
    replies = ["SELECT ?x WHERE { SERVICE <http://dbpedia.org/sparql> { ?x ?p ?o } }",
               "INSERT DATA { <http://a> <http://b> <http://c> }",
               "SELECT * WHERE { ?a ?p1 ?b . ?c ?p2 ?d . ?e ?p3 ?f . ?g ?p4 ?h . ?i ?p5 ?j . }",
               json.loads(items[3])["gold"]["query"]]
    replay = tmp_path / "unsafe.jsonl"
    replay.write_text("".join(json.dumps({"id": i, "output": r}) + "\n" for i, r in zip(ids, replies)))
    report = n2f("run", "compost", "-s", "bases=1", "-n", "4", "-m", f"replay:{replay}", "--json", "-q")
    assert report["status"] == "finished"
    assert report["counts"]["wrong"] == 2 and report["counts"]["correct"] == 1
    assert report["counts"]["unparseable"] == 1  # an update is not a query
    assert report["tags"]["query_failed"] == 2
