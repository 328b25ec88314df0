"""Program sampling: SampleNode / SampleBlock of Algorithm 1, with SampleExpr and SampleCond.

Algorithm 1 leaves three things open; the choices here make it terminate, make ``D``
mean what Figure 2 plots, and keep execution cheap:

* **Depth is reached, not just bounded.** One "spine" child of every block on the path
  is forced to be a control statement until depth ``D``, so every depth-``D`` program
  nests exactly ``D`` levels (nodes.nesting_depth == D). The other nodes draw their kind
  with ``KIND_WEIGHTS`` (the Categorical of line 17) and stop at ``D`` as in line 14.
* **Size is bounded.** With blocks of 1..B statements and a third of nodes being
  control, the walk is a supercritical branching process (depth-20 programs would have
  tens of thousands of statements). Blocks are drawn no larger than what is left of
  ``statement_budget(D)``, and once it is spent new off-spine nodes are actions and new
  blocks hold one statement. Only the spine's blocks and the else blocks of conditionals
  begun before that still grow, so a program has fewer than ``2 * (statement_budget(D) +
  D)`` statements (about 3D + 4 on average: 33 at D = 10, 65 at D = 20).
* **Loops stay cheap to run.** The product of the counts of nested loops is kept within
  ``ITERATION_BUDGET`` by redrawing a count expression (after 20 draws, a literal that
  fits), so a gold program never comes near the interpreter's step cap. Counts of 0 and
  1 stay possible, as in the appendix's depth-10 example (``loop 0 x [``).

Expressions (SampleExpr) are literals 0..5 or fully parenthesised ``+``/``*`` trees of
depth <= E; conditions (SampleCond) are ``Holding`` atoms combined by not/and/or to
depth <= E. Items are ``ball``, ``box``, ``key``, ``cube``, ``item``, optionally with a
``_0``..``_4`` suffix (appendix A.3).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TypeVar

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
    Holding,
    If,
    Logic,
    Loop,
    Move,
    Not,
    Num,
    Program,
    Stmt,
    Turn,
    atoms,
    value,
    walk,
)
from engines.robogrid.world import State

T = TypeVar("T")

KINDS, KIND_WEIGHTS = ("act", "loop", "if"), (0.5, 0.25, 0.25)
ITERATION_BUDGET = 16
LITERAL_MAX = 5
HELD_PROB = 0.3  # chance that an item a condition mentions is already held at the start


@dataclass(frozen=True)
class Shape:
    """The structural knobs of Table 1 for one program."""

    depth: int  # D: nesting depth reached
    block_size: int  # B_max: statements per block, uniform in 1..B
    else_prob: float  # p: chance that an If has an else block
    expr_depth: int  # E: operator nesting of expressions and conditions


def statement_budget(depth: int) -> int:
    return 6 + 2 * depth


class _Sampler:
    def __init__(self, shape: Shape, rng: random.Random):
        self.shape = shape
        self.rng = rng
        self.count = 0
        self.budget = statement_budget(shape.depth)

    def below(self, n: int) -> int:
        """Uniform in 0..n-1 (``random()`` scaled: a third of ``randrange``'s cost, and this is hot)."""
        return int(self.rng.random() * n)

    def pick(self, options: tuple[T, ...]) -> T:
        return options[self.below(len(options))]

    # ------------------------------------------------------------- statements

    def block(self, d: int, multiplier: int, spine: bool) -> tuple[Stmt, ...]:
        n = max(1, min(1 + self.below(self.shape.block_size), self.budget - self.count))
        self.count += n
        spine_at = self.below(n) if spine else -1
        return tuple(self.node(d, multiplier, i == spine_at) for i in range(n))

    def node(self, d: int, multiplier: int, spine: bool) -> Stmt:
        if d >= self.shape.depth:
            return self.action()
        if spine:
            kind = self.pick(("loop", "if"))
        elif self.count >= self.budget:
            kind = "act"
        else:
            kind = self.rng.choices(KINDS, KIND_WEIGHTS)[0]
        if kind == "act":
            return self.action()
        if kind == "loop":
            count = self.expr(ITERATION_BUDGET // multiplier)
            return Loop(count, self.block(d + 1, multiplier * max(1, value(count)), spine))
        cond = self.cond()
        then = self.block(d + 1, multiplier, spine)
        orelse = self.block(d + 1, multiplier, False) if self.rng.random() < self.shape.else_prob else None
        return If(cond, then, orelse)

    def action(self) -> Stmt:
        r = self.rng.random()
        if r < 0.4:
            return Move(self.pick((FORWARD, BACKWARD)), self.expr(None))
        if r < 0.7:
            return Turn(self.pick((LEFT, RIGHT)))
        return Grab(self.item())

    def item(self) -> str:
        base = self.pick(ITEM_BASES)
        return base if self.rng.random() < 0.4 else f"{base}_{self.below(5)}"

    # ------------------------------------------------------------ expressions

    def literal(self, limit: int = LITERAL_MAX) -> Num:
        return Num(self.below(min(LITERAL_MAX, limit) + 1))

    def expr(self, limit: int | None) -> Expr:
        """A count or a distance; counts must not exceed ``limit``."""
        for _ in range(20):
            e = self.literal() if self.rng.random() < 0.25 else self.arith(self.shape.expr_depth)
            if limit is None or value(e) <= limit:
                return e
        return self.literal(limit or 0)

    def arith(self, e: int) -> Expr:
        def child() -> Expr:
            return self.arith(e - 1) if e > 1 and self.rng.random() < 0.6 else self.literal()

        op = self.pick((PLUS, TIMES))
        return Arith(op, child(), child())

    def cond(self) -> Cond:
        if self.rng.random() < 0.2:
            return Holding(self.item())
        return self.logic(self.shape.expr_depth)

    def logic(self, e: int) -> Cond:
        def child() -> Cond:
            return self.logic(e - 1) if e > 1 and self.rng.random() < 0.6 else Holding(self.item())

        r = self.rng.random()
        if r < 0.2:
            return Not(child())
        return Logic(AND if r < 0.6 else OR, child(), child())


def sample_program(shape: Shape, rng: random.Random) -> Program:
    """SampleBlock(0) with a spine to depth D (see the module docstring)."""
    return Program(_Sampler(shape, rng).block(0, 1, True))


def sample_start(program: Program, rng: random.Random) -> State:
    """Start at the origin facing north, holding some of the items the conditions ask about.

    An empty inventory would make every ``Holding`` false until something is grabbed;
    holding a few of the mentioned items exercises both branches.
    """
    mentioned = sorted({item for _, stmt in walk(program) if isinstance(stmt, If) for item in atoms(stmt.cond)})
    held = tuple(item for item in mentioned if rng.random() < HELD_PROB)
    return State(0, 0, "N", held)
