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

from engines.robogrid.nodes import PLUS, TIMES, If, Loop, Program, Stmt, Wording, head_text

INSTRUCTIONS = Wording(operators={PLUS: "plus", TIMES: "times"}, holding="(holding {item})", negation="(not {cond})",
                       move="Move {direction} {steps} {unit}.", turn="Turn {direction}.", grab="Grab the {item}.",
                       loop="Repeat {count} times:", branch="If {cond}, then:")


def _block(stmts: tuple[Stmt, ...]) -> str:
    return "[ " + " ".join(stmt_words(s) for s in stmts) + " ]" if stmts else "[ ]"


def stmt_words(stmt: Stmt) -> str:
    text = head_text(stmt, INSTRUCTIONS)
    if isinstance(stmt, Loop):
        return f"{text} {_block(stmt.body)}"
    if isinstance(stmt, If):
        text = f"{text} {_block(stmt.then)}"
        return text + (f" Otherwise: {_block(stmt.orelse)}" if stmt.orelse is not None else "")
    return text


def instructions(program: Program) -> str:
    return "\n".join(f"Step {k}: {stmt_words(s)}" for k, s in enumerate(program.body, 1))
