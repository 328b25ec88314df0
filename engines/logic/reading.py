"""Reading the formula of a model's reply: strictly the whole reply, leniently also a formula set off from prose.

The strict reading (the authors') is the whole reply, stripped. The lenient one also
tries, from the last back, a fenced block, an inline span (backticks, ``$...$``,
``\\(...\\)``) and a whole line, trimmed of the prose around it; what it drops is reported.
A single word is a formula only when it is a vocabulary symbol or looks like one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engines.logic.formula import Atom, Formula, walk
from engines.logic.parse import MAX_CHARS, MAX_LINE, MAX_LINES, SUBSCRIPTS, FormulaFailure, parse_exact
from engines.parsing import ParseFailure, failure_at, shorten

@dataclass(frozen=True)
class Reading:
    """The formula found in a reply, what it was read from, and what had to be dropped."""

    formula: Formula
    source: str
    removed: tuple[str, ...] = ()



_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`|\$\$(.+?)\$\$|\$([^$\n]+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_SYMBOLIC = re.compile(r"[¬~!∧∨&|^→↔⇒⇔∀∃=≠(\[]|->|\\[a-z]+")


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


def read_formula(reply: str, known: frozenset[str] = frozenset(), lenient: bool = False) -> Reading | ParseFailure:
    """The formula a reply gives, or where and why the reply is not a formula.

    ``known`` (the vocabulary's names) decides what counts as a formula rather than a word:
    ``Done.`` is prose, ``x1`` (a vocabulary symbol) and ``x4`` (symbol-like) are formulas.
    ``lenient`` adds the units set off from prose (see the module docstring).
    """
    if not isinstance(reply, str):
        reply = "" if reply is None else str(reply)
    text = reply.translate(SUBSCRIPTS)
    stripped = text.strip()
    whole = _Span(len(text) - len(text.lstrip()), len(text) - len(text.lstrip()) + len(stripped))
    if not stripped:
        return failure_at(text, 0, "the reply is empty")
    try:
        formula = parse_exact(stripped)
        if _answer_like(formula, known):
            return Reading(formula, stripped)
        primary = FormulaFailure("a single word, not a formula over the vocabulary", 0), whole.start
    except FormulaFailure as fail:
        primary = fail, whole.start
    if lenient:
        found = _set_off(text, known)
        if found is not None:
            return found
    failure, base = primary
    return failure_at(text, base + failure.offset, failure.message)


def _set_off(text: str, known: frozenset[str]) -> Reading | None:
    """The last formula set off from the prose: a fenced block, an inline span, a whole line."""
    budget = [5 * MAX_CHARS]  # characters handed to the parser, so that no reply stalls the scorer

    def attempt(span: _Span) -> Formula | None:
        if span.start >= span.end or budget[0] <= 0:
            return None
        budget[0] -= span.end - span.start
        stretch = text[span.start:span.end]
        try:
            formula = parse_exact(stretch)
        except FormulaFailure:
            return None
        return formula if _stretch_like(formula, stretch, known) else None

    for m in reversed([m for m in _FENCE.finditer(text) if m.group(1).strip()]):
        span = _trim(text, m.start(1), m.end(1))
        if (formula := attempt(span)) is not None:
            return _reading(text, formula, span)
    for m in reversed(list(_SPAN.finditer(text))):
        group = next(g for g in range(1, 6) if m.group(g) is not None)
        span = _trim(text, m.start(group), m.end(group))
        if (formula := attempt(span)) is not None:
            return _reading(text, formula, span)
    offsets = [0] + [m.end() for m in re.finditer("\n", text)]
    for start in reversed(offsets[-MAX_LINES:]):
        end = text.find("\n", start)
        span = _trim(text, start, len(text) if end < 0 else end)
        if span.end - span.start <= MAX_LINE and (formula := attempt(span)) is not None:
            return _reading(text, formula, span)
    return None


def _answer_like(formula: Formula, known: frozenset[str]) -> bool:
    """Recognisably a formula: anything but a lone ordinary word (``Done``, ``Yes``).

    A lone atom counts when it names a vocabulary symbol or looks like a symbol (a digit
    or an underscore in it: ``x4``, ``p_1``), so a hallucinated variable is still read.
    """
    if not isinstance(formula, Atom) or formula.args:
        return True
    return _symbol_like(formula.name, known)


def _symbol_like(name: str, known: frozenset[str]) -> bool:
    return name in known or any(ch.isdigit() or ch == "_" for ch in name)


def _stretch_like(formula: Formula, stretch: str, known: frozenset[str]) -> bool:
    """A stretch of prose that is a formula: written with symbols, or over the vocabulary.

    ``I will not guess`` parses (``¬guess``) but is prose: word operators count only when
    every atom is a vocabulary symbol or looks like one (``x1 and not x2``).
    """
    if not _answer_like(formula, known):
        return False
    if _SYMBOLIC.search(stretch):
        return True
    return all(_symbol_like(n.name, known) for n in walk(formula) if isinstance(n, Atom))


def _trim(text: str, start: int, end: int) -> _Span:
    """Strip whitespace, a sentence's final period and markdown emphasis around a span."""
    while True:
        before = (start, end)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start and text[end - 1] == "." and not text[start:end - 1].rstrip().endswith("."):
            end -= 1
        while end - start >= 2 and text[start] == "*" and text[end - 1] == "*":
            start, end = start + 1, end - 1
        if (start, end) == before:
            return _Span(start, end)


def _reading(text: str, formula: Formula, span: _Span) -> Reading:
    removed = tuple(p for p in (shorten(text[:span.start].strip(), collapse_spaces=True),
                               shorten(text[span.end:].strip(), collapse_spaces=True)) if p)
    if removed == (".",):
        removed = ()
    return Reading(formula, text[span.start:span.end], removed)
