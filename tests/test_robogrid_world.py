"""The RoboGrid interpreter (paper section 2.1): semantics, trace, step cap."""

from __future__ import annotations

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
    equivalent,
    fmt_int,
    value,
)
from engines.robogrid.world import MAX_STEPS, State, execute


def run(*stmts, start: State = State()) -> State:
    return execute(Program(tuple(stmts)), start).final


def test_moves_follow_the_facing_and_turns_rotate():
    assert run(Move("forward", Num(3))) == State(0, 3, "N")
    assert run(Turn("right"), Move("forward", Num(2))) == State(2, 0, "E")
    assert run(Turn("left"), Move("backward", Num(2))) == State(2, 0, "W")
    assert run(Turn("left"), Turn("left"), Move("forward", Num(1))) == State(0, -1, "S")
    assert run(*[Turn("right")] * 4) == State(0, 0, "N")


def test_the_papers_goal_example_is_reachable():
    final = run(Move("forward", Arith("*", Num(2), Num(23))), Turn("left"))
    assert final.describe() == "pos (0, 46), facing W, inventory empty"


def test_grab_fills_a_sorted_set_and_conditions_read_it():
    start = State(0, 0, "N", ("key",))
    final = run(Grab("box_1"), Grab("ball"), Grab("box_1"), start=start)
    assert final.inventory == ("ball", "box_1", "key")
    branch = If(Logic("and", Holding("key"), Not(Holding("cube"))), (Turn("left"),), (Turn("right"),))
    assert run(branch, start=start).facing == "W"
    assert run(branch).facing == "E"
    assert run(If(Holding("cube"), (Turn("left"),))).facing == "N"  # no else: nothing happens


def test_loops_evaluate_their_count_once_and_zero_skips_the_body():
    assert run(Loop(Arith("+", Arith("*", Num(4), Num(4)), Num(3)), (Move("forward", Num(1)),))).y == 19
    assert run(Loop(Num(0), (Move("forward", Num(1)),))).y == 0
    assert run(Loop(Num(2), (Loop(Num(3), (Turn("right"),)),))).facing == "S"  # 6 right turns


def test_the_trace_lists_every_step_with_the_state_after_it():
    result = execute(Program((Loop(Num(2), (Move("forward", Num(1)),)), Grab("key"))), State(), trace=True)
    events = [(s.step, s.path, s.event, s.state.y) for s in result.trace]
    assert events == [
        (1, "body[0]", "loop 2: iteration 1/2", 0),
        (2, "body[0].body[0]", "move forward 1", 1),
        (3, "body[0]", "loop 2: iteration 2/2", 1),
        (4, "body[0].body[0]", "move forward 1", 2),
        (5, "body[1]", "grab key", 2),
    ]
    assert result.steps == 5 and not result.capped
    assert result.cells == ((0, 1), (0, 2), (0, 2))


def test_a_runaway_program_stops_at_the_cap():
    result = execute(Program((Loop(Num(999_999_999), (Loop(Num(999_999_999), ()),)),)))
    assert result.capped and result.steps == MAX_STEPS


def test_astronomical_numbers_do_not_break_anything():
    big = Num(999_999_999)
    expr = big
    for _ in range(12):
        expr = Arith("*", expr, expr)
    final = run(Move("forward", expr))
    assert final.y == value(expr)
    assert fmt_int(final.y).startswith("~2^") and "~2^" in final.describe()


def test_state_round_trips_through_json():
    state = State(-3, 7, "S", ("key", "ball"))
    assert State.from_json(state.to_json()) == State(-3, 7, "S", ("ball", "key"))


def test_equivalence_is_by_truth_table():
    a, b, c = Holding("a"), Holding("b"), Holding("c")
    assert equivalent(Logic("and", a, Logic("and", b, c)), Logic("and", Logic("and", a, b), c))
    assert equivalent(Not(Logic("or", a, b)), Logic("and", Not(a), Not(b)))
    assert not equivalent(Logic("and", a, b), Logic("or", a, b))
