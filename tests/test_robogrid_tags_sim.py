"""The failure taxonomy of appendix A.4: automatic tags with evidence, and the simulator exercising them."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from engines.core import SettingsError, SimOptions, parse_settings
from engines.robogrid import ENGINE
from engines.robogrid.generate import make_item
from engines.robogrid.grammars import grammar_for
from engines.robogrid.lexicon import alien_lexicon, natural_lexicon
from engines.robogrid.drifts import DRIFTS
from engines.robogrid.nodes import Arith, Grab, Holding, If, Logic, Loop, Move, Not, Num, Program, Turn
from engines.robogrid.programs import Shape, sample_program
from engines.robogrid.settings import RobogridSettings
from engines.robogrid.world import State

PAPER_CODES = ["lexical_mapping_failure", "operator_confusion", "scoping_failure", "premature_scope_termination",
               "predicate_inversion", "arithmetic_collapse", "planning_horizon_collapse", "arithmetic_flattening",
               "boolean_flattening", "autoregressive_echoing"]
DO_SET = grammar_for("block", natural_lexicon("do"))  # do/stop, repeat/times, when/next, move, take, has, no
ACT_SET = grammar_for("block", natural_lexicon("act"))  # act/fin, repeat/iters, when/next, go, take, has
ALIEN = grammar_for("block", alien_lexicon(random.Random(9)))

PROGRAM = Program((
    Move("forward", Num(5)),
    If(Not(Holding("item_2")), (Grab("cube_3"),)),
    Loop(Num(3), (If(Not(Holding("box_0")), (Move("backward", Num(5)),)),)),
    If(Logic("or", Not(Holding("ball")), Logic("and", Holding("key_3"), Holding("key_4"))),
       (Turn("left"), Loop(Num(4), (Turn("left"),))), (Move("forward", Arith("*", Arith("*", Num(4), Num(5)),
                                                                               Num(1))),)),
    Loop(Arith("+", Arith("*", Num(4), Num(4)), Num(3)), (Turn("left"),)),
    Move("forward", Arith("+", Arith("*", Num(2), Num(4)), Arith("+", Num(1), Num(3)))),
))


def item(grammar=DO_SET, task="instruct", program=PROGRAM):
    return make_item(f"case-{grammar.lexicon.name}", task, program, grammar, State(0, 0, "N", ("key_3",)),
                     meta={"cot": False})


def tags_of(reply: str, it=None) -> dict[str, str]:
    verdict = ENGINE.score(it or item(), [reply], None)
    return {t.code: t.evidence for t in verdict.tags}


def test_the_taxonomy_has_the_stable_codes_with_labels_and_groups():
    codes = [t.code for t in ENGINE.taxonomy()]
    assert set(PAPER_CODES) <= set(codes) and codes[-2:] == ["unparseable", "format_violation"]
    assert {"step_limit", "ast_mismatch"} <= set(codes)
    assert all(t.label and t.description and t.group for t in ENGINE.taxonomy())


# ------------------------------------------------ appendix A.4.1: syntactic fragility


def test_case_1_lexical_mapping_failure_names_the_terminal():
    gold = item().gold["program"]
    assert gold.startswith("do move forward 5 stop")
    found = tags_of(gold.replace("do move forward 5 stop", "DO MOVE forward 5 END", 1))
    assert "lexical_mapping_failure" in found and "'DO'" in found["lexical_mapping_failure"]
    assert "spells DO as 'do'" in found["lexical_mapping_failure"]
    alien_gold = item(ALIEN).gold["program"]
    first = alien_gold.split()[0]
    found = tags_of(alien_gold.replace(first, "do", 1), item(ALIEN))
    assert "natural-lexicon keyword" in found["lexical_mapping_failure"]


def test_case_2_an_action_wrapped_around_a_control_block_is_a_scoping_failure():
    gold = item(ACT_SET).gold["program"]
    block = "when no (has item_2) next {\n  act take cube_3 fin\n}"
    assert block.replace("no", "not") in gold
    wrapped = gold.replace(block.replace("no", "not"), "act " + block.replace("no", "not") + " fin")
    found = tags_of(wrapped, item(ACT_SET))
    assert "scoping_failure" in found and "'act'" in found["scoping_failure"]


def test_case_3_arithmetic_words_are_operator_confusion():
    it = item(ACT_SET)
    gold = it.gold["program"]
    assert "act go forward ((2 * 4) + (1 + 3)) fin" in gold
    found = tags_of(gold.replace("((2 * 4) + (1 + 3))", "((2 times 4) plus (1 plus 3))"), it)
    assert "operator_confusion" in found and "'times'" in found["operator_confusion"]
    prefix = tags_of(gold.replace("((2 * 4) + (1 + 3))", "(+ (2 * 4) (1 + 3))"), it)
    assert "written prefix" in prefix["operator_confusion"]


def test_case_4_a_missing_brace_is_premature_scope_termination():
    it = item(grammar_for("c", natural_lexicon("do")))
    gold = it.gold["program"]
    cut = gold.rfind("}")
    found = tags_of(gold[:cut] + gold[cut + 1:], it)
    assert "left open" in found["premature_scope_termination"]
    found = tags_of(gold + "\n}", it)
    assert "not open" in found["premature_scope_termination"]


# ----------------------------------------- appendix A.4.2-3: behaviour and semantics


def reply_for(program: Program, grammar=DO_SET) -> str:
    return make_item("x", "instruct", program, grammar).gold["program"]


def with_stmt(index: int, stmt) -> Program:
    body = list(PROGRAM.body)
    body[index] = stmt
    return Program(tuple(body))


def test_behavioural_failures_are_told_apart():
    inverted = with_stmt(3, If(Logic("and", Not(Holding("ball")), Logic("and", Holding("key_3"), Holding("key_4"))),
                               PROGRAM.body[3].then, PROGRAM.body[3].orelse))
    found = tags_of(reply_for(inverted))
    assert set(found) == {"predicate_inversion"} and "not equivalent" in found["predicate_inversion"]
    collapsed = with_stmt(3, If(PROGRAM.body[3].cond, PROGRAM.body[3].then,
                                (Move("forward", Arith("+", Arith("*", Num(4), Num(5)), Num(1))),)))
    found = tags_of(reply_for(collapsed))
    assert set(found) == {"arithmetic_collapse"} and "= 21" in found["arithmetic_collapse"]
    truncated = Program(PROGRAM.body[:4])
    found = tags_of(reply_for(truncated))
    assert set(found) == {"planning_horizon_collapse"}
    assert "stops after 11 of the gold's 14 statements" in found["planning_horizon_collapse"]


def test_semantic_drift_keeps_the_state_and_loses_the_tree():
    cases = {
        "arithmetic_flattening": with_stmt(4, Loop(Num(19), (Turn("left"),))),
        "boolean_flattening": with_stmt(3, If(Logic("or", Not(Holding("ball")), Logic("and", Holding("key_4"),
                                                                                         Holding("key_3"))),
                                              PROGRAM.body[3].then, PROGRAM.body[3].orelse)),
        "autoregressive_echoing": Program(PROGRAM.body[:3] + (PROGRAM.body[2],) + PROGRAM.body[3:]),
    }
    it = item()
    for code, program in cases.items():
        verdict = ENGINE.score(it, [reply_for(program)], None)
        assert {t.code for t in verdict.tags} == {code}, code
        assert verdict.scores["scr"] == 0.0
    assert ENGINE.score(it, [reply_for(cases["arithmetic_flattening"])], None).scores["ber"] == 1.0


def test_a_block_closed_early_in_a_parseable_program():
    gold = Program((Loop(Num(4), (Turn("left"), Move("forward", Num(1)), Grab("key"))), Turn("right")))
    early = Program((Loop(Num(4), (Turn("left"),)), Move("forward", Num(1)), Grab("key"), Turn("right")))
    late = Program((Loop(Num(4), (Turn("left"), Move("forward", Num(1)), Grab("key"), Turn("right"))),))
    it = item(program=gold)
    found = tags_of(reply_for(early), it)
    assert set(found) == {"premature_scope_termination"}
    assert "closed before `move forward 1`" in found["premature_scope_termination"]
    assert "left open" in tags_of(reply_for(late), it)["premature_scope_termination"]


@hsettings(max_examples=80, deadline=None)
@given(gold_seed=st.integers(0, 10**6), reply_seed=st.integers(0, 10**6), depth=st.integers(2, 9),
       style=st.sampled_from(["block", "c", "sexpr"]), task=st.sampled_from(["goal", "instruct"]))
def test_any_wrong_program_gets_a_tag_with_evidence(gold_seed, reply_seed, depth, style, task):
    grammar = grammar_for(style, natural_lexicon("run"))
    gold = sample_program(Shape(depth, 3, 0.5, 2), random.Random(gold_seed))
    reply = sample_program(Shape(max(2, depth - 1), 3, 0.5, 2), random.Random(reply_seed))
    it = make_item(f"h-{style}-{gold_seed}", task, gold, grammar, meta={"cot": False})
    verdict = ENGINE.score(it, [make_item("r", task, reply, grammar).gold["program"]], None)
    assert verdict.scores["svr"] == 1.0
    if verdict.scores.get("scr", verdict.scores["ber"]) == 0.0 and task == "instruct":
        assert verdict.tags and all(t.evidence for t in verdict.tags)
    json.dumps(verdict.to_json())


# ------------------------------------------------------------------ the simulator


def sim_items(task: str = "instruct", **extra: str):
    pairs = [f"task={task}", "count=24", "depth=3,8", "style=block,c,sexpr", "lexicon=natural,alien", "cot=false"]
    s = parse_settings(RobogridSettings, pairs + [f"{k}={v}" for k, v in extra.items()])
    return s, ENGINE.items(s, 11)


@pytest.mark.slow
@pytest.mark.parametrize("code", [t.code for t in ENGINE.taxonomy()])
def test_each_forced_error_produces_its_tag_where_the_item_allows_it(code):
    s, items = sim_items()
    applicable = 0
    hits = 0
    for k, it in enumerate(items):
        from engines.robogrid.score import item_gold

        if code in DRIFTS and DRIFTS[code](item_gold(it), random.Random(0)) is None:
            continue  # nothing of that kind in this program (no If to invert...)
        applicable += 1
        reply = ENGINE.simulate(it, None, [], SimOptions(error=code), k)
        verdict = ENGINE.score(it, [reply], s, with_views=False)
        found = {t.code: t.evidence for t in verdict.tags}
        hits += code in found
        assert all(found.values())
        if code not in ("format_violation",):
            assert verdict.status != "correct", (it.id, code, reply)
    assert applicable >= 40 and hits >= 0.9 * applicable, (code, hits, applicable)


def test_without_errors_the_simulator_is_always_right_and_still_varies_its_form():
    for task in ("judge", "goal", "instruct"):
        s, items = sim_items(task)
        replies = [ENGINE.simulate(it, None, [], SimOptions(error_rate=0.0), k) for k, it in enumerate(items)]
        verdicts = [ENGINE.score(it, [r], s, with_views=False) for it, r in zip(items, replies)]
        assert all(v.status == "correct" for v in verdicts), task
        assert {t.code for v in verdicts for t in v.tags} <= {"format_violation"}
        if task != "judge":
            assert any(r != it.gold["program"] for r, it in zip(replies, items))  # reflowed or wrapped


def test_the_error_rate_is_honoured_and_replies_are_deterministic():
    s, items = sim_items()
    statuses = Counter()
    for k, it in enumerate(items):
        a = ENGINE.simulate(it, None, [], SimOptions(error_rate=0.5, seed=4), k)
        assert a == ENGINE.simulate(it, None, [], SimOptions(error_rate=0.5, seed=4), k)
        statuses[ENGINE.score(it, [a], s, with_views=False).status] += 1
    assert len(items) == 288 and statuses == {"correct": 134, "wrong": 103, "unparseable": 51}  # the 0.5 error rate, seed 4


def test_a_hand_written_wrong_judgement_is_wrong_and_tagged_with_what_was_missed():
    """"VALID" on a perturbed program is wrong and carries the perturbation's tag; "INVALID" on a
    valid one is wrong with no error tag (nothing was perturbed); the right word is correct."""
    s, items = sim_items("judge")
    perturbed = [it for it in items if it.gold.get("perturbation")]
    valid = [it for it in items if it.gold["answer"] == "VALID"]
    assert perturbed and valid
    for it in perturbed:
        missed = ENGINE.score(it, ["VALID"], s, with_views=False)
        assert missed.status == "wrong" and [t.code for t in missed.tags] == [it.gold["perturbation"]]
        assert missed.tags[0].evidence.startswith("judged VALID, but ")
        assert ENGINE.score(it, ["INVALID"], s, with_views=False).status == "correct"
    for it in valid:
        false_alarm = ENGINE.score(it, ["INVALID"], s, with_views=False)
        assert false_alarm.status == "wrong" and not false_alarm.tags


def test_an_unknown_forced_error_is_refused():
    _, items = sim_items()
    with pytest.raises(SettingsError, match="unknown error"):
        ENGINE.simulate(items[0], None, [], SimOptions(error="omission"), 0)
