"""Comparing an output tree with the gold tree: where they differ, and how.

SCR itself is tree equality (nodes.py). This module explains an inequality, for the
tagger and the inspector:

* ``diff`` aligns the two programs block by block (difflib on whole statements, so an
  echoed or dropped statement shows as one insertion or deletion rather than shifting
  every later pair) and recurses into statements of the same kind, reporting edits:
  ``field`` (a count, distance, condition, direction, item or else-branch differs),
  ``insert``, ``delete`` and ``replace`` (a statement of another kind). Edits come in
  pre-order, so the first one is "the first structural difference" the views mark.
* ``events`` writes a program as the sequence the code is written in (``loop c``,
  statements, ``end``...). A program that stops early is a prefix of the gold's events
  (``truncation``); a block closed too early or too late has the same statements in the
  same order with ``end`` elsewhere (``rescoping``).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from engines.robogrid.nodes import (
    Arith,
    Grab,
    If,
    Loop,
    Move,
    Num,
    Path,
    Program,
    Stmt,
    Turn,
    head,
    path_text,
    show_cond,
    show_expr,
)

Event = tuple[Any, ...]  # ("act", stmt), ("loop", count), ("if", cond), ELSE or END
END, ELSE = ("end",), ("else",)


@dataclass(frozen=True)
class Edit:
    kind: str  # field | insert | delete | replace
    field: str  # for kind "field": count, steps, cond, direction, item, else
    out_path: Path | None  # where in the output (None for a deletion)
    gold_path: Path | None  # where in the gold (None for an insertion)
    output: Any = None  # the output's statement / expression / condition / word
    gold: Any = None

    @property
    def where(self) -> str:
        """The place, named by the gold's path where the gold has one."""
        return path_text(self.gold_path if self.gold_path is not None else self.out_path or ())

    def describe(self) -> str:
        where = self.where
        if self.kind == "insert":
            return f"{where}: extra statement `{head(self.output)}` in the output"
        if self.kind == "delete":
            return f"{where}: the gold's `{head(self.gold)}` is missing"
        if self.kind == "replace":
            return f"{where}: `{head(self.output)}` where the gold has `{head(self.gold)}`"
        return f"{where}: {self.field} {show(self.output)} where the gold has {show(self.gold)}"


def show(node: Any) -> str:
    """Any edit side for people: an expression, a condition, a word, or a block."""
    if node is None:
        return "(none)"
    if isinstance(node, tuple):
        return f"a block of {len(node)} statement{'s' if len(node) != 1 else ''}"
    if isinstance(node, str):
        return node
    if isinstance(node, (Num, Arith)):
        return show_expr(node)
    return show_cond(node)


def diff(out: Program, gold: Program) -> list[Edit]:
    edits: list[Edit] = []
    _blocks(out.body, gold.body, (), (), "body", edits)
    return edits


def first_difference(out: Program, gold: Program) -> Edit | None:
    edits = diff(out, gold)
    return edits[0] if edits else None


def _blocks(outs: tuple[Stmt, ...], golds: tuple[Stmt, ...], opath: Path, gpath: Path, name: str,
            edits: list[Edit]) -> None:
    if outs == golds:
        return
    matcher = SequenceMatcher(None, golds, outs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(paired):
            _stmt(outs[j1 + k], golds[i1 + k], opath + ((name, j1 + k),), gpath + ((name, i1 + k),), edits)
        for i in range(i1 + paired, i2):
            edits.append(Edit("delete", "", None, gpath + ((name, i),), None, golds[i]))
        for j in range(j1 + paired, j2):
            edits.append(Edit("insert", "", opath + ((name, j),), None, outs[j], None))


def _field(edits: list[Edit], name: str, out_value: Any, gold_value: Any, opath: Path, gpath: Path) -> None:
    if out_value != gold_value:
        edits.append(Edit("field", name, opath, gpath, out_value, gold_value))


def _stmt(o: Stmt, g: Stmt, opath: Path, gpath: Path, edits: list[Edit]) -> None:
    if type(o) is not type(g):
        edits.append(Edit("replace", "", opath, gpath, o, g))
    elif isinstance(o, Move) and isinstance(g, Move):
        _field(edits, "direction", o.direction, g.direction, opath, gpath)
        _field(edits, "steps", o.steps, g.steps, opath, gpath)
    elif isinstance(o, Turn) and isinstance(g, Turn):
        _field(edits, "direction", o.direction, g.direction, opath, gpath)
    elif isinstance(o, Grab) and isinstance(g, Grab):
        _field(edits, "item", o.item, g.item, opath, gpath)
    elif isinstance(o, Loop) and isinstance(g, Loop):
        _field(edits, "count", o.count, g.count, opath, gpath)
        _blocks(o.body, g.body, opath, gpath, "body", edits)
    elif isinstance(o, If) and isinstance(g, If):
        _field(edits, "cond", o.cond, g.cond, opath, gpath)
        _blocks(o.then, g.then, opath, gpath, "then", edits)
        if (o.orelse is None) != (g.orelse is None):
            _field(edits, "else", o.orelse, g.orelse, opath, gpath)
        elif o.orelse is not None and g.orelse is not None:
            _blocks(o.orelse, g.orelse, opath, gpath, "else", edits)


# ---------------------------------------------------------------------- events


def events(program: Program) -> list[Event]:
    """The program in writing order: ("act", stmt), ("loop", count), ("if", cond), ELSE, END."""
    out: list[Event] = []

    def block(stmts: tuple[Stmt, ...]) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                out.append(("loop", s.count))
                block(s.body)
                out.append(END)
            elif isinstance(s, If):
                out.append(("if", s.cond))
                block(s.then)
                if s.orelse is not None:
                    out.append(ELSE)
                    block(s.orelse)
                out.append(END)
            else:
                out.append(("act", s))

    block(program.body)
    return out


def event_text(event: Event) -> str:
    if event[0] == "act":
        return head(event[1])
    if event[0] == "loop":
        return f"loop {show_expr(event[1])}"
    if event[0] == "if":
        return f"if {show_cond(event[1])}"
    return str(event[0])


def truncation(out: Program, gold: Program) -> tuple[int, int] | None:
    """(statements kept, statements in the gold) when the output is the gold cut short."""
    mine = events(out)
    while mine and mine[-1] == END:
        mine.pop()
    theirs = events(gold)
    kept = sum(1 for e in mine if e[0] in ("act", "loop", "if"))
    total = sum(1 for e in theirs if e[0] in ("act", "loop", "if"))
    if mine and kept < total and theirs[:len(mine)] == mine:
        return kept, total
    return None


def rescoping(out: Program, gold: Program) -> str | None:
    """How a block ends in the wrong place, when the statements are otherwise the same."""
    mine, theirs = events(out), events(gold)
    if mine == theirs or [e for e in mine if e != END] != [e for e in theirs if e != END]:
        return None
    opened: list[Event] = []
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            block = event_text(opened[-1]) if opened else "the program"
            if a == END:
                return f"the block of `{block}` is closed before `{event_text(b)}`, which the gold keeps inside it"
            return f"the block of `{block}` is left open: `{event_text(a)}` is inside it, the gold closes it first"
        if a[0] in ("loop", "if"):
            opened.append(a)
        elif a == END:
            opened.pop()
    return None
