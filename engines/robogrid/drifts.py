"""Drifts: grammatical variants of a program's tree, named by the tag they exercise.

They keep the code parseable and change behaviour or only structure: an expression
replaced by its value (``arithmetic_flattening``) or miscomputed
(``arithmetic_collapse``), a condition negated or its connective swapped
(``predicate_inversion``) or rewritten into an equivalent shape (``boolean_flattening``),
a statement echoed (``autoregressive_echoing``), the program cut short
(``planning_horizon_collapse``), a block's tail moved out of it
(``premature_scope_termination``), an action's argument changed (``ast_mismatch``),
everything wrapped in a loop that runs past the step cap (``step_limit``).

The simulator uses them. Each function returns None when the program offers nothing to
change that way (no arithmetic to flatten...), so the caller can fall back to another.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, TypeVar

from engines.robogrid.nodes import (
    AND,
    BACKWARD,
    FORWARD,
    ITEM_BASES,
    LEFT,
    OR,
    PLUS,
    RIGHT,
    TIMES,
    Arith,
    Cond,
    Expr,
    Grab,
    If,
    Logic,
    Loop,
    Move,
    Not,
    Num,
    Path,
    Program,
    Stmt,
    Turn,
    equivalent,
    path_text,
    show_cond,
    show_expr,
    splice,
    value,
    walk,
)

RUNAWAY_COUNT = 999_999
Kind = TypeVar("Kind", bound=Stmt)


@dataclass(frozen=True)
class Drifted:
    """A grammatical variant of a program's tree, with what was changed."""

    program: Program
    note: str


def _statements(program: Program, *want: type[Kind]) -> list[tuple[Path, Kind]]:
    return [(p, s) for p, s in walk(program) if isinstance(s, want)]


def _expressions(program: Program) -> list[tuple[Path, Loop | Move, Expr]]:
    out: list[tuple[Path, Loop | Move, Expr]] = []
    for path, stmt in walk(program):
        if isinstance(stmt, Loop):
            out.append((path, stmt, stmt.count))
        elif isinstance(stmt, Move):
            out.append((path, stmt, stmt.steps))
    return out


def _with_expr(stmt: Loop | Move, expr: Expr) -> Stmt:
    return Loop(expr, stmt.body) if isinstance(stmt, Loop) else Move(stmt.direction, expr)


def flatten_arithmetic(program: Program, rng: random.Random) -> Drifted | None:
    """Evaluate one expression to its literal (appendix A.4.3, case 1: ``run 19 iters``)."""
    found = [(p, s, e) for p, s, e in _expressions(program) if isinstance(e, Arith)]
    if not found:
        return None
    path, stmt, expr = rng.choice(found)
    flat = Num(value(expr))
    return Drifted(splice(program, path, (_with_expr(stmt, flat),)),
                   f"{path_text(path)}: {show_expr(expr)} written as {flat.value}")


def _miscomputed(expr: Expr) -> Expr:
    """A nearby expression with another value: the top operator swapped, or a literal off by one."""
    if isinstance(expr, Arith):
        swapped = Arith(TIMES if expr.op == PLUS else PLUS, expr.left, expr.right)
        if value(swapped) != value(expr):
            return swapped
        bumped = Arith(expr.op, _miscomputed(expr.left), expr.right)
        if value(bumped) != value(expr):
            return bumped
        return Arith(PLUS, expr, Num(1))
    return Num(expr.value + 1)


def miscompute(program: Program, rng: random.Random) -> Drifted | None:
    """Change one expression's value (appendix A.4.2, case 2: ``(4 * 5 + 1)`` for ``(4 * 5 * 1)``)."""
    found = _expressions(program)
    if not found:
        return None
    path, stmt, expr = rng.choice(found)
    wrong = _miscomputed(expr)
    return Drifted(splice(program, path, (_with_expr(stmt, wrong),)),
                   f"{path_text(path)}: {show_expr(expr)} = {value(expr)} written as {show_expr(wrong)} = {value(wrong)}")


def invert_predicate(program: Program, rng: random.Random) -> Drifted | None:
    """Negate a condition, drop its negation, or swap its connective (appendix A.4.2, case 1)."""
    options = []
    for path, stmt in _statements(program, If):
        c = stmt.cond
        options.append((path, stmt, c.arg if isinstance(c, Not) else Not(c)))
        if isinstance(c, Logic):
            swapped = Logic(OR if c.op == AND else AND, c.left, c.right)
            if not equivalent(swapped, c):
                options.append((path, stmt, swapped))
    if not options:
        return None
    path, stmt, cond = rng.choice(options)
    old = stmt.cond
    new_stmt = If(cond, stmt.then, stmt.orelse)
    return Drifted(splice(program, path, (new_stmt,)), f"{path_text(path)}: {show_cond(old)} written as {show_cond(cond)}")


def _reshaped(c: Cond) -> Cond | None:
    """An equivalent condition of another shape: regrouped, De Morgan, double negation, or commuted."""
    if isinstance(c, Logic):
        if isinstance(c.right, Logic) and c.right.op == c.op:
            return Logic(c.op, Logic(c.op, c.left, c.right.left), c.right.right)
        if isinstance(c.left, Logic) and c.left.op == c.op:
            return Logic(c.op, c.left.left, Logic(c.op, c.left.right, c.right))
    if isinstance(c, Not) and isinstance(c.arg, Logic):
        return Logic(OR if c.arg.op == AND else AND, Not(c.arg.left), Not(c.arg.right))
    if isinstance(c, Not) and isinstance(c.arg, Not):
        return c.arg.arg
    if isinstance(c, Not):
        inner = _reshaped(c.arg)
        return Not(inner) if inner is not None else None
    if isinstance(c, Logic):
        left = _reshaped(c.left)
        if left is not None:
            return Logic(c.op, left, c.right)
        right = _reshaped(c.right)
        if right is not None:
            return Logic(c.op, c.left, right)
        if c.left != c.right:
            return Logic(c.op, c.right, c.left)
    return None


def flatten_boolean(program: Program, rng: random.Random) -> Drifted | None:
    """Rewrite a condition into an equivalent, differently nested one (appendix A.4.3, case 2)."""
    options = [(p, s, new) for p, s in _statements(program, If)
               if (new := _reshaped(s.cond)) is not None]
    if not options:
        return None
    path, stmt, cond = rng.choice(options)
    new_stmt = If(cond, stmt.then, stmt.orelse)
    return Drifted(splice(program, path, (new_stmt,)),
                   f"{path_text(path)}: {show_cond(stmt.cond)} regrouped as {show_cond(cond)}")


def echo_block(program: Program, rng: random.Random) -> Drifted | None:
    """Write one statement (a control block when there is one) twice (appendix A.4.3, case 3)."""
    found = _statements(program, Loop, If) or list(walk(program))
    path, stmt = rng.choice(found)
    return Drifted(splice(program, path, (stmt, stmt)), f"{path_text(path)} is written twice in a row")


def truncate(program: Program, rng: random.Random) -> Drifted | None:
    """Stop after an action before the end (appendix A.4.2, case 3)."""
    order = [s for _, s in walk(program)]
    cuts = [k + 1 for k, s in enumerate(order[:-1]) if isinstance(s, (Move, Turn, Grab))]
    if not cuts:
        return None
    keep = rng.choice(cuts)
    budget = [keep]

    def block(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for s in stmts:
            if budget[0] == 0:
                break
            budget[0] -= 1
            if isinstance(s, Loop):
                out.append(Loop(s.count, block(s.body)))
            elif isinstance(s, If):
                then = block(s.then)
                out.append(If(s.cond, then, block(s.orelse) if s.orelse is not None and budget[0] else None))
            else:
                out.append(s)
        return tuple(out)

    return Drifted(Program(block(program.body)), f"the program stops after {keep} of {len(order)} statements")


def close_early(program: Program, rng: random.Random) -> Drifted | None:
    """Close a block before its last statements, which then follow it (appendix A.4.1, case 4)."""
    options: list[tuple[Path, Loop | If, str]] = []
    for path, stmt in _statements(program, Loop, If):
        if isinstance(stmt, Loop) and len(stmt.body) > 1:
            options.append((path, stmt, "body"))
        elif isinstance(stmt, If):
            if stmt.orelse is None and len(stmt.then) > 1:
                options.append((path, stmt, "then"))
            elif stmt.orelse is not None and len(stmt.orelse) > 1:
                options.append((path, stmt, "else"))
    if not options:
        return None
    path, stmt, name = rng.choice(options)
    block = stmt.body if isinstance(stmt, Loop) else (stmt.then if name == "then" else stmt.orelse)
    assert block is not None
    k = rng.randrange(1, len(block))
    if isinstance(stmt, Loop):
        kept: Stmt = Loop(stmt.count, block[:k])
    elif name == "then":
        kept = If(stmt.cond, block[:k], None)
    else:
        kept = If(stmt.cond, stmt.then, block[:k])
    return Drifted(splice(program, path, (kept,) + block[k:]),
                   f"the {name} block of {path_text(path)} is closed after {k} of {len(block)} statements")


def change_action(program: Program, rng: random.Random) -> Drifted | None:
    """Another direction or item in one action: a difference no paper category names."""
    found: list[tuple[Path, Move | Turn | Grab]] = _statements(program, Move, Turn, Grab)
    if not found:
        return None
    path, stmt = rng.choice(found)
    if isinstance(stmt, Move):
        new: Stmt = Move(BACKWARD if stmt.direction == FORWARD else FORWARD, stmt.steps)
    elif isinstance(stmt, Turn):
        new = Turn(RIGHT if stmt.direction == LEFT else LEFT)
    else:
        new = Grab(rng.choice([b for b in ITEM_BASES if b != stmt.item]))
    return Drifted(splice(program, path, (new,)), f"{path_text(path)}: an action's argument is changed")


def runaway(program: Program, rng: random.Random) -> Drifted | None:
    """Repeat the whole program almost a million times: execution stops at the step cap."""
    return Drifted(Program((Loop(Num(RUNAWAY_COUNT), program.body),)),
                   f"the program is wrapped in a loop of {RUNAWAY_COUNT} iterations")


DRIFTS: dict[str, Callable[[Program, random.Random], Drifted | None]] = {
    "arithmetic_flattening": flatten_arithmetic,
    "arithmetic_collapse": miscompute,
    "predicate_inversion": invert_predicate,
    "boolean_flattening": flatten_boolean,
    "autoregressive_echoing": echo_block,
    "planning_horizon_collapse": truncate,
    "premature_scope_termination": close_early,
    "ast_mismatch": change_action,
    "step_limit": runaway,
}
