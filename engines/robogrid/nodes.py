"""The RoboGrid abstract syntax (paper section 2.1): one tree for every style and lexicon.

Programs are frozen dataclasses, so two programs are "structurally identical" (the
paper's SCR, eq. 3) exactly when they compare equal: the surface style, the lexicon, the
whitespace and the parenthesisation are gone by the time a program is a tree. Blocks
are tuples; an ``If`` without an else branch has ``orelse=None`` (an empty else block,
which the C-style grammar allows, is ``()`` and therefore a different tree).

Expressions are constant (literals, ``+``, ``*``); conditions ask about the inventory
(``Holding``) and combine with ``Not``/``And``/``Or``. Both nest to the expression
depth ``E`` of Table 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

ITEM_BASES = ("ball", "box", "key", "cube", "item")
ITEM_PATTERN = r"(ball|box|key|cube|item)(_[0-9])?"
FORWARD, BACKWARD, LEFT, RIGHT = "forward", "backward", "left", "right"
PLUS, TIMES = "+", "*"
AND, OR = "and", "or"


# ------------------------------------------------------------------ expressions


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Arith:
    op: str  # PLUS | TIMES
    left: "Expr"
    right: "Expr"


Expr = Union[Num, Arith]


@dataclass(frozen=True)
class Holding:
    item: str


@dataclass(frozen=True)
class Not:
    arg: "Cond"


@dataclass(frozen=True)
class Logic:
    op: str  # AND | OR
    left: "Cond"
    right: "Cond"


Cond = Union[Holding, Not, Logic]


# ------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Move:
    direction: str  # FORWARD | BACKWARD
    steps: Expr


@dataclass(frozen=True)
class Turn:
    direction: str  # LEFT | RIGHT


@dataclass(frozen=True)
class Grab:
    item: str


@dataclass(frozen=True)
class Loop:
    count: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class If:
    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] | None = None


Stmt = Union[Move, Turn, Grab, Loop, If]
Action = Union[Move, Turn, Grab]


@dataclass(frozen=True)
class Program:
    body: tuple[Stmt, ...]


# A place in a program: ("body", 2), ("then", 0)... from the root; blocks are named by
# the field that holds them, so the same path names the same slot in any two programs.
Path = tuple[tuple[str, int], ...]


def path_text(path: Path) -> str:
    return ".".join(f"{name}[{index}]" for name, index in path) or "program"


def blocks(stmt: Stmt) -> list[tuple[str, tuple[Stmt, ...]]]:
    """The statement blocks directly inside a statement, named by their field."""
    if isinstance(stmt, Loop):
        return [("body", stmt.body)]
    if isinstance(stmt, If):
        return [("then", stmt.then)] + ([("else", stmt.orelse)] if stmt.orelse is not None else [])
    return []


def walk(program: Program) -> Iterator[tuple[Path, Stmt]]:
    """Every statement with its path, in pre-order (the order the code is written)."""
    stack: list[tuple[Path, Stmt]] = [((("body", i),), s) for i, s in enumerate(program.body)]
    stack.reverse()
    while stack:
        path, stmt = stack.pop()
        yield path, stmt
        children = [(path + ((name, i),), s) for name, block in blocks(stmt) for i, s in enumerate(block)]
        stack.extend(reversed(children))


def nesting_depth(program: Program) -> int:
    """Deepest statement level: top-level statements are at 0 (Algorithm 1's ``d``)."""
    return max((len(path) - 1 for path, _ in walk(program)), default=0)


def statement_count(program: Program) -> int:
    return sum(1 for _ in walk(program))


# ------------------------------------------------------------------- evaluation


def value(expr: Expr) -> int:
    if isinstance(expr, Num):
        return expr.value
    left, right = value(expr.left), value(expr.right)
    return left + right if expr.op == PLUS else left * right


def holds(cond: Cond, inventory: frozenset[str] | set[str]) -> bool:
    if isinstance(cond, Holding):
        return cond.item in inventory
    if isinstance(cond, Not):
        return not holds(cond.arg, inventory)
    if cond.op == AND:
        return holds(cond.left, inventory) and holds(cond.right, inventory)
    return holds(cond.left, inventory) or holds(cond.right, inventory)


def depth_of(node: Expr | Cond) -> int:
    """Operator nesting of an expression or condition (a literal or ``Holding`` is 0)."""
    if isinstance(node, (Num, Holding)):
        return 0
    if isinstance(node, Not):
        return 1 + depth_of(node.arg)
    return 1 + max(depth_of(node.left), depth_of(node.right))


def expression_depth(program: Program) -> int:
    """The deepest count, distance or condition of a program (what ``E`` bounds)."""
    parts = [s.steps if isinstance(s, Move) else s.count if isinstance(s, Loop) else s.cond
             for _, s in walk(program) if isinstance(s, (Move, Loop, If))]
    return max((depth_of(p) for p in parts), default=0)


def operator_count(node: Expr | Cond) -> int:
    if isinstance(node, (Num, Holding)):
        return 0
    if isinstance(node, Not):
        return 1 + operator_count(node.arg)
    return 1 + operator_count(node.left) + operator_count(node.right)


def atoms(cond: Cond) -> list[str]:
    """The items a condition asks about, with repetition, left to right."""
    if isinstance(cond, Holding):
        return [cond.item]
    if isinstance(cond, Not):
        return atoms(cond.arg)
    return atoms(cond.left) + atoms(cond.right)


def equivalent(a: Cond, b: Cond) -> bool:
    """Same truth value for every inventory over the items either condition mentions."""
    items = sorted(set(atoms(a)) | set(atoms(b)))
    if len(items) > 10:  # 1024 rows at most; generated conditions mention at most 2^E items
        return False
    for mask in range(1 << len(items)):
        held = {item for bit, item in enumerate(items) if mask >> bit & 1}
        if holds(a, held) != holds(b, held):
            return False
    return True


# --------------------------------------------------------------------- showing


def fmt_int(number: int) -> str:
    """A number for people; astronomically large ones (a model's ``(9 * (9 * ...))``) as 2^k."""
    if abs(number) < 10**15:
        return str(number)
    return f"{'-' if number < 0 else ''}~2^{abs(number).bit_length()}"


@dataclass(frozen=True)
class Wording:
    """How a statement head, a condition and an expression read in one rendering of the tree.

    The outline (``OUTLINE``: the diff view, traces, tag evidence) and the template
    instructions of task 3 (``instructions.INSTRUCTIONS``) walk the tree the same way and
    differ only in these words; a template's fields are the node's parts.
    """

    operators: dict[str, str]  # arithmetic operator -> its word
    holding: str  # {item}
    negation: str  # {cond}
    move: str  # {direction} {steps} {unit}
    turn: str  # {direction}
    grab: str  # {item}
    loop: str  # {count}
    branch: str  # {cond}


OUTLINE = Wording(operators={PLUS: PLUS, TIMES: TIMES}, holding="holding {item}", negation="not ({cond})",
                  move="move {direction} {steps}", turn="turn {direction}", grab="grab {item}",
                  loop="loop {count}", branch="if {cond}")


def expr_text(expr: Expr, wording: Wording) -> str:
    """Fully parenthesised infix: ``((4 * 4) + 3)``."""
    if isinstance(expr, Num):
        return str(expr.value)
    return f"({expr_text(expr.left, wording)} {wording.operators[expr.op]} {expr_text(expr.right, wording)})"


def cond_text(cond: Cond, wording: Wording) -> str:
    if isinstance(cond, Holding):
        return wording.holding.format(item=cond.item)
    if isinstance(cond, Not):
        return wording.negation.format(cond=cond_text(cond.arg, wording))
    return f"({cond_text(cond.left, wording)} {cond.op} {cond_text(cond.right, wording)})"


def head_text(stmt: Stmt, wording: Wording) -> str:
    """A statement without its blocks."""
    if isinstance(stmt, Move):
        unit = "step" if stmt.steps == Num(1) else "steps"
        return wording.move.format(direction=stmt.direction, steps=expr_text(stmt.steps, wording), unit=unit)
    if isinstance(stmt, Turn):
        return wording.turn.format(direction=stmt.direction)
    if isinstance(stmt, Grab):
        return wording.grab.format(item=stmt.item)
    if isinstance(stmt, Loop):
        return wording.loop.format(count=expr_text(stmt.count, wording))
    return wording.branch.format(cond=cond_text(stmt.cond, wording))


def show_expr(expr: Expr) -> str:
    """Style-independent infix form, fully parenthesised: ``((4 * 4) + 3)``."""
    return expr_text(expr, OUTLINE)


def show_cond(cond: Cond) -> str:
    return cond_text(cond, OUTLINE)


def head(stmt: Stmt) -> str:
    """One line naming a statement without its blocks: ``loop ((4 * 4) + 3)``, ``turn left``."""
    return head_text(stmt, OUTLINE) + (" (with else)" if isinstance(stmt, If) and stmt.orelse is not None else "")


def outline(program: Program) -> list[tuple[Path, str]]:
    """The program as indented lines, one per statement (plus ``else:``), with their paths.

    This is the style-independent form the diff view shows: two programs have the same
    outline exactly when they have the same tree.
    """
    lines: list[tuple[Path, str]] = []

    def block(stmts: tuple[Stmt, ...], prefix: Path, name: str, level: int) -> None:
        if not stmts:
            lines.append((prefix + ((name, 0),), "  " * level + "(empty block)"))
        for i, stmt in enumerate(stmts):
            path = prefix + ((name, i),)
            pad = "  " * level
            if isinstance(stmt, Loop):
                lines.append((path, f"{pad}{head(stmt)}:"))
                block(stmt.body, path, "body", level + 1)
            elif isinstance(stmt, If):
                lines.append((path, f"{pad}if {show_cond(stmt.cond)}:"))
                block(stmt.then, path, "then", level + 1)
                if stmt.orelse is not None:
                    lines.append((path + (("else", -1),), f"{pad}else:"))
                    block(stmt.orelse, path, "else", level + 1)
            else:
                lines.append((path, pad + head(stmt)))

    block(program.body, (), "body", 0)
    return lines


# --------------------------------------------------------------------- editing


def block_of(stmt: Stmt, name: str) -> tuple[Stmt, ...]:
    """The block a path step names inside a statement (``body``, ``then`` or ``else``)."""
    if isinstance(stmt, Loop) and name == "body":
        return stmt.body
    if isinstance(stmt, If) and name == "then":
        return stmt.then
    if isinstance(stmt, If) and name == "else" and stmt.orelse is not None:
        return stmt.orelse
    raise KeyError(f"{head(stmt)} has no {name} block")


def with_block(stmt: Stmt, name: str, stmts: tuple[Stmt, ...]) -> Stmt:
    if isinstance(stmt, Loop):
        return Loop(stmt.count, stmts)
    if isinstance(stmt, If):
        return If(stmt.cond, stmts, stmt.orelse) if name == "then" else If(stmt.cond, stmt.then, stmts)
    raise KeyError(f"{head(stmt)} has no {name} block")


def get(program: Program, path: Path) -> Stmt:
    assert path, "a path names at least one statement"
    stmt = program.body[path[0][1]]
    for name, index in path[1:]:
        stmt = block_of(stmt, name)[index]
    return stmt


def splice(program: Program, path: Path, replacement: tuple[Stmt, ...]) -> Program:
    """The program with the statement at ``path`` replaced by zero or more statements."""
    def go(stmts: tuple[Stmt, ...], rest: Path) -> tuple[Stmt, ...]:
        index = rest[0][1]
        if len(rest) == 1:
            return stmts[:index] + replacement + stmts[index + 1:]
        stmt, name = stmts[index], rest[1][0]
        return stmts[:index] + (with_block(stmt, name, go(block_of(stmt, name), rest[1:])),) + stmts[index + 1:]

    return Program(go(program.body, path))
