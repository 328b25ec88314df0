"""Raw model text -> DEDC assignment expressions, or a parse failure with a position.

Reading policy. The paper's accuracy counts the authors' checker (``engines.dedc.authors``,
which reads the reply as text, rule by rule), not this parser. This module is the reading
that explains a verdict: it keeps whole assignments found among prose (never joining parts
of statements) and says what it dropped, for the tags, the views and ``-s extract=lenient``.

The answer language (paper section 2.1) is a sequence of assignments
``target := symbol (arg, arg, ...)`` closed by ``result := variable``, separated by
``;`` (or one per line). Models wrap it in chat: code fences (```, ```plaintext), an
``Answer:`` prefix, prose before and after, markdown emphasis, numbered lines. The
extractor finds every assignment wherever it sits and reports everything else it had to
drop (``Parsed.removed``) so that the tagger can emit ``format_violation``; whitespace and
``;`` separators are never a violation.

Rules, in order:

* the text is tokenised once (one compiled regular expression); backticks and ``*`` are
  noise (markdown) and are skipped but reported;
* an assignment starts at an identifier followed by ``:=``; its right-hand side is an atom
  (``view_3``, ``attr_12``, ``864``, ``all``) or a call ``symbol (term, ...)`` whose
  ``(`` is on the same line as the symbol; calls may nest (a model may write a single
  expression), arguments may span lines;
* when code fences hold assignments, only the last fenced block holding assignments is
  the answer (earlier drafts and prose outside are dropped and reported);
* ``=`` is not accepted for ``:=`` (the symbolic system is part of what is tested);
* nothing parseable (no ``:=`` at all, a ``:=`` without a target, a right-hand side that is
  not a term, an unclosed call) -> ``ParseFailure`` with the 1-based line and column and
  the offending line with a caret.

Never raises on any input (fuzz-tested).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Union

from engines.parsing import ParseFailure, Positions, shorten

MAX_DEPTH = 40  # nesting limit of calls inside one right-hand side


@dataclass(frozen=True)
class Call:
    """``symbol (args...)``: one primitive application (args are atoms or nested calls)."""

    symbol: str
    args: tuple["Term", ...]

    def text(self) -> str:
        return f"{self.symbol} ({', '.join(term_text(a) for a in self.args)})"


Term = Union[str, Call]


def term_text(term: Term) -> str:
    return term if isinstance(term, str) else term.text()


@dataclass(frozen=True)
class Assignment:
    """``target := value``; ``value`` is a Call, or an atom for aliases like ``result := view_4``."""

    target: str
    value: Term
    line: int
    column: int

    @property
    def symbol(self) -> str | None:
        return self.value.symbol if isinstance(self.value, Call) else None

    @property
    def args(self) -> tuple[Term, ...]:
        return self.value.args if isinstance(self.value, Call) else (self.value,)

    def text(self) -> str:
        return f"{self.target} := {term_text(self.value)}"


@dataclass(frozen=True)
class Parsed:
    assignments: tuple[Assignment, ...]
    removed: tuple[str, ...] = ()  # text dropped around/between the assignments (fences, prose)

    @property
    def clean(self) -> bool:
        return not self.removed


# ------------------------------------------------------------------------ tokens

# The alternatives in the order that decides a tie at one position (``` is a fence, not noise;
# ":=" an assignment, not two characters; "-5" an atom). Every character of a text is in one
# token (the last alternative takes any single character), so a token's start is the sum of
# the lengths before it, and its kind is told by its text (``_kind``).
_TOKEN = re.compile(
    r"```[^\S\n]*[A-Za-z0-9_+\-.]*"  # FENCE
    r"|:="  # ASSIGN
    r"|-?[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*"  # ATOM
    r"|[(),;\n]"  # LP RP COMMA SEMI NL
    r"|[^\S\n]+"  # WS
    r"|[`*]+"  # NOISE
    r"|.",  # OTHER
    re.DOTALL,
)
_FENCE, _ASSIGN, _ATOM, _LP, _RP, _COMMA, _SEMI, _NL, _WS, _NOISE, _OTHER = (
    "FENCE", "ASSIGN", "ATOM", "LP", "RP", "COMMA", "SEMI", "NL", "WS", "NOISE", "OTHER")
_BY_FIRST = {**dict.fromkeys(string.ascii_letters + string.digits + "_", _ATOM),
             "(": _LP, ")": _RP, ",": _COMMA, ";": _SEMI, "\n": _NL, "*": _NOISE}  # kinds a first character decides
_TARGET_OK = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _kind(token: str) -> str:
    """The kind of a token whose first character does not decide it (``_BY_FIRST``)."""
    first = token[0]
    if first == "`":
        return _FENCE if token.startswith("```") else _NOISE
    if first == "-":
        return _ATOM if len(token) > 1 else _OTHER
    if first == ":":
        return _ASSIGN if token == ":=" else _OTHER
    return _WS if first.isspace() else _OTHER  # str.isspace is the regex's \s


class _Fail(Exception):
    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message = message
        self.pos = pos


class _Scanner:
    __slots__ = ("text", "kinds", "values", "starts", "n", "noise", "positions")

    def __init__(self, text: str):
        self.text = text
        values: list[str] = _TOKEN.findall(text)
        starts = [0, *accumulate(map(len, values))]
        starts.pop()
        kinds = [_BY_FIRST.get(v[0]) or _kind(v) for v in values]
        noise: list[int] = []
        if _NOISE in kinds:  # markdown marks are reported, not parsed
            noise = [at for kind, at in zip(kinds, starts) if kind == _NOISE]
            kept = [t for t, kind in enumerate(kinds) if kind != _NOISE]
            kinds, values, starts = [kinds[t] for t in kept], [values[t] for t in kept], [starts[t] for t in kept]
        self.kinds, self.values, self.starts, self.noise = kinds, values, starts, noise
        self.n = len(kinds)
        self.positions: Positions | None = None

    # positions -----------------------------------------------------------------

    def pos(self, i: int) -> int:
        return self.starts[i] if i < self.n else len(self.text)

    def where(self) -> Positions:
        if self.positions is None:
            self.positions = Positions(self.text)
        return self.positions

    def failure(self, offset: int, message: str) -> ParseFailure:
        return self.where().failure(offset, message)

    # grammar -------------------------------------------------------------------

    def skip(self, i: int, newlines: bool) -> int:
        kinds = self.kinds
        while i < self.n and (kinds[i] == _WS or (newlines and kinds[i] == _NL)):
            i += 1
        return i

    def term(self, i: int, depth: int) -> tuple[Term, int]:
        i = self.skip(i, newlines=depth > 0)
        if i >= self.n or self.kinds[i] != _ATOM:
            what = "end of text" if i >= self.n else repr(self.values[i])
            raise _Fail(f"expected a variable, value or primitive call, found {what}", self.pos(i))
        atom = self.values[i]
        j = self.skip(i + 1, newlines=False)
        if j >= self.n or self.kinds[j] != _LP:
            return atom, i + 1
        if depth >= MAX_DEPTH:
            raise _Fail("calls nested too deeply", self.pos(j))
        args: list[Term] = []
        k = self.skip(j + 1, newlines=True)
        if k < self.n and self.kinds[k] == _RP:
            return Call(atom, ()), k + 1
        while True:
            arg, k = self.term(k, depth + 1)
            args.append(arg)
            k = self.skip(k, newlines=True)
            if k >= self.n:
                raise _Fail(f"unclosed '(' of {atom}: the text ends inside its arguments", self.pos(j))
            kind = self.kinds[k]
            if kind == _RP:
                return Call(atom, tuple(args)), k + 1
            if kind != _COMMA:
                raise _Fail(f"expected ',' or ')' in the arguments of {atom}, found {self.values[k]!r}",
                            self.pos(k))
            k += 1


def parse_term(text: str) -> Term | None:
    """One bare expression such as an official candidate ``f1(f0(all,attr_1,5),attr_2,7)``."""
    scanner = _Scanner(text)
    try:
        term, i = scanner.term(0, 0)
    except _Fail:
        return None
    return term if scanner.skip(i, newlines=True) >= scanner.n else None


@dataclass(frozen=True)
class _Statement:
    segment: int  # code fences seen before it (odd: inside a fence)
    assignment: Assignment
    first: int  # token span of the statement
    end: int


def _statements(s: _Scanner) -> tuple[list[_Statement], list[tuple[int, _Fail]]]:
    """Every ``target := term`` statement of the reply, and the failures (with their segment)."""
    kinds, values, n = s.kinds, s.values, s.n
    found: list[_Statement] = []
    failures: list[tuple[int, _Fail]] = []
    segment = 0
    i = 0
    while i < n:
        kind = kinds[i]
        if kind == _FENCE:
            segment += 1
        elif kind == _ASSIGN:
            failures.append((segment, _Fail("':=' without a target variable before it", s.pos(i))))
        if kind != _ATOM:
            i += 1
            continue
        j = s.skip(i + 1, newlines=False)
        if j >= n or kinds[j] != _ASSIGN:
            i += 1
            continue
        target = values[i]
        try:
            if not _TARGET_OK.match(target):
                raise _Fail(f"{target!r} cannot be assigned to", s.pos(i))
            value, k = s.term(j + 1, 0)
        except _Fail as fail:
            failures.append((segment, fail))
            k = j + 1  # resynchronise after the next ';' or line end
            while k < n and kinds[k] not in (_SEMI, _NL, _FENCE):
                k += 1
            i = k
            continue
        line, col = s.where().line_col(s.pos(i))
        end = s.skip(k, newlines=False)
        if end < n and kinds[end] == _SEMI:
            end += 1
        found.append(_Statement(segment, Assignment(target, value, line, col), i, end))
        i = end
    return found, failures


def _nothing_found(s: _Scanner) -> ParseFailure:
    """The failure of a reply without any assignment, at its first visible character (1:1 if empty)."""
    first = next((k for k in range(s.n) if s.kinds[k] not in (_WS, _NL)), None)
    what = "the reply is empty" if first is None and not s.noise else \
        "no assignment 'target := primitive (arguments)' found"
    if "=" in s.values:
        what += " (the answer language assigns with ':=', not '=')"
    return s.failure(s.pos(first) if first is not None else 0, what)


def parse_answer(text: str) -> Parsed | ParseFailure:
    """Extract the assignments of a (possibly chatty) model reply.

    The answer is the statements of the last code fence holding any, else all of them.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return _read(text) if len(text) <= MAX_KEPT_TEXT else _plain_answer(text) or _scanned_answer(text)


MAX_KEPT_TEXT = 1_000  # characters: a longer reply's reading is not kept (a dedc answer has a few hundred)


@lru_cache(maxsize=256)  # about two readings an item in flight (-j 128), a megabyte or so whatever the run's size
def _read(text: str) -> Parsed | ParseFailure:
    """A short reply's reading, kept a while: the simulator reads the gold and the reply it makes, and the
    scorer reads that reply again (often the gold's very text); the readings are immutable."""
    return _plain_answer(text) or _scanned_answer(text)


# A plain answer: statements whose values are atoms or calls of atoms, with nothing but blanks
# and ';' around them (every gold answer, most replies). A statement ends where a token
# would: an atom value is followed by a blank, a ';' or the end, never by more of an atom.
_ATOM_TEXT = r"-?[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*"
_ON_LINE = r"[^\S\n]*"  # blanks that do not end the line
_PLAIN_STATEMENT = re.compile(
    rf"([A-Za-z_][A-Za-z0-9_]*){_ON_LINE}:={_ON_LINE}({_ATOM_TEXT})"
    rf"(?:{_ON_LINE}\(\s*({_ATOM_TEXT}(?:\s*,\s*{_ATOM_TEXT})*)\s*\)|(?!{_ON_LINE}\()(?=[\s;]|\Z))")
_SEPARATORS = re.compile(r"[\s;]*")
_ARGUMENT_COMMA = re.compile(r"\s*,\s*")


def _past_separators(text: str, at: int) -> int:
    separators = _SEPARATORS.match(text, at)
    return separators.end() if separators is not None else at  # never None: the pattern matches ""


def _plain_answer(text: str) -> Parsed | None:
    """A plain answer's reading (the one ``_scanned_answer`` gives it), found by regular expressions
    alone at under a third of the scanner's cost; None for any other text."""
    where = Positions(text) if "\n" in text else None  # one line: a statement's column is its offset + 1
    assignments = []
    at = _past_separators(text, 0)
    while at < len(text):
        statement = _PLAIN_STATEMENT.match(text, at)
        if statement is None:
            return None
        target, symbol, args = statement.group(1, 2, 3)
        value: Term = symbol if args is None else Call(symbol, tuple(_ARGUMENT_COMMA.split(args)))
        assignments.append(Assignment(target, value, *(where.line_col(at) if where is not None else (1, at + 1))))
        at = _past_separators(text, statement.end())
    return Parsed(tuple(assignments)) if assignments else None


def _scanned_answer(text: str) -> Parsed | ParseFailure:
    """Any reply's reading, token by token."""
    s = _Scanner(text)
    found, failures = _statements(s)
    fenced = [f for f in found if f.segment % 2 == 1]
    if fenced:
        last = fenced[-1].segment
        found = [f for f in found if f.segment == last]
        failures = [f for f in failures if f[0] == last]
    if failures:
        fail = failures[0][1]
        return s.failure(fail.pos, fail.message)
    if not found:
        return _nothing_found(s)
    return Parsed(tuple(f.assignment for f in found), _removed(s, [(f.first, f.end) for f in found]))


def _removed(s: _Scanner, covered: list[tuple[int, int]]) -> tuple[str, ...]:
    """Text outside the chosen statements, one piece per line stretch (whitespace and ';' are free)."""
    kinds, values = s.kinds, s.values
    inside = bytearray(s.n)
    for a, b in covered:
        inside[a:b] = b"\x01" * (b - a)
    pieces: list[str] = []
    piece: list[str] = []
    for t in range(s.n):
        kind = kinds[t]
        if inside[t] or kind == _NL:
            if piece:
                pieces.append("".join(piece).strip())
                piece = []
        elif kind == _WS or kind == _SEMI:
            if piece:
                piece.append(" " if kind == _WS else ";")
        else:
            piece.append(values[t])
    if piece:
        pieces.append("".join(piece).strip())
    out = [shorten(p) for p in pieces if p.strip(" ;")]
    if s.noise:
        marks = sorted({"`" if s.text[p] == "`" else "*" for p in s.noise})
        out.append("markdown " + " ".join(marks))
    return tuple(out)
