"""Scoring (section 4.2): SVR, BER, SCR per task, reply extraction, containment, garbage."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from engines.core import ItemResult, RunResults, SimOptions, parse_settings
from engines.parsing import ParseFailure
from engines.robogrid import ENGINE
from engines.robogrid.generate import make_item
from engines.robogrid.grammars import grammar_for
from engines.robogrid.lexicon import alien_lexicon, natural_lexicon
from engines.robogrid.nodes import Arith, Grab, Holding, If, Loop, Move, Num, Program, Turn
from engines.robogrid.parse import MAX_CHARS, Parsed, parse_reply
from engines.robogrid.settings import RobogridSettings
from engines.robogrid.tags import CODES
from engines.robogrid.world import State

NINETEEN = Arith("+", Arith("*", Num(4), Num(4)), Num(3))
PROGRAM = Program((
    Loop(NINETEEN, (Turn("left"), Move("forward", Num(2)))),
    If(Holding("key"), (Grab("box_1"),), (Turn("right"),)),
    Move("backward", Arith("*", Num(2), Num(3))),
))
EXEC = grammar_for("block", natural_lexicon("exec"))


def item(task: str = "instruct", program: Program = PROGRAM, grammar=EXEC, cot: bool = False, **kw):
    return make_item(f"t-{task}-{grammar.style}", task, program, grammar, State(0, 0, "N", ("key",)),
                     meta={"cot": cot}, **kw)


LENIENT = RobogridSettings(extract="lenient")


def score(it, reply: str, settings=None):
    return ENGINE.score(it, [reply], settings)


def codes(verdict) -> set[str]:
    return {t.code for t in verdict.tags}


# ------------------------------------------------------------------ the oracle


@pytest.mark.parametrize("style", ["block", "c", "sexpr"])
@pytest.mark.parametrize("lexicon", ["natural", "alien"])
def test_the_oracle_is_right_on_every_task(style, lexicon):
    s = parse_settings(RobogridSettings, ["task=judge,goal,instruct", "count=8", f"style={style}",
                                          f"lexicon={lexicon}", "depth=2,12"])
    expected = {"judge": {"svr": 1.0}, "goal": {"svr": 1.0, "ber": 1.0}, "instruct": {"svr": 1.0, "ber": 1.0,
                                                                                       "scr": 1.0}}
    for it in ENGINE.items(s, 3):
        verdict = ENGINE.score(it, [ENGINE.oracle(it, None, [])], s)
        assert verdict.status == "correct" and verdict.scores == expected[it.meta["task"]], it.id
        assert not verdict.tags


# ------------------------------------------------------------------ the brief's two cases


def test_replacing_an_expression_by_its_value_keeps_ber_and_loses_scr():
    it = item()
    gold = it.gold["program"]
    assert "loop ((4 * 4) + 3) times [" in gold
    verdict = score(it, gold.replace("((4 * 4) + 3)", "19"))
    assert verdict.scores == {"svr": 1.0, "ber": 1.0, "scr": 0.0} and verdict.status == "wrong"
    assert codes(verdict) == {"arithmetic_flattening"}
    evidence = verdict.tags[0].evidence
    assert "19" in evidence and "((4 * 4) + 3)" in evidence and "body[0]" in evidence


@pytest.mark.parametrize("style", ["block", "c", "sexpr"])
def test_deleting_one_closing_delimiter_loses_svr(style):
    it = item(grammar=grammar_for(style, alien_lexicon(random.Random(1))))
    gold = it.gold["program"]
    closer = "]" if style == "block" and "]" in gold else ("}" if style != "sexpr" else ")")
    cut = gold.rfind(closer)
    verdict = score(it, gold[:cut] + gold[cut + 1:])
    assert verdict.status == "unparseable"
    assert verdict.scores == {"svr": 0.0, "ber": 0.0, "scr": 0.0}
    assert {"unparseable", "premature_scope_termination"} <= codes(verdict)
    assert "line " in verdict.tags[0].evidence and "column " in verdict.tags[0].evidence


# ------------------------------------------------------------------ tasks


def test_goal_accepts_any_program_that_reaches_the_target():
    it = item("goal")
    assert it.inputs["target_text"] == "pos (-6, -2), facing E, inventory box_1, key"
    other = "exec go backward 2 end\nexec turn right end\nexec go backward (2 * 3) end\nexec grab box_1 end"
    verdict = score(it, other)
    assert verdict.status == "correct" and verdict.scores == {"svr": 1.0, "ber": 1.0} and not verdict.tags
    short = score(it, "exec go backward 2 end")
    assert short.status == "wrong" and short.scores == {"svr": 1.0, "ber": 0.0}


def test_a_runaway_reply_is_stopped_and_tagged():
    it = item()
    verdict = score(it, "loop 999999 times [ loop 999999 times [ exec turn left end ] ]")
    assert verdict.scores == {"svr": 1.0, "ber": 0.0, "scr": 0.0, "step_limit": 1.0}
    assert "step_limit" in codes(verdict)


def test_the_judge_is_the_whole_reply_strictly_and_the_last_verdict_word_leniently():
    s = parse_settings(RobogridSettings, ["task=judge", "count=2", "cot=false"])
    valid, invalid = ENGINE.items(s, 0)
    assert (valid.gold["answer"], invalid.gold["answer"]) == ("VALID", "INVALID")
    assert score(valid, "VALID").status == "correct"
    assert score(valid, "valid").scores == {"svr": 1.0}
    assert not score(valid, "'VALID'.").tags  # quotes and a full stop are not prose
    wrong = score(invalid, "VALID")
    assert wrong.status == "wrong" and wrong.scores == {"svr": 0.0}
    assert codes(wrong) == {invalid.gold["perturbation"]}
    assert score(invalid, "I am not sure.").status == "unparseable"
    # prose around the word: not a judgement by the strict reading (the prompt says "nothing else")
    chatty = score(valid, "The answer is VALID.")
    assert chatty.status == "unparseable" and codes(chatty) == {"unparseable", "format_violation"}
    assert "is not VALID or INVALID" in chatty.tags[0].evidence and "line 1, column 1" in chatty.tags[0].evidence
    # the prompt echoed back holds both words: never read as a judgement
    echo = score(valid, "If the code can be parsed by the grammar, output 'VALID'. Otherwise, output 'INVALID'.")
    assert echo.status == "unparseable"
    lenient = score(valid, "It looks INVALID at first, but after checking: VALID", LENIENT)
    assert lenient.status == "unparseable" and lenient.scores["lenient_correct"] == 1.0  # status stays strict
    cot = item(task="judge", cot=True)  # a valid program: the gold answer is VALID
    assert score(cot, "Each statement follows the rules.\nANSWER: VALID").status == "correct"
    assert score(cot, "ANSWER: VALID\nor maybe not").status == "unparseable"


# ------------------------------------------------------------------ extraction


def test_the_program_is_found_in_fences_after_markers_or_among_prose():
    it = item(cot=True)
    gold = it.gold["program"]
    cases = {
        "fenced": f"Reasoning about loops...\n```robogrid\n{gold}\n```\nDone.",
        "last fence wins": f"```\nexec turn left end\n```\nbetter:\n```\n{gold}\n```",
        "unclosed fence": f"FINAL PROGRAM:\n```\n{gold}\n",
        "marker": f"I think step by step.\nFINAL PROGRAM:\n{gold}",
    }
    for name, reply in cases.items():
        verdict = score(it, reply)
        assert verdict.status == "correct", name
        assert "format_violation" not in codes(verdict), name  # CoT replies may reason first
    # a bare program among prose is not where the prompt asks for it: read only leniently
    loose = score(it, f"Here you go:\n{gold}\nHope it helps")
    assert loose.status == "unparseable" and "format_violation" in codes(loose)
    lenient = score(it, f"Here you go:\n{gold}\nHope it helps", LENIENT)
    assert lenient.status == "unparseable" and lenient.scores["lenient_correct"] == 1.0
    assert lenient.scores["lenient_svr"] == 1.0 and lenient.scores["svr"] == 0.0
    direct = item(cot=False)
    fenced = score(direct, f"```\n{gold}\n```")
    assert fenced.status == "correct" and codes(fenced) == {"format_violation"}
    assert not score(direct, f"  \n{gold}\n\n").tags


def test_an_empty_reply_is_unparseable_even_where_the_grammar_allows_an_empty_program():
    it = item(grammar=grammar_for("c", natural_lexicon("run")))
    for reply in ("", "   \n", "```\n```"):
        verdict = score(it, reply)
        assert verdict.status == "unparseable" and verdict.scores["svr"] == 0.0


# ------------------------------------------------------------------ properties


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), task=st.sampled_from(["judge", "goal", "instruct"]),
       style=st.sampled_from(["block", "c", "sexpr"]), lexicon=st.sampled_from(["natural", "alien"]),
       depth=st.integers(2, 12), code=st.sampled_from(("",) + CODES), rate=st.floats(0, 1))
def test_scr_le_ber_le_svr_on_every_reply_and_every_run(seed, task, style, lexicon, depth, code, rate):
    s = parse_settings(RobogridSettings, [f"task={task}", "count=4", f"style={style}", f"lexicon={lexicon}",
                                          f"depth={depth}"])
    results = []
    for k, it in enumerate(ENGINE.items(s, seed)):
        reply = ENGINE.simulate(it, None, [], SimOptions(error_rate=rate, error=code, seed=seed), k)
        verdict = ENGINE.score(it, [reply], s, with_views=False)
        sc = verdict.scores
        assert sc.get("scr", 0.0) <= sc.get("ber", sc["svr"]) <= sc["svr"]
        if task != "judge":
            assert (verdict.status == "unparseable") == (sc["svr"] == 0.0)
        results.append(ItemResult(it, verdict.status, sc, verdict.tags, [reply]))
    metrics = ENGINE.report(RunResults("r", "sim", s, results)).metrics
    assert metrics.get("scr", 0.0) <= metrics.get("ber", metrics["svr"]) <= metrics["svr"]
    assert metrics.get("cscr", 0.0) <= metrics.get("cber", 1.0) <= 1.0


_STYLE_SNIPPETS = [
    "run(((0 + 1) * 4)){ go(forward,2); }",
    "(repeat (* (+ 0 1) 4) (go forward 2))",
    "loop ((4 * 4) + 3) times [ exec turn left end ]",
    "if (has key) { do move forward 5 stop }",
    "DO MOVE forward 5 END",
]


@hsettings(max_examples=150, deadline=None)
@given(text=st.one_of(
    st.text(max_size=400),
    st.text(alphabet="()[]{};, \n", max_size=2000),
    st.lists(st.sampled_from(_STYLE_SNIPPETS), max_size=8).map("\n".join),
    st.builds(lambda a, b: a + b, st.sampled_from(_STYLE_SNIPPETS), st.text(max_size=50)),
), style=st.sampled_from(["block", "c", "sexpr"]), alien=st.booleans())
def test_garbage_is_unparseable_with_a_position_never_a_crash(text, style, alien):
    grammar = grammar_for(style, alien_lexicon(random.Random(3)) if alien else natural_lexicon("exec"))
    result = parse_reply(text, grammar)
    assert isinstance(result, (ParseFailure, Parsed))
    if isinstance(result, ParseFailure):
        assert result.line >= 1 and result.column >= 1 and "^" in result.context
    it = item(grammar=grammar)
    verdict = ENGINE.score(it, [text], None)
    assert verdict.status in ("unparseable", "wrong", "correct")
    assert all(t.evidence for t in verdict.tags)


@pytest.mark.slow
@pytest.mark.parametrize("text", [
    "(" * 100_000, ")" * 100_000, "[" * 50_000 + "]" * 50_000, "{" * 100_001,
    "loop 1 times [" * 20_000, "(" * 60_000 + "go forward 1" + ")" * 40,
], ids=["open", "close", "balanced", "braces", "nested-loops", "deep-action"])
def test_100_kb_of_brackets_is_refused_with_a_position(text):
    for style in ("block", "c", "sexpr"):
        grammar = grammar_for(style, natural_lexicon("exec"))
        verdict = ENGINE.score(item(grammar=grammar), [text], None)
        assert verdict.status == "unparseable" and verdict.scores["svr"] == 0.0
        failure = parse_reply(text, grammar)
        assert isinstance(failure, ParseFailure) and failure.line >= 1 and 1 <= failure.column <= MAX_CHARS + 1


def test_another_styles_program_is_unparseable_with_line_and_column():
    it = item()  # block style
    c_text = make_item("c", "instruct", PROGRAM, grammar_for("c", natural_lexicon("exec"))).gold["program"]
    verdict = score(it, c_text)
    assert verdict.status == "unparseable"
    assert verdict.tags[0].evidence.startswith("line 1, column ")


def test_reaching_the_goal_then_looping_past_the_cap_is_step_limit_and_counted_apart():
    # the gold program, then a loop that keeps turning (4 turns: the goal state again) far past 10,000 steps
    it = item("goal")
    gold = it.gold["program"]
    looping = gold + "\nloop 400000 times [ exec turn left end exec turn left end exec turn left end exec turn left end ]"
    verdict = score(it, looping)
    assert verdict.status == "wrong" and verdict.scores["ber"] == 0.0 and verdict.scores["step_limit"] == 1.0
    assert "step_limit" in codes(verdict)
    assert "execution stopped at the cap of 10000 steps" in next(t.evidence for t in verdict.tags
                                                                 if t.code == "step_limit")
    report = ENGINE.report(RunResults("r", "m", RobogridSettings(task="goal"), [
        ItemResult(it, verdict.status, verdict.scores, verdict.tags),
        ItemResult(it, "correct", {"svr": 1.0, "ber": 1.0}, [])]))
    assert report.metrics["step_limit"] == 1.0
    assert any("1 program(s) stopped at the step cap" in n for n in report.notes)


def test_an_echo_of_the_grammar_gets_no_syntax_tag():
    from engines.replies import echo_evidence
    from engines.robogrid.score import item_grammar
    from engines.robogrid.tags import syntax_tags

    it = item("instruct")
    prompt = ENGINE.next_step(it, RobogridSettings(), []).messages[0].content
    # the grammar's rules rewritten in lower case: no line is the prompt's, the whole is nearly the same
    echo = "\n".join(line for line in prompt.splitlines() if "|" in line).lower()
    assert echo_evidence(echo, prompt) is None  # the line-by-line comparison misses it
    assert syntax_tags(echo, item_grammar(it), echo, 0)  # and the syntax tagger would read the rules
    echoed = ENGINE.score(it, [echo], RobogridSettings())
    found = {t.code: t.evidence for t in echoed.tags}
    assert echoed.status == "unparseable"
    assert "similarity" in found["autoregressive_echoing"] and "threshold 0.60" in found["autoregressive_echoing"]
    assert not {"lexical_mapping_failure", "operator_confusion", "scoping_failure"} & set(found)
