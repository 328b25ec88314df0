"""The offline RoboGrid model: the gold answer, or the gold with one failure of appendix A.4.

Code tasks start from the gold tree. With probability ``error_rate`` (or always, for
``error=CODE``) one failure is injected: a syntax break on the linearised code
(breaks.py: unparseable) or a drift of the tree (drifts.py: grammatical, re-linearised);
``premature_scope_termination`` is a dropped/doubled/swapped closer two times in three
and a block closed early otherwise. When the item offers nothing for the asked-for
failure (no arithmetic to flatten...), the next applicable one in taxonomy order is
used. ``unparseable`` is a refusal in prose; ``format_violation`` the gold wrapped in
prose (or, under CoT, reasoning without the ``FINAL PROGRAM:`` marker).

Correct replies vary too, to exercise the scorer: under CoT they come after some
reasoning and a marker, in a fence; one in ten is re-flowed onto a single line; without
CoT one in ten is wrapped in prose (a format violation that is still correct).

The judge task answers VALID or INVALID; an error flips it, except that a syntax code
only makes the model miss a perturbation of that kind (so the tag it earns is that
code). Everything is a pure function of the item, the options and ``rng_seed``.
"""

from __future__ import annotations

import random

from engines.core import Item, SettingsError, SimOptions
from engines.robogrid.linearise import linearise, render
from engines.robogrid.breaks import SYNTAX_BREAKS
from engines.robogrid.drifts import DRIFTS
from engines.robogrid.score import item_cot, item_grammar, item_gold
from engines.robogrid.tags import CODES

ERROR_CODES = tuple(c for c in CODES if c not in ("unparseable", "format_violation"))
WRAP_RATE = 0.1
ONE_LINE_RATE = 0.1
SCOPE_AS_SYNTAX = 2 / 3


def oracle(item: Item) -> str:
    if item.meta.get("task") == "judge":
        return str(item.gold.get("answer", ""))
    return str(item.gold.get("program", ""))


def simulate(item: Item, options: SimOptions, rng_seed: int) -> str:
    code = options.error
    if code and code not in CODES:
        raise SettingsError(f"sim: unknown error {code!r}; known: {', '.join(CODES)}")
    rng = random.Random(f"robogrid-sim:{options.seed}:{rng_seed}:{item.id}")
    if not code and rng.random() < options.error_rate:
        code = rng.choice(ERROR_CODES + ("unparseable",))
    cot = item_cot(item)
    if item.meta.get("task") == "judge":
        return _judge_reply(item, code, cot, rng)
    if code == "unparseable":
        return "I am sorry, but I could not work out a program for this request."
    text = _program_text(item, code, rng)
    if code == "format_violation":
        return _unmarked(text, cot)
    if not code and not cot and rng.random() < WRAP_RATE:
        return f"```\n{text}\n```"  # a fenced answer: a form the strict reading accepts
    return _marked(text) if cot else text


def _program_text(item: Item, code: str, rng: random.Random) -> str:
    grammar = item_grammar(item)
    gold = item_gold(item)
    if code in ("", "format_violation"):
        text = str(item.gold["program"])
        return " ".join(text.split()) if rng.random() < ONE_LINE_RATE else text
    order = list(ERROR_CODES)
    start = order.index(code)
    for candidate in order[start:] + order[:start]:
        syntax = candidate in SYNTAX_BREAKS and (candidate not in DRIFTS or rng.random() < SCOPE_AS_SYNTAX)
        if syntax:
            broken = SYNTAX_BREAKS[candidate](linearise(gold, grammar), grammar, rng)
            if broken is not None:
                return broken.text
        else:
            drifted = DRIFTS[candidate](gold, rng)
            if drifted is not None and drifted.program != gold:
                return render(drifted.program, grammar)
    return str(item.gold["program"])  # pragma: no cover - a depth >= 2 program always breaks somehow


def _marked(program: str) -> str:
    return ("Let me map each part of the request onto the grammar's rules, keeping every block's nesting.\n"
            "FINAL PROGRAM:\n```\n" + program + "\n```")


def _unmarked(program: str, cot: bool) -> str:
    if cot:
        return "I will follow the grammar closely.\n" + program + "\nThis program follows the grammar."
    return "Here is the program you asked for:\n" + program + "\nI hope this helps."


def _judge_reply(item: Item, code: str, cot: bool, rng: random.Random) -> str:
    gold = str(item.gold.get("answer", "VALID"))
    if code == "unparseable":
        return "I cannot decide whether this code follows the grammar."
    if code in ("", "format_violation"):
        answer = gold
    elif code in SYNTAX_BREAKS and gold == "INVALID":  # misses only a perturbation of that kind
        answer = "VALID" if code == item.gold.get("perturbation") else gold
    else:
        answer = "INVALID" if gold == "VALID" else "VALID"
    if cot:
        return f"I check each statement against the production rules.\nANSWER: {answer}"
    if code == "format_violation":
        return f"After checking the code against the grammar, my answer is {answer}."
    if not code and rng.random() < WRAP_RATE:
        return f"**{answer}**"  # markdown emphasis: a form the strict reading accepts
    return answer
