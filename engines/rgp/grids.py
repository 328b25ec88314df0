"""The string-to-grid task: inputs, grids and the rule that maps one to the other.

k = 4 components with u = 2 values each: component i with value b is the letter
``chr(65 + 2i + b)``, so an input reads like ``"A D F G"``. The output is a 4x4 grid of
``*``/``.``, rows joined by newlines. A rule gives each component a set of 4 cells
(``control``) and, per value, the bits painted there (``value_bits``, 1 = ``*``); under
index shuffle (RI) component i paints ``control[input_index[i]]`` instead of its own set.
This is the authors' generator's model; their ``.meta.jsonl`` files store exactly it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

K = 4  # components
U = 2  # values per component
SIDE = 4  # the grid is SIDE x SIDE
CELLS = tuple((r, c) for r in range(SIDE) for c in range(SIDE))
LETTERS = "".join(chr(65 + i) for i in range(K * U))  # A..H

Cell = tuple[int, int]


def letter(component: int, value: int) -> str:
    return chr(65 + component * U + value)


def component_of(ch: str) -> int:
    """The component a letter A..H belongs to (the estimator's ``(ord(c) - 65) // u``)."""
    return (ord(ch) - 65) // U


def input_text(values: Sequence[int]) -> str:
    return " ".join(letter(i, v) for i, v in enumerate(values))


def parse_input(text: str) -> tuple[int, ...]:
    """``"A D F G"`` -> (0, 1, 1, 0); ValueError for anything else."""
    letters = text.split()
    if len(letters) != K or any(len(t) != 1 for t in letters):
        raise ValueError(f"not an input of {K} letters: {text!r}")
    values = tuple(ord(t) - 65 - U * i for i, t in enumerate(letters))
    if any(not 0 <= v < U for v in values):
        raise ValueError(f"letter out of place in {text!r}")
    return values


def grid_rows(text: str) -> list[str]:
    return text.strip().split("\n") if text.strip() else []


@dataclass(frozen=True)
class Rule:
    """A rule of the task (see the module docstring)."""

    control: tuple[tuple[Cell, ...], ...]
    value_bits: tuple[tuple[tuple[int, ...], ...], ...]
    input_index: tuple[int, ...] = tuple(range(K))

    def cells(self, component: int) -> tuple[Cell, ...]:
        """The cells component ``component`` paints."""
        return self.control[self.input_index[component]]

    def pattern(self, component: int, value: int) -> str:
        """What component ``component`` paints for ``value``, as ``*``/``.`` in ``cells`` order."""
        return "".join("*" if bit else "." for bit in self.value_bits[component][value])

    def render(self, values: Sequence[int]) -> str:
        grid = [["."] * SIDE for _ in range(SIDE)]
        for component, value in enumerate(values):
            for (r, c), ch in zip(self.cells(component), self.pattern(component, value)):
                grid[r][c] = ch
        return "\n".join("".join(row) for row in grid)

    def apply(self, text: str) -> str:
        return self.render(parse_input(text))

    def to_json(self) -> dict[str, Any]:
        return {"control": [[list(cell) for cell in cells] for cells in self.control],
                "value_bits": [[list(bits) for bits in values] for values in self.value_bits],
                "input_index": list(self.input_index)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Rule":
        """From a ``.meta.jsonl`` line (or ``to_json``); ValueError when it is not a rule."""
        try:
            control = tuple(tuple((int(r), int(c)) for r, c in cells) for cells in data["control"])
            bits = tuple(tuple(tuple(int(b) for b in pattern) for pattern in values) for values in data["value_bits"])
            index = tuple(int(i) for i in data.get("input_index", range(K)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a rule ({exc})") from None
        if (len(control) != K or len(bits) != K or sorted(index) != list(range(K))
                or any(len(cells) != SIDE for cells in control)
                or any(len(values) != U or any(len(p) != SIDE for p in values) for values in bits)
                or any(not (0 <= r < SIDE and 0 <= c < SIDE) for cells in control for r, c in cells)):
            raise ValueError("not a rule of k=4 components with u=2 values on a 4x4 grid")
        return cls(control, bits, index)

    def describe(self) -> str:
        """One line per component: its letters, its cells, its two patterns."""
        lines = []
        for i in range(K):
            cells = " ".join(f"({r},{c})" for r, c in self.cells(i))
            lines.append(f"{letter(i, 0)}/{letter(i, 1)}: cells {cells}: "
                         f"{letter(i, 0)} -> {self.pattern(i, 0)}, {letter(i, 1)} -> {self.pattern(i, 1)}")
        return "\n".join(lines)


def infer_rule(samples: Sequence[tuple[str, str]]) -> Rule | None:
    """A per-component rule that reproduces the samples, or None if there is none.

    Used when an official file comes without its ``.meta.jsonl``: each cell must depend on
    exactly one component, and each component must own 4 cells.
    """
    try:
        pairs = [(parse_input(text), grid_rows(grid)) for text, grid in samples]
    except ValueError:
        return None
    if not pairs or any(len(rows) != SIDE or any(len(r) != SIDE for r in rows) for _, rows in pairs):
        return None
    owners: dict[int, list[Cell]] = {i: [] for i in range(K)}
    for r, c in CELLS:
        found = None
        for i in range(K):
            seen: dict[int, str] = {}
            if all(seen.setdefault(values[i], rows[r][c]) == rows[r][c] for values, rows in pairs) and len(seen) == U:
                found = i
                break
        if found is None:
            return None
        owners[found].append((r, c))
    if any(len(cells) != SIDE for cells in owners.values()):
        return None
    bits = []
    for i in range(K):
        per_value = []
        for v in range(U):
            rows = next(rows for vals, rows in pairs if vals[i] == v)
            per_value.append(tuple(int(rows[r][c] == "*") for r, c in owners[i]))
        bits.append(tuple(per_value))
    return Rule(tuple(tuple(owners[i]) for i in range(K)), tuple(bits))
