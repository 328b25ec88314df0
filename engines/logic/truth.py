"""Propositional truth tables as bit-parallel integers (the paper's truth-table metric).

Over N variables a formula's truth table is one integer of 2**N bits: bit j is the
formula's value under assignment j, where variable i is true iff bit i of j is set.
Each variable's column is a fixed bit pattern, and ¬ ∧ ∨ → ↔ become integer operations
on whole columns, so a 3-variable table costs a handful of operations however many
assignments there are, and 20 variables (a million rows) are still milliseconds.

Atoms with arguments (a model may write them in a propositional item) are columns of
their own, keyed by their text. Quantified formulas have no propositional table.
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.logic.formula import (
    AND,
    IFF,
    IMPLIES,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
)

MAX_TABLE_VARIABLES = 20


def atom_key(node: Atom | Equal) -> str:
    if isinstance(node, Equal):
        return f"{node.left}={node.right}"
    return f"{node.name}({','.join(node.args)})" if node.args else node.name


def column(i: int, n: int) -> int:
    """Bit j set iff bit i of j is set, for j < 2**n: blocks of 2**i zeros then ones, repeated."""
    run = 1 << i
    pattern = ((1 << run) - 1) << run
    width = run << 1
    total = 1 << n
    while width < total:
        pattern |= pattern << width
        width <<= 1
    return pattern


def table(f: Formula, columns: dict[str, int], full: int) -> int:
    """The truth table of quantifier-free ``f`` given each atom's column (``full`` = all ones)."""
    if isinstance(f, (Atom, Equal)):
        return columns[atom_key(f)]
    if isinstance(f, Not):
        return full ^ table(f.body, columns, full)
    if isinstance(f, Junction):
        parts = [table(p, columns, full) for p in f.parts]
        out = parts[0]
        for p in parts[1:]:
            out = out & p if f.op == AND else out | p
        return out
    if isinstance(f, Arrow):
        left, right = table(f.left, columns, full), table(f.right, columns, full)
        if f.op == IMPLIES:
            return (full ^ left) | right
        assert f.op == IFF
        return full ^ (left ^ right)
    assert isinstance(f, Quant)
    raise ValueError("a quantified formula has no propositional truth table")


def _collect(f: Formula, keys: set[str]) -> bool:
    """Add the atom keys of ``f``; False if ``f`` has a quantifier (no propositional table)."""
    if isinstance(f, (Atom, Equal)):
        keys.add(atom_key(f))
        return True
    if isinstance(f, Junction):
        return all(_collect(p, keys) for p in f.parts)
    if isinstance(f, Not):
        return _collect(f.body, keys)
    if isinstance(f, Arrow):
        return _collect(f.left, keys) and _collect(f.right, keys)
    return False


@dataclass(frozen=True)
class Agreement:
    """How many of the assignments over ``variables`` give both formulas the same value."""

    agree: int
    total: int
    variables: tuple[str, ...]

    @property
    def fraction(self) -> float:
        return self.agree / self.total


@dataclass(frozen=True)
class Columns:
    """The variables of a table and each one's column (``full``: all 2**N bits set)."""

    names: tuple[str, ...]
    columns: dict[str, int]
    full: int


def columns_for(*formulas: Formula) -> Columns | None:
    """Columns over the union of the formulas' atoms; None with a quantifier or too many atoms."""
    keys: set[str] = set()
    if not all(_collect(f, keys) for f in formulas) or len(keys) > MAX_TABLE_VARIABLES:
        return None
    names = tuple(sorted(keys))
    n = len(names)
    return Columns(names, {name: column(i, n) for i, name in enumerate(names)}, (1 << (1 << n)) - 1)


def tables(f: Formula, g: Formula) -> tuple[int, int, Columns] | None:
    """The truth tables of ``f`` and ``g`` over the union of their variables (None if there are none)."""
    cols = columns_for(f, g)
    if cols is None:
        return None
    return table(f, cols.columns, cols.full), table(g, cols.columns, cols.full), cols


def agreement(f: Formula, g: Formula) -> Agreement | None:
    """Truth-table agreement of two quantifier-free formulas (None beyond MAX_TABLE_VARIABLES)."""
    if g == f:  # the same formula agrees everywhere: no table needed
        cols = columns_for(f)
        return None if cols is None else Agreement(1 << len(cols.names), 1 << len(cols.names), cols.names)
    found = tables(f, g)
    if found is None:
        return None
    tf, tg, cols = found
    return Agreement((cols.full ^ (tf ^ tg)).bit_count(), 1 << len(cols.names), cols.names)


class TableOf:
    """One formula's truth table, kept for comparing many variants of it (the simulator's check)."""

    def __init__(self, f: Formula):
        self.formula = f
        self.cols = columns_for(f)
        self.table = None if self.cols is None else table(f, self.cols.columns, self.cols.full)

    def same(self, g: Formula) -> bool | None:
        """Does ``g`` have the same table (None when either has no small table)?"""
        if self.cols is not None:
            try:
                return table(g, self.cols.columns, self.cols.full) == self.table
            except (KeyError, ValueError):  # an atom of its own, or a quantifier
                pass
        found = tables(self.formula, g)
        return None if found is None else found[0] == found[1]
