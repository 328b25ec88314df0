"""Formulas back to text, in the notations models read and write.

The engine shows formulas in one canonical notation (``UNICODE``: ∧ ∨ ¬ ∀ ∃, the
paper's symbols). The simulator writes its round-trip formulas in the other notations
too (ASCII ``& | ~``, words ``and or not``, the released prompts' ``v`` for or, LaTeX)
so that every correct reply exercises the parser.

Parentheses: every compound operand of an operator is parenthesised (``(a ∨ b) ∧ c``,
``¬(a ∧ b)``) even where precedence would allow dropping them; a negation itself is never
wrapped (``¬(a ∨ b) ∧ c``). Descriptions written by
models follow the explicit grouping, and a reader never has to know that ∧ binds
tighter than ∨. A quantifier's body is parenthesised unless it is an atom, a negation
or another quantifier (``∀x1 ∃x2 (p1(x1) ∨ p2(x2))``). ``extra`` adds redundant
parentheses around chosen nodes (the simulator's way of writing like a model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engines.logic.formula import (
    AND,
    FORALL,
    IFF,
    IMPLIES,
    OR,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
)


@dataclass(frozen=True)
class Notation:
    name: str
    not_: str
    and_: str
    or_: str
    implies: str
    iff: str
    forall: str  # written before the variable
    exists: str
    after_var: str  # between a quantified variable and its body
    equal: str = " = "
    unequal: str = " ≠ "

    def quantifier(self, kind: str) -> str:
        return self.forall if kind == FORALL else self.exists

    def binary(self, op: str) -> str:
        return {AND: self.and_, OR: self.or_, IMPLIES: self.implies, IFF: self.iff}[op]


UNICODE = Notation("unicode", "¬", " ∧ ", " ∨ ", " → ", " ↔ ", "∀", "∃", " ")
ASCII = Notation("ascii", "~", " & ", " | ", " -> ", " <-> ", "forall ", "exists ", ". ", " = ", " != ")
WORDS = Notation("words", "not ", " and ", " or ", " implies ", " iff ", "forall ", "exists ", ": ", " = ", " != ")
V_OR = Notation("v", "¬", " ∧ ", " v ", " → ", " ↔ ", "∀", "∃", " ")  # the released prompts' syntax
LATEX = Notation("latex", "\\neg ", " \\land ", " \\lor ", " \\rightarrow ", " \\leftrightarrow ",
                 "\\forall ", "\\exists ", " ", " = ", " \\neq ")
NOTATIONS = {n.name: n for n in (UNICODE, ASCII, WORDS, V_OR, LATEX)}

Extra = Callable[[Formula], bool]


def render(f: Formula, notation: Notation = UNICODE, extra: Extra | None = None) -> str:
    """The formula as text; ``extra(node)`` True wraps that node in redundant parentheses."""
    return _Printer(notation, extra).top(f)


class _Printer:
    def __init__(self, notation: Notation, extra: Extra | None):
        self.n = notation
        self.extra = extra

    def top(self, f: Formula) -> str:
        text = self.node(f)
        return f"({text})" if self.extra and type(f) not in _SIMPLE and self.extra(f) else text

    def operand(self, f: Formula) -> str:
        """A node used inside another operator: compound nodes get parentheses."""
        if isinstance(f, Atom) and not f.args and self.extra is None:  # the common case, kept cheap
            return f.name
        text = self.node(f)
        if type(f) not in _SIMPLE:
            return f"({text})"
        return f"({text})" if self.extra is not None and self.extra(f) else text

    def node(self, f: Formula) -> str:
        n = self.n
        if isinstance(f, Atom):
            return f"{f.name}({', '.join(f.args)})" if f.args else f.name
        if isinstance(f, Junction):
            return n.binary(f.op).join([self.operand(p) for p in f.parts])
        if isinstance(f, Not):
            if isinstance(f.body, Equal):
                return f"{f.body.left}{n.unequal}{f.body.right}"
            return n.not_ + self.operand(f.body)
        if isinstance(f, Equal):
            return f"{f.left}{n.equal}{f.right}"
        if isinstance(f, Arrow):
            return self.operand(f.left) + n.binary(f.op) + self.operand(f.right)
        body = f.body
        inner = self.node(body) if type(body) is Quant or type(body) in _SIMPLE else f"({self.node(body)})"
        return f"{n.quantifier(f.kind)}{f.var}{n.after_var}{inner}"


_SIMPLE = frozenset((Atom, Equal, Not))  # never parenthesised: ¬ binds tightest; its own operand has them


def show(f: Formula) -> str:
    """The canonical (unicode) text of a formula, as the prompts and views show it."""
    return render(f, UNICODE)
