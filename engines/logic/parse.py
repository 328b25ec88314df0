"""Raw model text -> formula, or a parse error with line, column and context.

The grammar (lark, LALR, built once per process) reads what models actually write:

* negation ``¬ ~ ! not \\neg``; conjunction ``∧ & && ^ /\\ and \\land``; disjunction
  ``∨ | || \\/ or \\lor`` and the letter ``v``; implication ``→ -> => ⇒ implies``;
  biconditional ``↔ <-> <=> ⇔ iff``; quantifiers ``∀ ∃ forall exists`` (not ``all``, which
  is too common in prose) with a variable list and an optional ``.`` or ``:``
  (``∀x,y.``, ``(∃x)``); ``=``, ``≠``, ``!=``; round or square brackets; subscript digits
  (``x₁``) read as digits. Words are case-insensitive and whole words only (``android``
  is a name).
* precedence, tightest first: ¬, ∧, ∨, →(right-assoc), ↔; a quantifier's body extends as
  far right as possible (lark resolves that shift/reduce choice as shift, by design).
* ``v`` is disjunction only where a name cannot stand: right after a complete operand
  (``x1 v x2``). Everywhere else (``v``, ``∀v``, ``p(v)``, ``vx``) it is a name. lark's
  contextual lexer gives exactly this: in a state expecting an operand the ``v``
  terminal is not acceptable, so ``v`` lexes as a name.

``reading.read_formula`` reads a reply as the authors did (``nlfs``: the raw reply, operator
symbols mapped, lowercased, then NLTK's ``read_logic``): the whole reply, surrounding
whitespace aside, is the formula, or it is unparseable with the line, column and what was
expected there. Nothing is picked out of prose: a reply that echoes the prompt and then
writes a formula is unparseable, never read as the first name it mentions.

``lenient=True`` (``-s extract=lenient``, for diagnosis only; the paper's figures count the
strict reading) also accepts a formula set off from the prose as a unit: the last fenced
code block, else the last inline code or math span, else the last whole line that is a
formula (a sentence's final period and markdown emphasis trimmed). A stretch counts only
if it is written with symbols or over vocabulary-like names (``I will not guess`` parses
as ``¬guess`` but is prose) and is more than a lone word. Everything dropped is returned
(``Reading.removed``) so that the tagger emits ``format_violation``. Parts of a line are
never tried: ``Propositions: x1, x2, x3`` holds no formula, whatever its prefix parses to.

Successful parses are remembered by text (``remember``; the generator records its own
formulas), so a reply identical to a formula already seen is not parsed again.

Never raises on any input, and never recurses on the input: lark's LALR parser keeps an
explicit stack and builds the AST bottom-up through an inline transformer; candidates
longer than ``MAX_CHARS`` or nested deeper than ``MAX_DEPTH`` are refused before or right
after parsing (everything downstream may then recurse safely).
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Callable, cast

import lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from engines.logic.formula import (
    AND,
    EXISTS,
    FORALL,
    IFF,
    IMPLIES,
    OR,
    Arrow,
    Atom,
    Equal,
    Formula,
    Not,
    Quant,
    depth,
    junction,
)
from engines.parsing import ParseFailure, failure_at

MAX_CHARS = 20_000  # a candidate formula longer than this is refused unparsed
MEMO_CHARS = 5_000_000  # remembered parses, counted in characters of text, before forgetting all
MAX_DEPTH = 100  # nesting (brackets, or AST levels) beyond which a formula is refused
MAX_LINE = 1_000  # lenient reading: lines longer than this are not tried as a formula
MAX_LINES = 40  # lenient reading: lines tried, from the last

GRAMMAR = r"""
?start: formula
?formula: iff
?iff: imp | iff IFF imp
?imp: disj | disj IMP imp
?disj: conj | disj OR conj | disj OR_V conj
?conj: unary | conj AND unary
?unary: NOT unary -> neg
      | QUANT vars _QSEP? formula -> quant
      | "(" QUANT vars ")" unary -> quant
      | NAME EQ NAME -> eq
      | NAME NEQ NAME -> neq
      | NAME -> prop
      | NAME "(" [NAME ("," NAME)*] ")" -> pred
      | "(" formula ")"
      | "[" formula "]"
vars: NAME ("," NAME)*
_QSEP: "." | ":"
NOT.2: /(?:not\b|¬|~|!(?!=)|\\neg\b|\\lnot\b)/i
AND.2: /(?:and\b|∧|&&?|\/\\|\^|\\land\b|\\wedge\b)/i
OR.2: /(?:or\b|∨|\|\|?|\\\/|\\lor\b|\\vee\b)/i
OR_V.2: /v\b/
IMP.2: /(?:->|→|=>|⇒|\\to\b|\\rightarrow\b|\\implies\b|implies\b)/i
IFF.3: /(?:<->|↔|<=>|⇔|\\leftrightarrow\b|\\iff\b|iff\b)/i
QUANT.2: /(?:forall\b|exists\b|∀|∃|\\forall\b|\\exists\b)/i
EQ.2: /==?(?![=>])/
NEQ.2: /!=|≠|\\neq\b/
NAME: /[^\W\d]\w*/
%ignore /\s+/
"""

_TERMINAL_TEXT = {
    "NAME": "a name", "NOT": "¬", "AND": "∧", "OR": "∨", "OR_V": "v", "IMP": "→", "IFF": "↔",
    "QUANT": "a quantifier", "EQ": "=", "NEQ": "≠", "LPAR": "(", "RPAR": ")", "LSQB": "[", "RSQB": "]",
    "COMMA": ",", "_QSEP": "'.'", "$END": "the end of the formula",
}
SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_FORALL_WORDS = frozenset(("∀", "forall", "\\forall"))


class _Build(lark.Transformer[lark.Token, Formula]):
    """Builds formula nodes while lark reduces (inline, so no recursion over the tree)."""

    def neg(self, c: list[Any]) -> Formula:
        return Not(c[1])

    def quant(self, c: list[Any]) -> Formula:
        kind = FORALL if str(c[0]).lower() in _FORALL_WORDS else EXISTS
        body: Formula = c[2]
        for var in reversed(c[1]):
            body = Quant(kind, var, body)
        return body

    def vars(self, c: list[Any]) -> list[str]:
        return [str(t) for t in c]

    def eq(self, c: list[Any]) -> Formula:
        return Equal(str(c[0]), str(c[2]))

    def neq(self, c: list[Any]) -> Formula:
        return Not(Equal(str(c[0]), str(c[2])))

    def prop(self, c: list[Any]) -> Formula:
        return Atom(str(c[0]))

    def pred(self, c: list[Any]) -> Formula:
        return Atom(str(c[0]), tuple(str(t) for t in c[1:] if t is not None))

    def conj(self, c: list[Any]) -> Formula:
        return junction(AND, (c[0], c[2]))

    def disj(self, c: list[Any]) -> Formula:
        return junction(OR, (c[0], c[2]))

    def imp(self, c: list[Any]) -> Formula:
        return Arrow(IMPLIES, c[0], c[2])

    def iff(self, c: list[Any]) -> Formula:
        return Arrow(IFF, c[0], c[2])


@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(GRAMMAR, parser="lalr", lexer="contextual", transformer=_Build())


# ------------------------------------------------------------------------ results


class FormulaSyntaxError(ValueError):
    """A text that must be a formula (a gold answer) is not one."""

    def __init__(self, error: ParseFailure):
        super().__init__(error.describe())
        self.error = error


class FormulaFailure(Exception):
    """A parse failure at an offset of the text being parsed.

    The message of a lark error is worked out only when asked for: naming the expected
    tokens makes lark replay the parser, and the search through prose needs offsets only.
    """

    def __init__(self, message: str | Callable[[], str], offset: int):
        super().__init__()
        self._message = message
        self.offset = offset

    @property
    def message(self) -> str:
        if callable(self._message):
            self._message = self._message()
        return self._message


# ------------------------------------------------------------------------ parsing


_memo: dict[str, Formula] = {}
_memo_chars = [0]


def remember(text: str, formula: Formula) -> None:
    """Record that ``text`` parses to ``formula`` (the generator knows; replies often repeat it)."""
    if _memo_chars[0] + len(text) > MEMO_CHARS:
        clear_memo()
    _memo[text] = formula
    _memo_chars[0] += len(text)


def remembered(text: str) -> Formula | None:
    """The formula recorded for ``text``, if any."""
    return _memo.get(text)


def clear_memo() -> None:
    """Forget every remembered parse (also for tests that must exercise the parser itself)."""
    _memo.clear()
    _memo_chars[0] = 0


def parse_exact(text: str) -> Formula:
    """Parse exactly ``text`` (already subscript-normalised), remembering successes; raises FormulaFailure."""
    hit = _memo.get(text)
    if hit is None:
        hit = _parse_text(text)
        remember(text, hit)
    return hit


def _parse_text(text: str) -> Formula:
    """The lark parse of ``text`` within the size and nesting caps; raises FormulaFailure."""
    if len(text) > MAX_CHARS:
        raise FormulaFailure(f"formula too long: {len(text)} characters (limit {MAX_CHARS})", MAX_CHARS)
    if text.count("(") + text.count("[") > MAX_DEPTH:  # else brackets cannot nest too deep
        level = 0
        for i, ch in enumerate(text):
            if ch in "([":
                level += 1
                if level > MAX_DEPTH:
                    raise FormulaFailure(f"brackets nested deeper than {MAX_DEPTH} levels", i)
            elif ch in ")]":
                level -= 1
    try:
        formula = cast(Formula, _parser().parse(text))  # lark types parse() as a tree; the transformer makes a Formula
    except UnexpectedInput as exc:
        raise FormulaFailure(partial(_describe, exc, text), _offset(exc, text)) from None
    except (LarkError, RecursionError) as exc:  # pragma: no cover - defensive: lark internals
        raise FormulaFailure(f"cannot parse: {exc}", 0) from None
    if depth(formula) > MAX_DEPTH:
        raise FormulaFailure(f"formula nested deeper than {MAX_DEPTH} levels", 0)
    return formula


def _offset(exc: UnexpectedInput, text: str) -> int:
    pos = getattr(exc, "pos_in_stream", None)
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        if token.type == "$END":
            return len(text.rstrip())
        pos = token.start_pos
    return pos if isinstance(pos, int) and 0 <= pos <= len(text) else len(text)


def _describe(exc: UnexpectedInput, text: str) -> str:
    if isinstance(exc, UnexpectedCharacters):
        return f"unexpected character {exc.char!r}"
    if isinstance(exc, UnexpectedToken):
        expected = sorted({_TERMINAL_TEXT.get(e, e) for e in (exc.accepts or exc.expected or ())})
        if exc.token.type == "$END":
            what = "the formula ends too early (an operand or ')' is missing)"
        else:
            what = f"unexpected {str(exc.token)!r}"
        return what + (f"; expected {', '.join(expected[:8])}" if expected else "")
    return "cannot parse the formula"  # pragma: no cover - lark has no other UnexpectedInput for LALR


def parse_formula(text: str) -> Formula:
    """A text that is exactly one formula (gold answers, tests); FormulaSyntaxError otherwise."""
    text = text.translate(SUBSCRIPTS)
    try:
        return parse_exact(text.strip())
    except FormulaFailure as fail:
        lead = len(text) - len(text.lstrip())
        raise FormulaSyntaxError(failure_at(text, fail.offset + lead, fail.message)) from None
