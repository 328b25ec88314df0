"""Grammar synthesis (BuildGrammar of Algorithm 1) and parsing programs with lark.

Three styles (appendix A.1.1) share one abstract syntax (nodes.py):

* **block**: ``action_stmt: DO action END``, ``loop: LOOP expr TIMES LBR stmt+ RBR``,
  ``if_stmt: IF cond THEN LBR stmt+ RBR (ELSE LBR stmt+ RBR)?``; infix expressions
  ``((4 * 4) + 3)``, conditions ``(holding a and not (holding b))``;
* **c**: ``action_stmt: action SEMI``, ``loop: LOOP PAR_L expr PAR_R LBR stmt* RBR``,
  calls ``go(forward, 2);`` and ``holding(key)``; braces and semicolons;
* **sexpr**: ``(repeat (* (+ 0 1) 4) (if (and (has a) (has b)) next (go forward 2)))``.

Binary operators are always parenthesised, so every grammar is unambiguous and LALR(1)
and a program has exactly one tree.

A grammar (style + lexicon) exists in three forms, all produced here from one rule text
per style, so they cannot drift apart:

* ``Grammar.ebnf``: what the model is shown (the rules and ``NAME: "spelling"`` terminal
  definitions, as in section 2.2);
* ``Grammar.lark_source``: a complete lark grammar (terminal strings, ``%ignore``) that
  stock ``Lark(source, parser="lalr", transformer=AstBuilder())`` parses with;
* the parser the scorer uses: LALR tables depend only on the rules and the terminal
  *names*, never on their spellings, so one lark LALR parser is built per style
  (``%declare``-d terminals, cached) and each grammar only brings its own token table to a
  small custom lexer (``Scanner``). Building a new grammar costs a dict, not a 10 ms
  LALR construction, which is what lets every item have its own grammar.

The scanner reads words whole (``[A-Za-z_][A-Za-z0-9_]*``), numbers and single
punctuation characters: ``doturn`` is one unknown word, as in any programming language;
item names are the five bases with an optional ``_0``..``_9`` (ITEM's pattern).
Unknown words and characters become tokens no rule accepts, so they are reported by the
LALR parser like any other unexpected token, with the terminals it expected.

The three forms stay in this one module because they must come from the same rule text:
``Grammar`` builds its scanner and LALR parser from the lark glue below, and the glue
reads the rules and terminal names that ``Grammar`` writes out. Only the tree-to-nodes
transformer (``ast_builder.AstBuilder``), which reads no rule text, lives apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Callable, Iterator, NamedTuple, cast

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedToken
from lark.lexer import Lexer

from engines.robogrid.ast_builder import AstBuilder
from engines.robogrid.lexicon import Lexicon
from engines.robogrid.nodes import ITEM_BASES, ITEM_PATTERN, Program
from engines.robogrid.settings import STYLES

MAX_NESTING = 100  # open brackets at once; generated programs need < 40
MAX_DIGITS = 9  # longest number literal (generated literals are single digits)
UNKNOWN_WORD, UNKNOWN_CHAR = "UNKNOWN_WORD", "UNKNOWN_CHAR"
OPENERS, CLOSERS = frozenset({"LBR", "PAR_L"}), frozenset({"RBR", "PAR_R"})

_DIRECTIONS = """
?direction: FORWARD | BACKWARD
?side: LEFT | RIGHT
"""
_INFIX_EXPR = """
?expr: INT -> num
     | PAR_L expr PLUS expr PAR_R -> add
     | PAR_L expr STAR expr PAR_R -> mul
"""
_INFIX_LOGIC = """
     | NOT PAR_L cond PAR_R -> negation
     | PAR_L cond AND cond PAR_R -> conjunction
     | PAR_L cond OR cond PAR_R -> disjunction
"""
RULES = {
    "block": """
start: stmt+
?stmt: action_stmt | loop | if_stmt
action_stmt: DO action END
loop: LOOP expr TIMES LBR stmt+ RBR
if_stmt: IF cond THEN LBR stmt+ RBR (ELSE LBR stmt+ RBR)?
?action: MOVE direction expr -> move
       | TURN side -> turn
       | GRAB ITEM -> grab
""" + _DIRECTIONS + _INFIX_EXPR + """
?cond: HOLDING ITEM -> holding""" + _INFIX_LOGIC,
    "c": """
start: stmt*
?stmt: action_stmt | loop | if_stmt
action_stmt: action SEMI
loop: LOOP PAR_L expr PAR_R LBR stmt* RBR
if_stmt: IF PAR_L cond PAR_R LBR stmt* RBR (ELSE LBR stmt* RBR)?
?action: MOVE PAR_L direction COMMA expr PAR_R -> move
       | TURN PAR_L side PAR_R -> turn
       | GRAB PAR_L ITEM PAR_R -> grab
""" + _DIRECTIONS + _INFIX_EXPR + """
?cond: HOLDING PAR_L ITEM PAR_R -> holding""" + _INFIX_LOGIC,
    "sexpr": """
start: stmt+
?stmt: action | loop | if_stmt
loop: PAR_L LOOP expr stmt+ PAR_R
if_stmt: PAR_L IF cond THEN stmt+ (ELSE stmt+)? PAR_R
?action: PAR_L MOVE direction expr PAR_R -> move
       | PAR_L TURN side PAR_R -> turn
       | PAR_L GRAB ITEM PAR_R -> grab
""" + _DIRECTIONS + """
?expr: INT -> num
     | PAR_L PLUS expr expr PAR_R -> add
     | PAR_L STAR expr expr PAR_R -> mul

?cond: PAR_L HOLDING ITEM PAR_R -> holding
     | PAR_L NOT cond PAR_R -> negation
     | PAR_L AND cond cond PAR_R -> conjunction
     | PAR_L OR cond cond PAR_R -> disjunction
""",
}
# Punctuation per style; None means "the lexicon's block brackets".
PUNCTUATION: dict[str, dict[str, str | None]] = {
    "block": {"LBR": None, "RBR": None, "PAR_L": "(", "PAR_R": ")"},
    "c": {"LBR": "{", "RBR": "}", "PAR_L": "(", "PAR_R": ")", "SEMI": ";", "COMMA": ","},
    "sexpr": {"PAR_L": "(", "PAR_R": ")"},
}
FIXED_TERMINALS = {"ITEM": f"/{ITEM_PATTERN}/", "INT": "/[0-9]+/"}
RULE_NAMES = frozenset(re.findall(r"^\??([a-z_]+):", "".join(RULES.values()), re.M))
# Every name a grammar text uses for a symbol: a model may write these instead of spellings.
SYMBOL_NAMES = frozenset(re.findall(r"\b[A-Z][A-Z_]*\b", "".join(RULES.values()))) | RULE_NAMES
CODE_SHARE = 0.5  # text with a smaller share of grammar tokens (or symbol names) reads as prose
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|\S")


class Lexeme(NamedTuple):
    kind: str  # terminal name, ITEM, INT, UNKNOWN_WORD or UNKNOWN_CHAR
    text: str
    offset: int


def terminal_names(style: str) -> list[str]:
    """The terminals a style's rules use, in order of first use."""
    return list(dict.fromkeys(re.findall(r"\b[A-Z][A-Z_]*\b", RULES[style])))


def code_share(lexemes: list["Lexeme"]) -> float:
    """Share of the tokens a grammar knows, counting its symbols' names (``DO``, ``if_stmt``)."""
    if not lexemes:
        return 0.0
    known = sum(1 for x in lexemes if x.kind not in (UNKNOWN_WORD, UNKNOWN_CHAR) or x.text in SYMBOL_NAMES)
    return known / len(lexemes)


class SyntaxProblem(Exception):
    """A program does not parse: where (character offset), what was found, what was expected."""

    def __init__(self, message: str, offset: int, found: str = "", expected: tuple[str, ...] = ()):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.found = found
        self.expected = expected


@dataclass(frozen=True)
class Grammar:
    style: str
    lexicon: Lexicon

    @cached_property
    def terminals(self) -> dict[str, str]:
        """Terminal name -> spelling for every terminal except ITEM and INT, in order of use."""
        words = dict(self.lexicon.words)
        punct = PUNCTUATION[self.style]
        out = {}
        for name in terminal_names(self.style):
            if name in FIXED_TERMINALS:
                continue
            if name in punct:
                spelled = punct[name]
                out[name] = spelled if spelled is not None else self.lexicon.brackets[name == "RBR"]
            else:
                out[name] = words[name]
        return out

    @cached_property
    def token_types(self) -> dict[str, str]:
        """Spelling -> terminal name: the scanner's table."""
        return {spelling: name for name, spelling in self.terminals.items()}

    @cached_property
    def keywords(self) -> frozenset[str]:
        """Spellings of the lexicon's keyword terminals used by this style (not punctuation)."""
        return frozenset(s for n, s in self.terminals.items() if n not in PUNCTUATION[self.style])

    def spelling(self, name: str) -> str:
        return self.terminals.get(name, name)

    def _terminal_lines(self) -> list[str]:
        """Keywords in order of use, then punctuation, then ITEM and INT."""
        punct = PUNCTUATION[self.style]
        order = sorted(self.terminals, key=lambda name: name in punct)
        lines = [f'{name}: "{self.terminals[name]}"' for name in order]
        return lines + [f"{name}: {pattern}" for name, pattern in FIXED_TERMINALS.items()]

    @cached_property
    def ebnf(self) -> str:
        """The grammar as the model sees it: rules, then one line per terminal."""
        rules = re.sub(r"^\?", "", RULES[self.style].strip(), flags=re.M)
        rules = re.sub(r" -> [a-z_]+$", "", rules, flags=re.M)
        rules = re.sub(r"\n{2,}", "\n", rules)
        rules = re.sub(r"^\s+\|", "    |", rules, flags=re.M)
        return "\n".join([rules, "", *self._terminal_lines(), "// whitespace between tokens is ignored"])

    @cached_property
    def lark_source(self) -> str:
        """A complete lark grammar for stock ``Lark(..., parser="lalr", transformer=AstBuilder())``."""
        return "\n".join([RULES[self.style].strip(), "", *self._terminal_lines(), r"%ignore /\s+/", ""])

    def describe_terminal(self, name: str) -> str:
        if name in self.terminals:
            return f'{name} "{self.terminals[name]}"'
        if name == "$END":
            return "end of program"
        return name

    # ---------------------------------------------------------------- parsing

    @cached_property
    def _kinds(self) -> dict[str, str]:
        """Word -> terminal for every spelling and item name; numbers and unknowns are classified on the fly."""
        items = {f"{base}{suffix}": "ITEM" for base in ITEM_BASES for suffix in ["", *(f"_{d}" for d in range(10))]}
        return {**items, **self.token_types}

    def kind_of(self, word: str) -> str:
        kind = self._kinds.get(word)
        if kind is not None:
            return kind
        if word[0] in "0123456789":
            return "INT"
        return UNKNOWN_WORD if word[0].isalpha() or word[0] == "_" else UNKNOWN_CHAR

    def scan(self, text: str) -> Iterator[Lexeme]:
        """Every token with its offset (for tagging and error positions; the parser has a faster path)."""
        for m in _WORD.finditer(text):
            word = m.group()
            yield Lexeme(self.kind_of(word), word, m.start())

    def _lark_tokens(self, text: str) -> Iterator[Token]:
        """Tokens for the LALR parser. ``start_pos`` is the token's *index* (offsets are only
        computed when something goes wrong); the guards raise SyntaxProblem with that index."""
        kinds, kind_of = self._kinds, self.kind_of
        depth = 0
        for index, word in enumerate(_WORD.findall(text)):
            kind = kinds.get(word) or kind_of(word)
            if kind in OPENERS:
                depth += 1
                if depth > MAX_NESTING:
                    raise SyntaxProblem(f"brackets nested more than {MAX_NESTING} deep", index, word)
            elif kind in CLOSERS:
                depth -= 1
            elif kind == "INT" and len(word) > MAX_DIGITS:
                raise SyntaxProblem(f"number {word[:12]}... is longer than {MAX_DIGITS} digits", index, word)
            yield Token(kind, word, index)

    def _offset(self, text: str, index: int) -> int:
        for k, m in enumerate(_WORD.finditer(text)):
            if k == index:
                return m.start()
        return len(text)

    def parse(self, text: str) -> Program:
        """The program's tree, or SyntaxProblem with the offending offset and expected terminals."""
        try:
            return cast(Program, _lalr(self.style).parse(_Source(text, self)))  # lark types parse() as a tree; AstBuilder makes a Program
        except SyntaxProblem as exc:
            raise SyntaxProblem(exc.message, self._offset(text, exc.offset), exc.found) from None
        except UnexpectedToken as exc:
            token = exc.token
            expected = tuple(sorted(exc.expected, key=_terminal_order(self.style)))
            wanted = ", ".join(self.describe_terminal(n) for n in expected[:10])
            if token.type == "$END":
                raise SyntaxProblem(f"the program ends too early; expected {wanted}", len(text), "", expected) from None
            if token.type == UNKNOWN_WORD:
                what = f"unknown word {token.value!r}"
            elif token.type == UNKNOWN_CHAR:
                what = f"unexpected character {token.value!r}"
            else:
                what = f"unexpected {token.type} {token.value!r}"
            raise SyntaxProblem(f"{what}; expected {wanted}", self._offset(text, token.start_pos or 0),
                                str(token.value), expected) from None
        except LarkError as exc:  # anything else lark may raise: still a position, never a crash
            raise SyntaxProblem(f"not a program: {type(exc).__name__}", 0) from None


@lru_cache(maxsize=1024)
def grammar_for(style: str, lexicon: Lexicon) -> Grammar:
    return Grammar(style, lexicon)


def _terminal_order(style: str) -> Callable[[str], tuple[int, str]]:
    order = {name: i for i, name in enumerate(terminal_names(style))}
    return lambda name: (order.get(name, len(order)), name)


# --------------------------------------------------------------- lark glue


@dataclass(frozen=True)
class _Source:
    """What ``Lark.parse`` receives: the text and the grammar whose scanner lexes it."""

    text: str
    grammar: Grammar


class _ScannerLexer(Lexer):
    """lark's custom-lexer hook: tokens come from the grammar's own scanner."""

    def __init__(self, lexer_conf: object):
        pass

    def lex(self, data: _Source) -> Iterator[Token]:  # type: ignore[override]  # lark hands a custom lexer (interface 0) the parsed object alone
        return data.grammar._lark_tokens(data.text)


@lru_cache(maxsize=None)
def _lalr(style: str) -> Lark:
    """One LALR parser per style: the tables do not depend on how terminals are spelled."""
    declared = " ".join(terminal_names(style))
    return Lark(RULES[style] + f"\n%declare {declared}\n", parser="lalr", lexer=_ScannerLexer,
                transformer=AstBuilder())
