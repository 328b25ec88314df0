"""Templated English for a formula: the simulator's and the oracle's FS->NL reply.

The description must let a reader rebuild the formula without ever showing it, so
grouping is explicit: a top-level conjunction or disjunction becomes a numbered list,
deeper compound parts are put in square brackets, and every operator is a phrase
("both .. and ..", "at least one of ..", "it is not the case that [..]"). Quantifier
prefixes open the text ("For every object x1, there is an object x2 such that ...").
FOL atoms read as "p2 holds for o1 and x1" (symbolic) or "John loves Mary" (English).
"""

from __future__ import annotations

from engines.logic.formula import (
    AND,
    FORALL,
    IMPLIES,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
    prefix,
)
from engines.logic.vocabulary import ENGLISH, Vocabulary


def describe(f: Formula, vocab: Vocabulary) -> str:
    quants, f = prefix(f)
    lead = ", ".join(_quantifier(q) for q in quants)
    phrases = _Phrases(vocab)
    if isinstance(f, Junction):
        head = "all of the following hold" if f.op == AND else "at least one of the following holds"
        items = "\n".join(f"{i}. {phrases.phrase(p)}." for i, p in enumerate(f.parts, 1))
        text = f"{lead}: {head}:\n{items}" if lead else f"{head}:\n{items}"
    else:
        text = f"{lead}: {phrases.phrase(f)}." if lead else f"{phrases.phrase(f)}."
    return text[0].upper() + text[1:]


def _quantifier(q: Quant) -> str:
    return f"for every object {q.var}" if q.kind == FORALL else f"there is an object {q.var} such that"


class _Phrases:
    def __init__(self, vocab: Vocabulary):
        self.english = vocab.style == ENGLISH

    def phrase(self, f: Formula) -> str:
        if isinstance(f, Atom):
            return self.atom(f, True)
        if isinstance(f, Equal):
            return f"{f.left} is the same object as {f.right}"
        if isinstance(f, Not):
            if isinstance(f.body, Atom):
                return self.atom(f.body, False)
            if isinstance(f.body, Equal):
                return f"{f.body.left} is not the same object as {f.body.right}"
            return f"it is not the case that [{self.phrase(f.body)}]"
        if isinstance(f, Junction):
            parts = [self.part(p) for p in f.parts]
            if f.op == AND:
                return f"both {parts[0]} and {parts[1]}" if len(parts) == 2 else \
                    f"all of {', '.join(parts[:-1])} and {parts[-1]}"
            return f"either {parts[0]} or {parts[1]}" if len(parts) == 2 else \
                f"at least one of {', '.join(parts[:-1])} or {parts[-1]}"
        if isinstance(f, Arrow):
            left, right = self.part(f.left), self.part(f.right)
            return f"if {left} then {right}" if f.op == IMPLIES else f"{left} if and only if {right}"
        body = self.part(f.body)
        return f"{_quantifier(f)} {body}" if f.kind != FORALL else f"{_quantifier(f)}, {body}"

    def part(self, f: Formula) -> str:
        """A sub-phrase, bracketed when it is compound so that the grouping is never lost."""
        text = self.phrase(f)
        simple = isinstance(f, (Atom, Equal)) or (isinstance(f, Not) and isinstance(f.body, (Atom, Equal)))
        return text if simple else f"[{text}]"

    def atom(self, a: Atom, positive: bool) -> str:
        if not a.args:
            return f"{a.name} is {'true' if positive else 'false'}"
        if self.english:
            verb = a.name.lower()
            text = f"{a.args[0]} {verb}" + (f" {' and '.join(a.args[1:])}" if len(a.args) > 1 else "")
            return text if positive else f"it is not true that {text}"
        args = " and ".join(a.args)
        return f"{a.name} {'holds' if positive else 'does not hold'} for {args}"
