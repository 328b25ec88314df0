"""RoboGrid knobs (`-s key=value`); defaults are the paper's standard condition.

Section 5.1 / Table 3: Block style, Alien lexicon, depth 10, E = 2, p = 0.5, 0-shot
CoT, 200 items per task. The five generation knobs and ``task`` take one value or a
comma-separated list (``-s depth=2,5,10,15,20``): a run then holds ``count`` items for
every combination, which is what Table 3 and Figure 2 compare, in one run.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from engines.core import SettingsError, extract_field
TASKS = ("judge", "goal", "instruct")
STYLES = ("block", "c", "sexpr")  # the grammars of engines.robogrid.grammars (kept here: listing engines imports no lark)
LEXICONS = ("natural", "alien")
SHOTS = (0, 1, 2, 5)
MAX_ITEMS = 100_000


@dataclass(frozen=True)
class Condition:
    """One cell of the configuration space (Table 1) plus the task."""

    task: str
    depth: int
    else_prob: float
    expr_depth: int
    style: str
    lexicon: str

    @property
    def key(self) -> str:
        return f"{self.task}-{self.style}-{self.lexicon}-d{self.depth}-e{self.expr_depth}-p{self.else_prob:g}"


def _values(name: str, raw: str) -> list[str]:
    values = [v.strip() for v in str(raw).split(",") if v.strip()]
    if not values:
        raise SettingsError(f"setting {name}: expected a value or a comma-separated list, got {raw!r}")
    return list(dict.fromkeys(values))


Number = TypeVar("Number", int, float)


def _numbers(name: str, raw: str, lo: float, hi: float, kind: Callable[[str], Number]) -> list[Number]:
    """A comma-separated list of ``kind`` (int or float) values, each within lo..hi."""
    out: list[Number] = []
    for v in _values(name, raw):
        try:
            number = kind(v)
        except ValueError:
            noun = "integers" if kind is int else "numbers"
            raise SettingsError(f"setting {name}: expected {noun} {lo:g}..{hi:g}, got {v!r}") from None
        if not lo <= number <= hi:
            raise SettingsError(f"setting {name}: {number:g} is outside {lo:g}..{hi:g}")
        out.append(number)
    return out


def _choices(name: str, raw: str, allowed: tuple[str, ...]) -> list[str]:
    values = _values(name, raw)
    for v in values:
        if v not in allowed:
            raise SettingsError(f"setting {name}: {v!r} is not one of {', '.join(allowed)}")
    return values


@dataclass(frozen=True)
class RobogridSettings:
    task: str = field(default="instruct", metadata={
        "help": "judge (grammaticality), goal (goal-conditioned generation), instruct (instruction-to-code); "
                "a comma-separated list runs several"})
    count: int = field(default=200, metadata={"min": 1, "max": MAX_ITEMS,
                       "help": "items per task and configuration (paper: 200)"})
    depth: str = field(default="10", metadata={"help": "max nesting depth D, 2..20 (list allowed: 2,5,10,15,20)"})
    block_size: int = field(default=3, metadata={"min": 1, "max": 8, "help": "max statements per block B_max"})
    else_prob: str = field(default="0.5", metadata={"help": "else-branch probability p, 0..1 (list allowed)"})
    expr_depth: str = field(default="2", metadata={"help": "expression depth E, 1..3 (list allowed)"})
    style: str = field(default="block", metadata={"help": "block, c or sexpr (list allowed)"})
    lexicon: str = field(default="alien", metadata={"help": "natural or alien keywords (list allowed)"})
    shots: int = field(default=0, metadata={"min": 0, "max": 5, "help": "worked examples in the prompt: 0, 1, 2 or 5"})
    cot: bool = field(default=True, metadata={"help": "ask for reasoning before the final program (paper: CoT)"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "help": "sampling temperature"})
    max_tokens: int = field(default=8192, metadata={"min": 1, "max": 131072, "help": "reply length cap"})
    extract: str = extract_field()  # strict: the fenced / marked / whole program parses (engines.robogrid.parse)

    def __post_init__(self) -> None:
        if self.shots not in SHOTS:
            raise SettingsError(f"setting shots: {self.shots} is not one of {', '.join(map(str, SHOTS))}")
        total = self.count * len(self.conditions())
        if total > MAX_ITEMS:
            raise SettingsError(f"settings ask for {total} items (count x combinations); at most {MAX_ITEMS}")

    def conditions(self) -> list[Condition]:
        """Every combination of the list-valued knobs, in a stable order."""
        grid = itertools.product(
            _choices("task", self.task, TASKS),
            _numbers("depth", self.depth, 2, 20, int),
            _numbers("else_prob", self.else_prob, 0.0, 1.0, float),
            _numbers("expr_depth", self.expr_depth, 1, 3, int),
            _choices("style", self.style, STYLES),
            _choices("lexicon", self.lexicon, LEXICONS),
        )
        return [Condition(*values) for values in grid]
