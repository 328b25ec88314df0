"""CompoST lexicon: Turtle read by pyoxigraph, the Lemon import on the released lexicon, the default tables."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from engines.compost.generate import build_items
from engines.compost.lemon import LemonReading, TurtleError, load_lemon, read_lemon, turtle_triples
from engines.compost.lexicon import (ADJECTIVES, COUNTRY, DBO, DBP, DBR, INDUSTRY, NATIONALITY, RDF_TYPE, TYPES,
                                     Entry, Reading, article, default_lexicon, industry_phrase)
from engines.compost.settings import CompostSettings
from engines.core import DataError
from engines.compost.kg import KG_PATH
from sessions.tools.sparql import sparql
from official_data import DATA_ROOT

LEXICON = DATA_ROOT / "compost" / "lexicon"


@pytest.fixture(scope="module")
def lemon():
    return read_lemon(LEXICON)


@pytest.fixture(scope="module")
def imported():
    return load_lemon(LEXICON)


def test_turtle_is_read_by_pyoxigraph_with_the_released_files_slashed_names_escaped():
    text = """@prefix : <http://x/#> .
    @prefix lemon: <http://l#> .   # a comment
    @base <http://x#> .
    :e a lemon:LexicalEntry ;
      lemon:canonicalForm [ lemon:writtenRep "of"@en ] ;
      lemon:sense :s1, :s2 ;
      lemon:reference <http://dbpedia.org/ontology/spouse> ;
    .
    :odd-/-name lemon:writtenRep "say \\"hi\\" to a:b/c" ."""
    triples = turtle_triples(text)
    blank = next(o for s, p, o in triples if p == "http://l#canonicalForm")
    assert blank.startswith("_:")
    assert sorted(triples) == sorted([
        ("http://x/#e", RDF_TYPE, "http://l#LexicalEntry"),
        (blank, "http://l#writtenRep", "of"),
        ("http://x/#e", "http://l#canonicalForm", blank),
        ("http://x/#e", "http://l#sense", "http://x/#s1"),
        ("http://x/#e", "http://l#sense", "http://x/#s2"),
        ("http://x/#e", "http://l#reference", "http://dbpedia.org/ontology/spouse"),
        ("http://x/#odd-/-name", "http://l#writtenRep", 'say "hi" to a:b/c'),  # strings are left alone
    ])
    with pytest.raises(TurtleError):
        turtle_triples(":e :p :o")


def test_unreadable_lexica_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="no Lemon lexicon"):
        load_lemon(tmp_path)
    (tmp_path / "broken.ttl").write_text(":e :p ( :a ) .", encoding="utf-8")
    with pytest.raises(DataError, match="broken.ttl"):
        load_lemon(tmp_path)


@pytest.mark.slow
@pytest.mark.needs_data
def test_the_whole_released_lexicon_imports(lemon, imported):
    # 602 NounPPFrame files: a few carry two senses, and "TV show with" says the show is the object
    assert len(lemon.readings) == 625
    assert sum(r.side == "subj" for r in lemon.readings) == 79
    assert len(lemon.class_nouns) == 498  # the NounPredicateFrame rdf:type entries
    assert len(lemon.adjectives) == 237  # country and nationality adjectives
    base = default_lexicon()
    assert base.props < imported.props and len(imported.props) == 199
    assert sum(map(len, imported.by_prop.values())) == 314
    assert all(e.obj.noun and e.subj.noun for entries in imported.by_prop.values() for e in entries)


def _only(path: str, tmp_path: Path):
    shutil.copy(LEXICON / path, tmp_path)
    return read_lemon(tmp_path)


@pytest.mark.needs_data
def test_an_object_side_noun_pp_frame(tmp_path):
    found = _only("nouns/NounPPFrame-lexicon-alma-mater-of_381.ttl", tmp_path)
    assert found.readings == [LemonReading(DBO + "almaMater", "obj", Reading("alma mater", "of"),
                                           DBO + "Person", DBO + "EducationalInstitution")]


@pytest.mark.needs_data
def test_a_subject_side_noun_pp_frame_in_the_other_file_style(tmp_path):
    found = _only("nouns/comp/dbp-nounppframe-song-43451.ttl", tmp_path)  # prefixed names, no language tags
    assert found.readings == [LemonReading(DBO + "album", "subj", Reading("song", "on"), DBO + "Song", DBO + "Album")]


@pytest.mark.needs_data
def test_class_nouns_and_adjectives(tmp_path):
    found = _only("nouns/NounPredicateFrame-lexicon-academic_conference_287.ttl", tmp_path)
    assert found.class_nouns == {DBO + "AcademicConference": ["academic conference"]} and not found.readings
    found = _only("adjective/AdjectiveAttributiveFrame-lexicon-afghan_224.ttl", tmp_path)
    assert found.adjectives == {(COUNTRY, DBR + "Afghanistan"): ["afghan"]}
    lexicon = load_lemon(tmp_path)
    assert lexicon.predicate(COUNTRY, DBR + "Afghanistan", "Afghanistan") == ("is", "Afghan")
    assert lexicon.type_phrase(DBO + "AcademicConference") == "an academic conference"


@pytest.mark.needs_data
def test_both_readings_of_imported_properties(imported):
    # both sides imported: "the album of X" / "the song on X"
    assert imported.by_prop[DBO + "album"] == [Entry(DBO + "album", Reading("album", "of"), Reading("song", "on"))]
    # object side only, unknown to the default lexicon: the subject side derived from the domain's class noun
    assert imported.by_prop[DBO + "religion"] == [
        Entry(DBO + "religion", Reading("religion", "of"), Reading("person", "with the religion"))]
    # object side only, known to the default lexicon: its hand-written subject reading
    alma = imported.by_prop[DBO + "almaMater"]
    assert Entry(DBO + "almaMater", Reading("alma mater", "of"), Reading("alumnus", "of")) in alma
    assert {e.subj for e in alma} == {Reading("alumnus", "of")}
    starring = imported.by_prop[DBP + "starring"]
    assert Entry(DBP + "starring", Reading("actor", "of"), Reading("movie", "with")) in starring


@pytest.mark.needs_data
def test_default_tables_are_the_lemon_choices_for_what_the_graph_has(imported):
    assert TYPES and all(imported.types[c] == words for c, words in TYPES.items())
    shared = [k for k in ADJECTIVES if k in imported.adjectives]
    assert len(shared) > 150 and all(imported.adjectives[k] == ADJECTIVES[k] for k in shared)
    base = default_lexicon()
    assert base.type_phrase(DBO + "Politician") == "a politician"
    assert base.predicate(NATIONALITY, DBR + "Germany", "Germany") == ("is", "German")
    assert base.predicate(COUNTRY, DBR + "United_States", "United States") == ("is", "American")
    assert base.predicate(INDUSTRY, DBR + "Video_game_industry", "Video game industry") == (
        "works", "in the video game industry")
    assert base.describes(RDF_TYPE, DBO + "Politician") and not base.describes(RDF_TYPE, DBO + "Nothing")
    assert not base.describes(NATIONALITY, DBR + "Atlantis")


@pytest.mark.parametrize("words,expected", [("office holder", "an"), ("university", "a"), ("eukaryote", "a"),
                                            ("album", "an"), ("settlement", "a"), ("unit", "a"),
                                            ("umpire", "an")])
def test_articles(words, expected):
    assert article(words) == expected


@pytest.mark.parametrize("label,expected", [("Software", "software"), ("Video game industry", "video game"),
                                            ("Conglomerate (company)", "conglomerate"), ("IT", "IT")])
def test_industry_phrases(label, expected):
    assert industry_phrase(label) == f"in the {expected} industry"


@pytest.mark.needs_data
def test_a_run_with_the_released_lexicon_has_answers_and_uses_its_properties():
    items = build_items(CompostSettings(bases=3, lexicon=str(LEXICON)), seed=1)
    base = default_lexicon().props
    used = {t[1][1:-1] for i in items for t in i.gold["triples"]}
    assert DBO + "party" in used - base  # a property only the Lemon lexicon verbalises
    questions = [i.inputs["question"] for i in items]
    assert any("the party member of the party of Al Gore" in q for q in questions)

    async def run_all():
        return [json.loads(await sparql({"query": "", "gold": i.gold["query"], "graph": str(KG_PATH)})) for i in items]

    for item, result in zip(items, asyncio.run(run_all())):
        assert result["gold"]["rows"], item.id
