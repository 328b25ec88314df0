"""Syntax breaks: ways to make a program ungrammatical, named by the tag they exercise.

They work on the linearised tokens (linearise.Code), so each break is precise and says
where it is: a block closer dropped, doubled or swapped for another bracket
(``premature_scope_termination``), a control statement wrapped like an action
(``scoping_failure``), a keyword spelled by its terminal name, by a natural word or by a
foreign opaque token (``lexical_mapping_failure``), an operator written as a word, as
``+`` under an Alien lexicon, or in another style's position (``operator_confusion``).

The judge task's INVALID candidates (generate.py) and the simulator's syntax errors
both come from here. Each function returns None when the program offers nothing to
break that way (no operator to misspell...), so callers can fall back to another.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from engines.robogrid.grammars import Grammar
from engines.robogrid.lexicon import NATURAL_SETS, alien_token
from engines.robogrid.linearise import Code, Tok, join
from engines.robogrid.nodes import path_text

OPERATOR_WORDS = {"PLUS": ("plus", "add"), "STAR": ("times", "multiplied_by")}
OPERATOR_SYMBOLS = {"PLUS": "+", "STAR": "*"}


@dataclass(frozen=True)
class Broken:
    """An ungrammatical variant of a program, with what was done and where."""

    text: str
    note: str


def _where(tokens: list[Tok] | tuple[Tok, ...], index: int) -> str:
    text = join(tokens[:index]) + tokens[index].lead if index < len(tokens) else join(tokens)
    line = text.count("\n") + 1
    return f"line {line}, column {len(text) - (text.rfind(chr(10)) + 1) + 1}"


def break_delimiters(code: Code, grammar: Grammar, rng: random.Random) -> Broken | None:
    """Drop one block closer, double it, or swap it for another bracket."""
    tokens = list(code.tokens)
    closers = [i for i, t in enumerate(tokens) if t.role == "close"]
    if not closers:
        return None
    i = rng.choice(closers)
    closer = tokens[i]
    where = _where(tokens, i)
    variants = ["drop", "drop", "extra"] + (["swap"] if closer.text in "]})" else [])
    variant = rng.choice(variants)
    if variant == "drop":
        if i + 1 < len(tokens):
            tokens[i + 1] = Tok(tokens[i + 1].text, tokens[i + 1].kind, closer.lead, tokens[i + 1].role)
        del tokens[i]
        note = f"the closing {closer.text!r} at {where} is deleted, leaving its block open"
    elif variant == "extra":
        tokens.insert(i + 1, Tok(closer.text, closer.kind, closer.lead, "close"))
        note = f"an extra {closer.text!r} follows the one at {where}, closing a block that is not open"
    else:
        other = rng.choice([b for b in "]})" if b != closer.text])
        tokens[i] = Tok(other, "RBR", closer.lead, "close")
        note = f"the closing {closer.text!r} at {where} is written {other!r}"
    return Broken(join(tokens), note)


def wrap_control(code: Code, grammar: Grammar, rng: random.Random) -> Broken | None:
    """Wrap a loop or conditional the way an action is wrapped (appendix A.4.1, case 2)."""
    tokens = list(code.tokens)
    spans = [(p, a, b) for p, a, b in code.spans if tokens[a].kind in ("LOOP", "IF") or tokens[a].role == "open"]
    if not spans:
        return None
    path, start, end = rng.choice(spans)
    where = _where(tokens, start)
    style = grammar.style
    if style == "block":
        before, after = Tok(grammar.spelling("DO"), "DO", tokens[start].lead), Tok(grammar.spelling("END"), "END", " ")
    elif style == "c":
        before, after = None, Tok(";", "SEMI", "")
    else:
        before, after = Tok("(", "PAR_L", tokens[start].lead), Tok(")", "PAR_R", "")
    tokens.insert(end, after)
    if before is not None:
        tokens[start] = Tok(tokens[start].text, tokens[start].kind, " " if style == "block" else "", tokens[start].role)
        tokens.insert(start, before)
    shown = {"block": f"{before.text if before else ''} ... {after.text}", "c": "...;", "sexpr": "( ... )"}[style]
    return Broken(join(tokens), f"the control statement at {where} ({path_text(path)}) is wrapped as an action: {shown}")


def _foreign_words(grammar: Grammar, terminal: str, rng: random.Random) -> list[str]:
    """Spellings of ``terminal`` this grammar does not accept."""
    known = set(grammar.token_types)
    words = {terminal, terminal.lower().capitalize()} | {s[terminal] for s in NATURAL_SETS.values()}
    if grammar.lexicon.kind == "natural":
        words.add(alien_token(rng))
    return sorted(w for w in words if w not in known and w.isidentifier())


def misspell_keyword(code: Code, grammar: Grammar, rng: random.Random) -> Broken | None:
    """Spell one keyword as its terminal name, a natural word, or an opaque token it does not define."""
    tokens = list(code.tokens)
    keywords = [i for i, t in enumerate(tokens) if t.text in grammar.keywords and t.kind not in OPERATOR_WORDS]
    if not keywords:
        return None
    i = rng.choice(keywords)
    old = tokens[i]
    choices = _foreign_words(grammar, old.kind, rng)
    if not choices:
        return None
    word = rng.choice(choices)
    tokens[i] = Tok(word, "WORD", old.lead)
    return Broken(join(tokens), f"{old.kind} at {_where(tokens, i)} is written {word!r} instead of {old.text!r}")


def _matching_open(tokens: list[Tok], i: int) -> int:
    depth = 0
    for j in range(i, -1, -1):
        if tokens[j].kind == "PAR_R":
            depth += 1
        elif tokens[j].kind == "PAR_L":
            if depth == 0:
                return j
            depth -= 1
    return -1


def _operand_end(tokens: list[Tok], i: int) -> int:
    """Index just past the operand starting at ``i`` (a number or a parenthesised expression)."""
    if tokens[i].kind != "PAR_L":
        return i + 1
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"PAR_L": 1, "PAR_R": -1}.get(tokens[j].kind, 0)
        if depth == 0:
            return j + 1
    return len(tokens)


def foreign_operator(code: Code, grammar: Grammar, rng: random.Random) -> Broken | None:
    """Write an arithmetic operator as a word, as a symbol the lexicon does not use, or in the wrong place."""
    tokens = list(code.tokens)
    ops = [i for i, t in enumerate(tokens) if t.kind in OPERATOR_WORDS]
    if not ops:
        return None
    i = rng.choice(ops)
    op = tokens[i]
    where = _where(tokens, i)
    variants = ["word", "position"]
    if OPERATOR_SYMBOLS[op.kind] not in grammar.token_types:
        variants.append("symbol")
    variant = rng.choice(variants)
    if variant == "word":
        word = rng.choice(OPERATOR_WORDS[op.kind])
        tokens[i] = Tok(word, "WORD", op.lead)
        return Broken(join(tokens), f"the operator {op.text!r} at {where} is written as the word {word!r}")
    if variant == "symbol":
        symbol = OPERATOR_SYMBOLS[op.kind]
        tokens[i] = Tok(symbol, "CHAR", op.lead)
        return Broken(join(tokens), f"the operator {op.text!r} at {where} is written {symbol!r}")
    if grammar.style == "sexpr":  # prefix -> infix: (+ a b) -> (a + b)
        end = _operand_end(tokens, i + 1)
        moved = tokens[i + 1:end] + [Tok(op.text, op.kind, " ")] + tokens[end:]
        first = moved[0]
        moved[0] = Tok(first.text, first.kind, "", first.role)
        tokens = tokens[:i] + moved
        return Broken(join(tokens), f"the prefix operator {op.text!r} at {where} is written infix")
    start = _matching_open(tokens, i - 1)  # infix -> prefix: (a + b) -> (+ a b)
    if start < 0:
        return None
    del tokens[i]
    tokens.insert(start + 1, Tok(op.text, op.kind, ""))
    after = tokens[start + 2]
    tokens[start + 2] = Tok(after.text, after.kind, " ", after.role)
    return Broken(join(tokens), f"the infix operator {op.text!r} at {where} is written prefix, as in S-expressions")


SYNTAX_BREAKS: dict[str, Callable[[Code, Grammar, random.Random], Broken | None]] = {
    "premature_scope_termination": break_delimiters,
    "scoping_failure": wrap_control,
    "lexical_mapping_failure": misspell_keyword,
    "operator_confusion": foreign_operator,
}


