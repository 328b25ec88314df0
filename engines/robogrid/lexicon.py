"""Lexicons: how a grammar spells its keyword terminals (paper section 3.2, appendix A.1.2).

A lexicon maps every keyword terminal (``LOOP``, ``HOLDING``, ``PLUS``...) to a string.
*Natural* lexicons are the keyword sets the appendix shows (``do``/``stop``,
``exec``/``end``, ``act``/``fin``, ``run``/``x``...), each complete and fixed. *Alien*
lexicons spell every keyword terminal, the arithmetic operators and the direction words
included (the appendix's Alien example writes ``(0 v_vyht (1 v_lbke 0))``), as an
opaque token ``v_`` + four random letters, drawn from the item's own random stream.
Punctuation (brackets, parentheses, ``;`` and ``,``) belongs to the style, not to the
lexicon; only the Block style's block brackets vary with the lexicon (``[ ]`` or ``{ }``,
both appear in the appendix). Item names (``key_2``) are never renamed.

Keywords are whole words for the parser (parse.Scanner), so no lexicon needs to avoid
prefixes; they are still kept prefix-free so that the stock lark grammar
(grammars.Grammar.lark_source), whose string terminals match inside words, agrees.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any, Mapping

from engines.core import DataError

KEYWORDS = ("DO", "END", "LOOP", "TIMES", "IF", "THEN", "ELSE", "MOVE", "TURN", "GRAB", "FORWARD", "BACKWARD",
            "LEFT", "RIGHT", "PLUS", "STAR", "HOLDING", "NOT", "AND", "OR")
BRACKETS = (("[", "]"), ("{", "}"))
_COMMON = {"FORWARD": "forward", "BACKWARD": "backward", "LEFT": "left", "RIGHT": "right", "PLUS": "+", "STAR": "*"}

# Named after their action wrapper; spellings from sections 2.2, A.1.2, A.2 and A.3.
NATURAL_SETS: dict[str, dict[str, str]] = {
    "exec": {"DO": "exec", "END": "end", "LOOP": "loop", "TIMES": "times", "IF": "when", "THEN": "after",
             "ELSE": "else", "MOVE": "go", "TURN": "turn", "GRAB": "grab", "HOLDING": "holding", "NOT": "not",
             "AND": "and", "OR": "or", **_COMMON},
    "do": {"DO": "do", "END": "stop", "LOOP": "repeat", "TIMES": "times", "IF": "when", "THEN": "next",
           "ELSE": "otherwise", "MOVE": "move", "TURN": "turn", "GRAB": "take", "HOLDING": "has", "NOT": "no",
           "AND": "plus_and", "OR": "alt", **_COMMON},
    "act": {"DO": "act", "END": "fin", "LOOP": "repeat", "TIMES": "iters", "IF": "when", "THEN": "next",
            "ELSE": "else", "MOVE": "go", "TURN": "turn", "GRAB": "take", "HOLDING": "has", "NOT": "not",
            "AND": "and", "OR": "or", **_COMMON},
    "run": {"DO": "do", "END": "end", "LOOP": "run", "TIMES": "x", "IF": "if", "THEN": "then", "ELSE": "else",
            "MOVE": "go", "TURN": "turn", "GRAB": "grab", "HOLDING": "holding", "NOT": "not", "AND": "and",
            "OR": "alt", **_COMMON},
}
NATURAL_BRACKETS = {"exec": BRACKETS[0], "do": BRACKETS[1], "act": BRACKETS[1], "run": BRACKETS[0]}

# Every word any natural lexicon uses for a terminal: a model writing one of these under
# an Alien grammar (or another set's word under a Natural one) falls back on its priors.
NATURAL_WORDS: dict[str, frozenset[str]] = {}
for _words in NATURAL_SETS.values():
    for _terminal, _word in _words.items():
        if _word.isidentifier():
            NATURAL_WORDS[_word] = NATURAL_WORDS.get(_word, frozenset()) | {_terminal}


@dataclass(frozen=True)
class Lexicon:
    kind: str  # natural | alien
    name: str  # the natural set's name, or "alien"
    words: tuple[tuple[str, str], ...]  # (terminal, spelling) for every keyword terminal
    brackets: tuple[str, str] = BRACKETS[0]  # the Block style's LBR / RBR

    def spelling(self, terminal: str) -> str:
        return dict(self.words)[terminal]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "words": dict(self.words), "brackets": list(self.brackets)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Lexicon":
        try:
            words = dict(data["words"])
            missing = [t for t in KEYWORDS if t not in words]
            if missing:
                raise ValueError(f"no spelling for {', '.join(missing)}")
            return cls(str(data["kind"]), str(data["name"]), tuple((t, str(words[t])) for t in KEYWORDS),
                       tuple(data.get("brackets") or BRACKETS[0]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not a RoboGrid lexicon: {exc}") from None


def natural_lexicon(name: str) -> Lexicon:
    words = NATURAL_SETS[name]
    return Lexicon("natural", name, tuple((t, words[t]) for t in KEYWORDS), NATURAL_BRACKETS[name])


def alien_token(rng: random.Random) -> str:
    return "v_" + "".join(rng.choice(string.ascii_lowercase) for _ in range(4))


def alien_lexicon(rng: random.Random) -> Lexicon:
    """Opaque, distinct tokens for every keyword terminal (MapLexicon of Algorithm 1)."""
    seen: set[str] = set()
    words = []
    for terminal in KEYWORDS:
        token = alien_token(rng)
        while token in seen:
            token = alien_token(rng)
        seen.add(token)
        words.append((terminal, token))
    return Lexicon("alien", "alien", tuple(words), rng.choice(BRACKETS))


def sample_lexicon(kind: str, rng: random.Random) -> Lexicon:
    if kind == "alien":
        return alien_lexicon(rng)
    return natural_lexicon(rng.choice(sorted(NATURAL_SETS)))
