"""The SPARQL 1.1 query grammar (``sparql.lark``) as a lark LALR parser, and its syntax errors.

Building the LALR tables takes about half a second, once per process; the tables are
therefore also bundled, serialised by lark itself (``sparql_lalr.bin``, written by
``benchmarks/compost_build_parser.py``) together with the SHA-256 of the grammar they
were built from. They are used only when that digest matches ``sparql.lark``; otherwise
the parser is built from the grammar, so a stale file costs time, never correctness.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import re
from functools import lru_cache
from pathlib import Path

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

GRAMMAR_PATH = Path(__file__).with_name("sparql.lark")
TABLES_PATH = Path(__file__).with_name("sparql_lalr.bin")
OPTIONS = {"parser": "lalr", "lexer": "basic", "start": "start"}
MAX_EXPECTED = 8  # expected terminals named in an error message
# What an error shows of the text where no terminal matches: a word, or the one character (U+001F and the
# like are whitespace to Python's \S but not to the grammar)
_WORD = re.compile(r"\S{1,20}|.", re.DOTALL)


class SparqlSyntaxError(ValueError):
    """The text is not a SPARQL 1.1 query; says where (1-based line and column) and what was expected."""

    def __init__(self, line: int, column: int, found: str, expected: tuple[str, ...]):
        self.line, self.column, self.found, self.expected = line, column, found, expected
        wanted = f"; expected {', '.join(expected)}" if expected else ""
        super().__init__(f"line {line}, column {column}: unexpected {found}{wanted}")


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text(encoding="utf-8")


def grammar_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_parser(text: str) -> lark.Lark:
    return lark.Lark(text, **OPTIONS)


def serialise(parser: lark.Lark, text: str) -> bytes:
    """The bundled form: the grammar's digest and lark's own serialisation of the parser."""
    buffer = io.BytesIO()
    parser.save(buffer)
    return pickle.dumps({"grammar_sha256": grammar_digest(text), "lark": buffer.getvalue()})


@lru_cache(maxsize=1)
def parser() -> lark.Lark:
    text = grammar_text()
    try:
        bundled = pickle.loads(TABLES_PATH.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        bundled = None
    if isinstance(bundled, dict) and bundled.get("grammar_sha256") == grammar_digest(text):
        return lark.Lark.load(io.BytesIO(bundled["lark"]))
    return build_parser(text)


def _shown(name: str, grammar: lark.Lark) -> str:
    """A terminal as a reader knows it: ``'{'`` for punctuation, its name for classes like IRIREF."""
    try:
        pattern = grammar.get_terminal(name).pattern
    except KeyError:
        return name
    return repr(pattern.value) if pattern.type == "str" else name


def parse_tree(text: str) -> lark.ParseTree:
    """The query's parse tree; SparqlSyntaxError where it stops being SPARQL."""
    grammar = parser()
    try:
        return grammar.parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, grammar) from None


CACHED = 256  # texts: a run reads each reply and gold query a few times within one item's steps, items in flight interleave


@lru_cache(maxsize=CACHED)
def cached_tree(text: str) -> lark.ParseTree | SparqlSyntaxError:
    """The parse tree or the syntax error, without the traceback that would keep the parser's frames."""
    try:
        return parse_tree(text)
    except SparqlSyntaxError as exc:
        return exc.with_traceback(None)


def offset(text: str, line: int, column: int) -> int:
    """The index in ``text`` of a 1-based line and column (where a syntax error points)."""
    lines = text.split("\n")
    return sum(len(part) + 1 for part in lines[:line - 1]) + column - 1


def _syntax_error(exc: UnexpectedInput, text: str, grammar: lark.Lark) -> SparqlSyntaxError:
    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        lines = text.split("\n")
        expected = getattr(exc, "expected", None) or getattr(exc, "accepts", None) or ()
        return SparqlSyntaxError(len(lines), len(lines[-1]) + 1, "end of query",
                                 tuple(sorted(_shown(e, grammar) for e in expected))[:MAX_EXPECTED])
    if isinstance(exc, UnexpectedToken):
        expected = exc.accepts or exc.expected
        return SparqlSyntaxError(exc.line, exc.column, repr(str(exc.token)),
                                 tuple(sorted(_shown(e, grammar) for e in expected))[:MAX_EXPECTED])
    assert isinstance(exc, UnexpectedCharacters) and exc.pos_in_stream is not None
    word = _WORD.match(text, exc.pos_in_stream)
    assert word is not None, "lark stops at a character of the text, and _WORD matches any"
    found = word.group()
    return SparqlSyntaxError(exc.line, exc.column, repr(found),
                             tuple(sorted(_shown(e, grammar) for e in exc.allowed or ()))[:MAX_EXPECTED])
