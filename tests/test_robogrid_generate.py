"""Item generation: Algorithm 1's knobs, instructions that mirror the tree, the three tasks, settings."""

from __future__ import annotations

import json
import random
import re

import pytest

from engines.core import SettingsError, parse_settings
from engines.parsing import ParseFailure
from engines.robogrid import ENGINE
from engines.robogrid.instructions import instructions
from engines.robogrid.nodes import (
    Arith,
    Grab,
    Holding,
    If,
    Logic,
    Loop,
    Move,
    Not,
    Num,
    Program,
    Turn,
    depth_of,
    nesting_depth,
    statement_count,
    walk,
)
from engines.robogrid.parse import parse_code
from engines.robogrid.programs import ITERATION_BUDGET, Shape, sample_program, statement_budget
from engines.robogrid.score import item_gold, item_grammar
from engines.robogrid.settings import RobogridSettings
from engines.robogrid.world import MAX_STEPS, execute


def settings(*pairs: str) -> RobogridSettings:
    return parse_settings(RobogridSettings, list(pairs))


def programs(shape: Shape, n: int = 60) -> list[Program]:
    return [sample_program(shape, random.Random(f"t:{shape}:{k}")) for k in range(n)]


# ------------------------------------------------------------------ Algorithm 1


def test_depth_is_reached_exactly_and_size_stays_linear():
    for depth in range(2, 21):
        for program in programs(Shape(depth, 3, 0.5, 2), 30):
            assert nesting_depth(program) == depth
            assert statement_count(program) < 2 * (statement_budget(depth) + depth)


def test_block_size_else_probability_and_expression_depth_are_honoured():
    for program in programs(Shape(6, 2, 0.0, 1)):
        for _, stmt in walk(program):
            if isinstance(stmt, If):
                assert stmt.orelse is None and depth_of(stmt.cond) <= 1 and len(stmt.then) <= 2
            if isinstance(stmt, Loop):
                assert depth_of(stmt.count) <= 1 and len(stmt.body) <= 2
    ifs = [s for p in programs(Shape(6, 3, 1.0, 3)) for _, s in walk(p) if isinstance(s, If)]
    assert ifs and all(s.orelse is not None for s in ifs)
    deep = [s.cond for s in ifs if depth_of(s.cond) == 3]
    assert deep and max(depth_of(s.cond) for s in ifs) == 3


def test_nested_loop_counts_keep_gold_programs_far_below_the_step_cap():
    for depth in (5, 10, 20):
        for program in programs(Shape(depth, 3, 0.5, 3)):
            result = execute(program)
            assert not result.capped and result.steps <= statement_count(program) * (ITERATION_BUDGET + 1)
            assert result.steps < MAX_STEPS / 10


# ------------------------------------------------------------------ instructions


_WORD = re.compile(r"[()\[\].,:]|[A-Za-z0-9_]+")


class InstructionReader:
    """Reads the template instructions back into a tree: proves they determine the program."""

    def __init__(self, text: str):
        self.toks = _WORD.findall(text)
        self.i = 0

    def take(self, *expected: str) -> str:
        tok = self.toks[self.i]
        assert not expected or tok in expected, (tok, expected, self.toks[self.i - 5:self.i + 5])
        self.i += 1
        return tok

    def program(self) -> Program:
        body = []
        while self.i < len(self.toks):
            self.take("Step"), self.take(), self.take(":")
            body.append(self.stmt())
        return Program(tuple(body))

    def stmt(self):
        word = self.take()
        if word == "Move":
            direction, steps = self.take("forward", "backward"), self.expr()
            self.take("step", "steps"), self.take(".")
            return Move(direction, steps)
        if word == "Turn":
            direction = self.take("left", "right")
            self.take(".")
            return Turn(direction)
        if word == "Grab":
            self.take("the")
            item = self.take()
            self.take(".")
            return Grab(item)
        if word == "Repeat":
            count = self.expr()
            self.take("times"), self.take(":")
            return Loop(count, self.block())
        assert word == "If"
        cond = self.cond()
        self.take(","), self.take("then"), self.take(":")
        then = self.block()
        if self.i < len(self.toks) and self.toks[self.i] == "Otherwise":
            self.take(), self.take(":")
            return If(cond, then, self.block())
        return If(cond, then)

    def block(self):
        self.take("[")
        out = []
        while self.toks[self.i] != "]":
            out.append(self.stmt())
        self.take("]")
        return tuple(out)

    def expr(self):
        if self.toks[self.i] != "(":
            return Num(int(self.take()))
        self.take("(")
        left = self.expr()
        op = {"plus": "+", "times": "*"}[self.take("plus", "times")]
        right = self.expr()
        self.take(")")
        return Arith(op, left, right)

    def cond(self):
        self.take("(")
        if self.toks[self.i] == "holding":
            self.take()
            out = Holding(self.take())
        elif self.toks[self.i] == "not":
            self.take()
            out = Not(self.cond())
        else:
            left = self.cond()
            op = self.take("and", "or")
            out = Logic(op, left, self.cond())
        self.take(")")
        return out


def test_instructions_mirror_the_tree_exactly():
    for depth in (2, 5, 10, 20):
        for program in programs(Shape(depth, 3, 0.5, 3), 40):
            assert InstructionReader(instructions(program)).program() == program


def test_instructions_read_like_appendix_a2():
    program = Program((
        Move("backward", Arith("*", Arith("*", Num(4), Num(4)), Arith("+", Num(4), Num(3)))),
        Loop(Arith("+", Arith("*", Num(4), Num(0)), Num(4)), (
            If(Logic("and", Not(Holding("key")), Holding("box_0")), (Turn("left"),), (Move("backward", Num(3)),)),)),
        Grab("key_2"),
    ))
    assert instructions(program).splitlines() == [
        "Step 1: Move backward ((4 times 4) times (4 plus 3)) steps.",
        "Step 2: Repeat ((4 times 0) plus 4) times: [ If ((not (holding key)) and (holding box_0)), then: "
        "[ Turn left. ] Otherwise: [ Move backward 3 steps. ] ]",
        "Step 3: Grab the key_2.",
    ]


# ------------------------------------------------------------------ items


def test_items_are_deterministic_json_and_carry_the_documented_fields():
    s = settings("task=judge,goal,instruct", "count=6", "depth=3", "shots=2")
    a = [i.to_json() for i in ENGINE.items(s, 7)]
    assert a == [i.to_json() for i in ENGINE.items(s, 7)]
    assert a != [i.to_json() for i in ENGINE.items(s, 8)]
    assert len(a) == 18 and len({i["id"] for i in a}) == 18
    json.dumps(a)
    for item in a:
        assert {"grammar", "lexicon", "start", "examples"} <= set(item["inputs"])
        assert {"program", "final"} <= set(item["gold"])
        assert {"task", "depth", "else_prob", "expr_depth", "style", "lexicon", "shots", "cot"} <= set(item["meta"])
        assert len(item["inputs"]["examples"]) == 2
    by_task = {i["meta"]["task"]: i for i in a}
    assert "instructions" in by_task["instruct"]["inputs"]
    assert {"target", "target_text", "start_text"} <= set(by_task["goal"]["inputs"])
    assert "code" in by_task["judge"]["inputs"] and by_task["judge"]["gold"]["answer"] in ("VALID", "INVALID")


def test_the_same_tree_appears_in_every_style_and_lexicon():
    s = settings("count=5", "depth=4", "style=block,c,sexpr", "lexicon=natural,alien")
    items = ENGINE.items(s, 0)
    trees: dict[str, set] = {}
    for item in items:
        trees.setdefault(item.id[-4:], set()).add(item_gold(item))
        assert parse_code(item.gold["program"], item_grammar(item)) == item_gold(item)
    assert len(trees) == 5 and all(len(t) == 1 for t in trees.values())
    assert len({item.gold["program"] for item in items}) == len(items)


def test_judge_items_are_balanced_and_every_invalid_candidate_fails_to_parse():
    items = ENGINE.items(settings("task=judge", "count=200", "style=block,c,sexpr", "lexicon=natural,alien"), 0)
    labels = [i.gold["answer"] for i in items]
    assert labels.count("VALID") == labels.count("INVALID") == len(items) // 2
    kinds = set()
    for item in items:
        parsed = parse_code(item.inputs["code"], item_grammar(item))
        if item.gold["answer"] == "VALID":
            assert parsed == item_gold(item) and item.inputs["code"] == item.gold["program"]
        else:
            assert isinstance(parsed, ParseFailure), item.id
            kinds.add(item.gold["perturbation"])
            assert item.gold["note"]
    assert kinds == {"premature_scope_termination", "scoping_failure", "lexical_mapping_failure",
                     "operator_confusion"}


def test_goal_targets_are_where_the_gold_program_ends():
    for item in ENGINE.items(settings("task=goal", "count=20"), 0):
        from engines.robogrid.world import State

        final = execute(item_gold(item), State.from_json(item.inputs["start"])).final
        assert final.to_json() == item.inputs["target"] == item.gold["final"]
        assert item.inputs["target_text"] == final.describe()


def test_worked_examples_use_the_items_own_grammar():
    for item in ENGINE.items(settings("count=4", "shots=5", "style=c"), 0):
        grammar = item_grammar(item)
        assert len(item.inputs["examples"]) == 5
        for example in item.inputs["examples"]:
            assert not isinstance(parse_code(example["program"], grammar), ParseFailure)
            assert nesting_depth(parse_code(example["program"], grammar)) <= 3
        prompt = ENGINE.next_step(item, RobogridSettings(), []).messages[0].content
        assert "Here are 5 worked examples" in prompt and "Example 5:" in prompt


# ------------------------------------------------------------------ settings


def test_list_settings_make_one_condition_per_combination():
    s = settings("depth=2,5,10", "style=block,sexpr", "count=3")
    assert len(s.conditions()) == 6 and len(ENGINE.items(s, 0)) == 18
    assert {c.depth for c in s.conditions()} == {2, 5, 10}


@pytest.mark.parametrize("pair, needle", [
    ("depth=1", "outside 2..20"), ("depth=ten", "expected integers"), ("else_prob=1.5", "outside 0..1"),
    ("expr_depth=4", "outside 1..3"), ("style=python", "not one of"), ("lexicon=klingon", "not one of"),
    ("task=chat", "not one of"), ("shots=3", "not one of 0, 1, 2, 5"), ("count=0", "outside"),
    ("depth=", "expected a value"), ("colour=red", "unknown setting"),
])
def test_bad_settings_say_what_is_wrong(pair, needle):
    with pytest.raises(SettingsError, match=needle):
        settings(pair)


def test_too_many_items_are_refused():
    with pytest.raises(SettingsError, match="at most"):
        settings("count=100000", "depth=2,3")
