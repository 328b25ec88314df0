"""Replies nobody planned for, per engine: nested thousands deep, thousands of parts long, or 100 MB.

Built from each engine's own syntax (the oracle's reply as the seed where the engine's
syntax is its item's own, as RoboGrid's invented lexicon is), so that a reply is deep or long
in the way the engine's reader would otherwise follow it, not only in brackets.
"""

from __future__ import annotations

from typing import Callable

from engines import get_engine
from engines.core import Item

HUGE = 100_000_000  # characters: the 100 MB reply
DEEP = 3_000


def _oracle(item: Item, outputs: list[str] = ()) -> str:
    engine = get_engine(item.engine)
    step = engine.next_step(item, engine.settings_type(), list(outputs))
    return engine.oracle(item, step, list(outputs))


def compost(item: Item, huge: int) -> list[list[str]]:
    return [[f"SELECT ?x WHERE {'{' * DEEP} ?x <http://e/p> <http://e/o> . {'}' * DEEP}"],
            ["SELECT ?x WHERE { " + " . ".join(f"?x <http://e/p{i}> <http://e/o{i}>" for i in range(20_000)) + " }"],
            ["SELECT ?x WHERE { ?x <http://e/p> ?y . FILTER(" + "(" * 5_000 + "?y" + ")" * 5_000 + ") }"],
            ["SELECT ?x WHERE " + "{" * 200 + " ?x <http://e/p> <http://e/o> . " + "}" * 200],
            ["SELECT ?x WHERE { ?x ?p ?y } " * (huge // 29)]]


def dedc(item: Item, huge: int) -> list[list[str]]:
    return [["view_1 := " + "f0 (" * DEEP + "all" + ")" * DEEP + "; result := view_1;"],
            ["; ".join(f"view_{i} := f0 (view_{i - 1}, attr_1, {i})" for i in range(1, 20_000)) + "; result := view_1;"],
            ["view_1 := f0 (all, attr_1, 2); " * (huge // 30)]]


def logic(item: Item, huge: int) -> list[list[str]]:
    description = _oracle(item)
    return [[description, "¬" * 5_000 + "x1"],
            [description, "(" * DEEP + "x1" + ")" * DEEP],
            [description, " ∧ ".join(f"(x{i % 3 + 1} ∨ ¬x{(i + 1) % 3 + 1})" for i in range(20_000))],
            ["1. at least one of x1 is true. " * (huge // 32)],
            [description, "x1 ∧ " * (huge // 5) + "x1"]]


def robogrid(item: Item, huge: int) -> list[list[str]]:
    gold = _oracle(item)
    head, _, rest = gold.partition("[")  # the item's own loop header, in its invented words
    opener = head + "["
    return [[opener * DEEP + rest + "]" * DEEP],
            ["\n".join([gold] * (20_000 // max(1, gold.count("\n") + 1) + 1))],
            [gold * (huge // len(gold) + 1)]]


def rgp(item: Item, huge: int) -> list[list[str]]:
    return [["```python\ndef f(x):\n    return " + "[" * DEEP + "]" * DEEP + "\n```"],
            ["```python\n" + "".join(f"v{i} = {i}\n" for i in range(20_000)) + "def f(x):\n    return x\n```"],
            ["```python\ndef f(x):\n    return " + "-" * 5_000 + "1\n```"],
            ["```python\n" + "# a comment\n" * (huge // 12) + "```"]]


REPLIES: dict[str, Callable[[Item, int], list[list[str]]]] = {
    "compost": compost, "dedc": dedc, "logic": logic, "robogrid": robogrid, "rgp": rgp}


def hostile(item_for: Callable[[int], Item], engine: str, huge: int = HUGE) -> list[tuple[Item, list[str]]]:
    """(item, outputs) pairs, one hostile reply per item (item 0, 1, ...)."""
    first = item_for(0)
    return [(item_for(i), outputs) for i, outputs in enumerate(REPLIES[engine](first, huge))]
