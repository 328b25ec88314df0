"""Template instructions that mirror a tree exactly (appendix A.2, task 3).

``Step 1: Move backward ((4 times 4) plus 3) steps.`` ... ``Step 3: Repeat (2 plus 1)
times: [ If ((holding key) and (not (holding box))), then: [ Turn left. ] Otherwise: [
Grab the key_2. ] ]``.

Every operator is parenthesised and every block bracketed, so the text determines the
tree: two different programs never get the same instructions (tests check this), which
is what makes SCR against the gold tree a fair criterion for task 3. Top-level
statements are numbered steps, one per line; nested blocks stay inline, as in the paper.
"""

from __future__ import annotations

from engines.robogrid.nodes import PLUS, Cond, Expr, Grab, Holding, Loop, Move, Not, Num, Program, Stmt, Turn


def expr_words(expr: Expr) -> str:
    if isinstance(expr, Num):
        return str(expr.value)
    word = "plus" if expr.op == PLUS else "times"
    return f"({expr_words(expr.left)} {word} {expr_words(expr.right)})"


def cond_words(cond: Cond) -> str:
    if isinstance(cond, Holding):
        return f"(holding {cond.item})"
    if isinstance(cond, Not):
        return f"(not {cond_words(cond.arg)})"
    return f"({cond_words(cond.left)} {cond.op} {cond_words(cond.right)})"


def _block(stmts: tuple[Stmt, ...]) -> str:
    return "[ " + " ".join(stmt_words(s) for s in stmts) + " ]" if stmts else "[ ]"


def stmt_words(stmt: Stmt) -> str:
    if isinstance(stmt, Move):
        unit = "step" if stmt.steps == Num(1) else "steps"
        return f"Move {stmt.direction} {expr_words(stmt.steps)} {unit}."
    if isinstance(stmt, Turn):
        return f"Turn {stmt.direction}."
    if isinstance(stmt, Grab):
        return f"Grab the {stmt.item}."
    if isinstance(stmt, Loop):
        return f"Repeat {expr_words(stmt.count)} times: {_block(stmt.body)}"
    text = f"If {cond_words(stmt.cond)}, then: {_block(stmt.then)}"
    return text + (f" Otherwise: {_block(stmt.orelse)}" if stmt.orelse is not None else "")


def instructions(program: Program) -> str:
    return "\n".join(f"Step {k}: {stmt_words(s)}" for k, s in enumerate(program.body, 1))
