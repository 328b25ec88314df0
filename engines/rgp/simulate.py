"""The offline rgp model: programs of each profile, written from the instance's true rule.

- T1 (the gold): a per-component rule, as if/else branches per component (L(P+) = 40,
  C = 100), as rows appended in order on a plain Horizontal instance, or as a nested
  dict of patterns per component (L(P+) = 48, C = 97.14);
- T2: the enumeration table of the 16 samples (L(P+) = 320, C = 0);
- T3: the per-component rule with one cell of one pattern wrong (8 samples wrong);
- runtime_error: an enumeration table missing three samples (KeyError on those);
- timeout: the per-component rule that waits forever on one input (it sleeps rather
  than spins, so a simulated run costs wall time, not CPU);
- no_program: prose only; unparseable: a missing colon; format_violation: the rule in
  the paper's fallback ``Begin Code`` format.

With probability ``error_rate`` (or always, with ``error=CODE``) the reply is one of the
non-gold kinds. The oracle always writes the if/else rule. Everything is a pure
function of the item, the options and ``rng_seed``; nothing here runs a program.
"""

from __future__ import annotations

import random
from typing import Sequence

from engines.core import Item, SettingsError, SimOptions
from engines.rgp.grids import K, SIDE, Rule, letter
from engines.wrapping import wrap

SIM_CODES = ("T2", "T3", "runtime_error", "timeout", "no_program", "unparseable", "format_violation")
_WEIGHTS = (3, 3, 2, 1, 1, 1, 1)  # timeouts cost the full wall limit, so they are rarer

_PRINT_CELLS = "print('\\n'.join(''.join(grid[r, c] for c in range(4)) for r in range(4)))\n"


def _rule(item: Item) -> Rule:
    return Rule.from_json(item.gold["rule"])


def _cells(cells: Sequence[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"({r}, {c})" for r, c in cells) + "]"


def if_else_program(rule: Rule, wrong_cell: tuple[int, int] | None = None, stall_on: str = "") -> str:
    """Per component: ``if s[i] == <letter>:`` paint its cells, ``else:`` paint the complement.

    ``wrong_cell`` = (component, cell index) flips one character of that component's
    first pattern; ``stall_on`` makes the program wait forever on that input.
    """
    lines = ["grid = {}", "s = input().split()"]
    if stall_on:
        lines[:0] = ["import time"]
        lines += [f"while s == {stall_on.split()!r}:", "    time.sleep(0.2)"]
    for i in range(K):
        patterns = [rule.pattern(i, 0), rule.pattern(i, 1)]
        if wrong_cell and wrong_cell[0] == i:
            j = wrong_cell[1]
            patterns[0] = patterns[0][:j] + ("." if patterns[0][j] == "*" else "*") + patterns[0][j + 1:]
        cells = _cells(rule.cells(i))
        lines += [f"if s[{i}] == '{letter(i, 0)}':", f"    grid.update(zip({cells}, '{patterns[0]}'))",
                  "else:", f"    grid.update(zip({cells}, '{patterns[1]}'))"]
    return "\n".join(lines) + "\n" + _PRINT_CELLS


def rows_program(rule: Rule) -> str:
    """For a plain Horizontal instance: one row per component, printed in order."""
    lines = ["s = input().split()", "rows = []"]
    for i in range(K):
        lines += [f"if s[{i}] == '{letter(i, 0)}':", f"    rows.append('{rule.pattern(i, 0)}')",
                  "else:", f"    rows.append('{rule.pattern(i, 1)}')"]
    return "\n".join(lines) + "\nprint('\\n'.join(rows))\n"


def nested_dict_program(rule: Rule) -> str:
    patterns = ", ".join(f"{i}: {{'{letter(i, 0)}': '{rule.pattern(i, 0)}', '{letter(i, 1)}': '{rule.pattern(i, 1)}'}}"
                         for i in range(K))
    cells = ", ".join(_cells(rule.cells(i)) for i in range(K))
    return (f"PATTERNS = {{{patterns}}}\n"
            f"CELLS = [{cells}]\n"
            "grid = {}\n"
            "for i, value in enumerate(input().split()):\n"
            "    for (r, c), ch in zip(CELLS[i], PATTERNS[i][value]):\n"
            "        grid[r, c] = ch\n" + _PRINT_CELLS)


def enumeration_program(samples: Sequence[tuple[str, str]]) -> str:
    entries = ",\n".join(f"    {text!r}: {grid!r}" for text, grid in samples)
    return f"TABLE = {{\n{entries},\n}}\nprint(TABLE[input().strip()])\n"


_OPENINGS = (
    "Each letter position controls a fixed set of cells; here is a program reproducing the samples.",
    "Here is a Python program that conforms to the samples:",
    "Looking at the samples, every component paints its own cells independently.",
)
_REPLY = "{before}\n\n```python\n{text}```\n\nThe program reads the input line and prints the 4x4 grid."


def _wrap(program: str, rng: random.Random) -> str:
    return wrap(program, rng, _REPLY, _OPENINGS)


def _correct(item: Item, rule: Rule, rng: random.Random) -> str:
    plain_rows = item.meta.get("setting") == "h" and rule.input_index == tuple(range(K)) and all(
        rule.cells(i) == tuple((i, j) for j in range(SIDE)) for i in range(K))
    styles = [if_else_program, nested_dict_program] + ([rows_program] if plain_rows else [])
    return rng.choice(styles)(rule)


def write_program(item: Item, kind: str, rng: random.Random) -> str:
    """The reply for ``kind`` (T1 or one of SIM_CODES)."""
    rule = _rule(item)
    samples = [(s["input"], s["output"]) for s in item.inputs["samples"]]
    if kind == "T1":
        return _wrap(_correct(item, rule, rng), rng)
    if kind == "T2":
        return _wrap(enumeration_program(samples), rng)
    if kind == "T3":
        return _wrap(if_else_program(rule, wrong_cell=(rng.randrange(K), rng.randrange(SIDE))), rng)
    if kind == "runtime_error":
        missing = set(rng.sample(range(len(samples)), 3))
        kept = [s for i, s in enumerate(samples) if i not in missing]
        return _wrap(enumeration_program(kept), rng)
    if kind == "timeout":
        return _wrap(if_else_program(rule, stall_on=rng.choice(samples)[0]), rng)
    if kind == "no_program":
        return ("The samples do not seem to follow a simple pattern: the same letter does not always produce the "
                "same rows, so I cannot write a program that conforms to them.")
    if kind == "unparseable":
        program = if_else_program(rule).replace(":\n", "\n", 1)
        return _wrap(program, rng)
    if kind == "format_violation":
        return f"Begin Code\n{'-' * 12}\n{if_else_program(rule)}{'-' * 12}\n"
    raise SettingsError(f"the rgp simulator cannot produce {kind!r}; it can produce T1, {', '.join(SIM_CODES)}")


def simulate(item: Item, options: SimOptions, rng_seed: int) -> str:
    rng = random.Random(rng_seed)
    if options.error:
        kind = options.error
    elif rng.random() < options.error_rate:
        kind = rng.choices(SIM_CODES, weights=_WEIGHTS)[0]
    else:
        kind = "T1"
    return write_program(item, kind, rng)


def oracle(item: Item) -> str:
    """The gold reply: a correct per-component program for the instance's true rule."""
    return f"```python\n{if_else_program(_rule(item))}```\n"

