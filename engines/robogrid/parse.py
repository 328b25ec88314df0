"""Raw model text -> a program under the item's grammar (or VALID/INVALID), or a failure
with line, column and the offending line under a caret.

The paper parses "the program string synthesized by the LLM" with Lark (SVR, eq. 1) and
releases no code, so the strict reading (the default) takes the program where the prompt
asks for it, whole:

1. the last fenced code block (```...```; an unclosed last fence runs to the end);
2. otherwise the text after the last marker line (``FINAL PROGRAM:``, ``Program:``,
   ``Code:``, ``Answer:``), which is what the CoT prompt asks for;
3. otherwise the whole reply.

That stretch parses under the item's grammar or the reply is unparseable; nothing is
picked out of prose. A grammaticality judgement (task 1) is the whole reply without the
CoT (the last non-empty line), an optional ``ANSWER:`` aside, reading exactly VALID or
INVALID; a judgement anywhere else (an echoed prompt says "output 'VALID'") is not one.

``lenient=True`` (``-s extract=lenient``, for diagnosis) also tries the lines from the first
to the last line that reads as code (mostly tokens of this grammar, or names of its
symbols), which recovers a bare program with prose around it, and takes the last VALID or
INVALID anywhere in a judgement. Everything dropped is reported (``Parsed.removed``) so the
tagger can emit ``format_violation``; an empty program is a failure, not an empty parse.

Guards, so that no reply can crash or stall the scorer: replies over ``MAX_REPLY`` and
programs over ``MAX_CHARS`` characters are refused at the limit; the scanner refuses
brackets nested over ``grammars.MAX_NESTING`` deep and number literals over
``grammars.MAX_DIGITS`` digits (the LALR parser is iterative, so that bounds every
recursive walk of a tree). Results are cached per (grammar, text) (``remember``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

from engines.parsing import ParseFailure, Positions, shorten
from engines.robogrid.grammars import CODE_SHARE, Grammar, SyntaxProblem, code_share
from engines.robogrid.nodes import Program

MAX_CHARS = 64_000
MAX_REPLY = 1_000_000
CACHED_CHARS = 20_000  # longer texts are parsed every time (generated programs are < 10 KB)
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
_MARKER = re.compile(r"^[ \t>*#]*(?:final program|final answer|final code|program|code|answer)[ \t*]*:[ \t]*",
                     re.I | re.M)
_VERDICT = re.compile(r"\b(INVALID|VALID)\b", re.I)
VERDICT_NOISE = " \t\r\n'\"`*.:!"
_ANSWER = re.compile(r"[\s'\"`*]*(?:answer[\s*]*:[\s'\"`*]*)?(INVALID|VALID)[\s'\"`*.!]*", re.I)


@dataclass(frozen=True)
class ProgramFailure(ParseFailure):
    """Where a reply fails the item's grammar, with what the parser would have accepted there."""

    expected: tuple[str, ...] = ()  # terminal names the parser would have accepted
    source: str = ""  # the stretch of the reply that was parsed as the program
    start: int = 0  # its offset in the reply


@dataclass(frozen=True)
class Parsed:
    program: Program
    source: str  # the program text as found in the reply
    start: int  # its offset in the reply
    removed: tuple[str, ...] = ()  # what was dropped around it (prose, fences, markers)
    marked: bool = False  # found in a fence or after a marker, as the CoT prompt asks


@dataclass(frozen=True)
class Judgement:
    answer: str  # VALID | INVALID
    removed: tuple[str, ...] = ()


def failure(text: str, offset: int, message: str, expected: tuple[str, ...] = (), start: int = 0,
            end: int | None = None) -> ProgramFailure:
    found = Positions(text).failure(offset, message)
    source = text[start:len(text) if end is None else end]
    return ProgramFailure(found.message, found.line, found.column, found.context, expected, source, start)


@dataclass(frozen=True)
class _Problem:
    message: str
    offset: int
    expected: tuple[str, ...]


class _Cache:
    """Parse results by (grammar, text); the least recently used go beyond ``size``."""

    def __init__(self, size: int):
        self.size = size
        self.data: OrderedDict[tuple[Grammar, str], Program | _Problem] = OrderedDict()

    def get(self, key: tuple[Grammar, str]) -> Program | _Problem | None:
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
        return hit

    def put(self, key: tuple[Grammar, str], value: Program | _Problem) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.size:
            self.data.popitem(last=False)


_CACHE = _Cache(4096)


def remember(grammar: Grammar, text: str, program: Program) -> None:
    """Record what ``text`` parses to, when it is known without parsing.

    The generator linearises trees it built, and parse(linearise(t)) == t is proven for
    every style, lexicon and depth (tests/test_robogrid_grammars.py), so items built in
    this process are scored without parsing their gold program (or a reply equal to it).
    """
    _CACHE.put((grammar, text), program)


def _parse(grammar: Grammar, source: str) -> Program | _Problem:
    if len(source) > CACHED_CHARS:  # long texts are rare and would make the cache large
        return _parse_uncached(grammar, source)
    hit = _CACHE.get((grammar, source))
    if hit is None:
        hit = _parse_uncached(grammar, source)
        _CACHE.put((grammar, source), hit)
    return hit


def _parse_uncached(grammar: Grammar, source: str) -> Program | _Problem:
    if len(source) > MAX_CHARS:
        return _Problem(f"the program is longer than {MAX_CHARS} characters", MAX_CHARS, ())
    if not source.strip():
        return _Problem("no program found", len(source), ())
    try:
        return grammar.parse(source)
    except SyntaxProblem as exc:
        return _Problem(exc.message, exc.offset, exc.expected)
    except RecursionError:  # belt and braces: the nesting guard should make this unreachable
        return _Problem("the program is nested too deeply", 0, ())


def parse_code(text: str, grammar: Grammar) -> Program | ProgramFailure:
    """The whole text as one program (gold programs, judge candidates)."""
    result = _parse(grammar, text)
    if isinstance(result, _Problem):
        return failure(text, result.offset, result.message, result.expected)
    return result


def _candidate(text: str) -> tuple[int, int, bool]:
    """(start, end, marked) of where the program should be."""
    fences = [m for m in _FENCE.finditer(text) if m.group(1).strip()]
    if fences:
        return fences[-1].start(1), fences[-1].end(1), True
    markers = list(_MARKER.finditer(text))
    if markers:
        return markers[-1].end(), len(text), True
    return 0, len(text), False


def _code_lines(text: str, start: int, end: int, grammar: Grammar) -> tuple[int, int] | None:
    """The stretch from the first to the last line that reads as code rather than prose."""
    first = last = None
    pos = start
    for line in text[start:end].split("\n"):
        if code_share(list(grammar.scan(line))) >= CODE_SHARE:
            if first is None:
                first = pos
            last = pos + len(line)
        pos += len(line) + 1
    return (first, last) if first is not None and last is not None else None


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The stretch without surrounding whitespace (so a fenced program equals the bare one)."""
    segment = text[start:end]
    body = segment.strip()
    if not body:
        return start, start
    lead = len(segment) - len(segment.lstrip())
    return start + lead, start + lead + len(body)


def _removed(text: str, start: int, end: int) -> tuple[str, ...]:
    pieces = []
    for piece in (text[:start], text[end:]):
        for line in piece.split("\n"):
            line = line.strip()
            if line:
                pieces.append("markdown code fence" if line.startswith("```") else shorten(line))
    return tuple(dict.fromkeys(pieces))


def parse_reply(text: str, grammar: Grammar, lenient: bool = False) -> Parsed | ProgramFailure:
    """The program a model's reply contains (see the module docstring for where it is looked for)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    if len(text) > MAX_REPLY:
        return failure(text, MAX_REPLY, f"the reply is longer than {MAX_REPLY} characters", (), MAX_REPLY, MAX_REPLY)
    start, end, marked = _candidate(text)
    lo, hi = _trimmed(text, start, end)
    result = _parse(grammar, text[lo:hi])
    if isinstance(result, _Problem) and lenient and end - start <= MAX_CHARS:
        lines = _code_lines(text, start, end, grammar)
        if lines is not None and _trimmed(text, *lines) != (lo, hi):
            lo, hi = _trimmed(text, *lines)  # its failure, if it fails too, is the one closer to the program
            result = _parse(grammar, text[lo:hi])
    if isinstance(result, _Problem):
        return failure(text, lo + result.offset, result.message, result.expected, lo, hi)
    return Parsed(result, text[lo:hi], lo, _removed(text, lo, hi), marked)


def parse_verdict(text: str, cot: bool = False, lenient: bool = False) -> Judgement | ProgramFailure:
    """VALID or INVALID: the reply (its last non-empty line after a CoT) says exactly that;
    ``lenient`` takes the last one anywhere. Anything else in the reply is reported as removed."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[:MAX_REPLY]
    if lenient:
        matches = list(_VERDICT.finditer(text))
        if not matches:
            return failure(text, 0, "no VALID or INVALID in the reply")
        start, end = matches[-1].start(), matches[-1].end()
    else:
        lo, hi = _trimmed(text, 0, len(text))
        if cot and lo < hi:
            lo = text.rfind("\n", lo, hi) + 1 or lo
            lo, hi = _trimmed(text, lo, hi)
        answer = _ANSWER.fullmatch(text, lo, hi)
        if answer is None:
            where = "the last line of the reply" if cot else "the reply"
            return failure(text, lo, f"{where} is not VALID or INVALID (optionally after 'ANSWER:')",
                           ("VALID", "INVALID"), lo, hi)
        start, end = answer.start(1), answer.end(1)
    rest = (text[:start] + " " + text[end:]).strip(VERDICT_NOISE)
    removed = tuple(shorten(line.strip()) for line in rest.split("\n") if line.strip(VERDICT_NOISE))
    return Judgement(text[start:end].upper(), removed)
