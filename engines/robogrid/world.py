"""The RoboGrid world (paper section 2.1): a deterministic interpreter with a step cap.

State is ``(x, y, facing, inventory)``. The grid is unbounded and has no obstacles: the
paper gives no walls, and BER (eq. 2) only compares final states. North is ``y + 1``
and east ``x + 1`` (the paper's goal example reaches ``(0, 46)`` from ``(0, 0)`` facing N).
``Grab`` adds an item to the inventory (a set: grabbing twice holds it once).

Every executed action, every loop iteration and every condition test is one step. A
program that needs more than ``MAX_STEPS`` steps (``loop 99999 times [...]`` nested) is
stopped there: the execution is marked ``capped`` and the scorer counts it as not
reaching the target, so a pathological answer costs milliseconds, not minutes. Generated
programs stay far below the cap (programs.ITERATION_BUDGET).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from engines.robogrid.nodes import (
    BACKWARD,
    LEFT,
    Grab,
    If,
    Loop,
    Move,
    Path,
    Program,
    Stmt,
    Turn,
    fmt_int,
    head,
    holds,
    path_text,
    show_cond,
    value,
)

FACINGS = ("N", "E", "S", "W")
DELTA = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
MAX_STEPS = 10_000
MAX_TRACE = 2_000  # trace rows kept for the inspector (steps beyond are counted, not listed)


@dataclass(frozen=True)
class State:
    x: int = 0
    y: int = 0
    facing: str = "N"
    inventory: tuple[str, ...] = ()  # sorted, no repeats

    def describe(self) -> str:
        """The paper's wording (appendix A.2): ``pos (0, 46), facing W, inventory empty``."""
        held = ", ".join(self.inventory) if self.inventory else "empty"
        return f"pos ({fmt_int(self.x)}, {fmt_int(self.y)}), facing {self.facing}, inventory {held}"

    def to_json(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y, "facing": self.facing, "inventory": list(self.inventory)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "State":
        return cls(int(data.get("x", 0)), int(data.get("y", 0)), str(data.get("facing", "N")),
                   tuple(sorted(set(map(str, data.get("inventory", ()))))))


@dataclass(frozen=True)
class TraceStep:
    step: int
    path: str
    event: str  # "move forward 3", "loop 4: iteration 2/4", "if (...): then"
    state: State


@dataclass(frozen=True)
class Execution:
    final: State
    steps: int
    capped: bool
    trace: tuple[TraceStep, ...] = ()
    cells: tuple[tuple[int, int], ...] = ()  # position after each action (with trace=True)


class _Capped(Exception):
    pass


@dataclass
class _Machine:
    x: int
    y: int
    facing: int
    inventory: set[str]
    max_steps: int
    record: bool
    steps: int = 0
    trace: list[TraceStep] = field(default_factory=list)
    cells: list[tuple[int, int]] = field(default_factory=list)

    def state(self) -> State:
        return State(self.x, self.y, FACINGS[self.facing], tuple(sorted(self.inventory)))

    def tick(self, path: Path, stmt: Stmt, note: str = "") -> None:
        """Count one step; the event text is only built when the trace is kept."""
        self.steps += 1
        if self.steps > self.max_steps:
            self.steps = self.max_steps
            raise _Capped
        if self.record and len(self.trace) < MAX_TRACE:
            event = (f"if {show_cond(stmt.cond)}" if isinstance(stmt, If) else head(stmt)) + note
            self.trace.append(TraceStep(self.steps, path_text(path), event, self.state()))

    def block(self, stmts: tuple[Stmt, ...], prefix: Path, name: str) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmt, prefix + ((name, i),))

    def stmt(self, stmt: Stmt, path: Path) -> None:
        if isinstance(stmt, Move):
            n = value(stmt.steps)
            dx, dy = DELTA[FACINGS[self.facing]]
            sign = -1 if stmt.direction == BACKWARD else 1
            self.x += sign * dx * n
            self.y += sign * dy * n
            self._acted(path, stmt)
        elif isinstance(stmt, Turn):
            self.facing = (self.facing + (-1 if stmt.direction == LEFT else 1)) % 4
            self._acted(path, stmt)
        elif isinstance(stmt, Grab):
            self.inventory.add(stmt.item)
            self._acted(path, stmt)
        elif isinstance(stmt, Loop):
            count = value(stmt.count)
            if count <= 0:
                self.tick(path, stmt, ": 0 iterations")
            for k in range(count):
                self.tick(path, stmt, f": iteration {k + 1}/{fmt_int(count)}" if self.record else "")
                self.block(stmt.body, path, "body")
        elif isinstance(stmt, If):
            taken = holds(stmt.cond, self.inventory)
            branch = "then" if taken else ("else" if stmt.orelse is not None else "no branch")
            self.tick(path, stmt, f": {branch}")
            if taken:
                self.block(stmt.then, path, "then")
            elif stmt.orelse is not None:
                self.block(stmt.orelse, path, "else")

    def _acted(self, path: Path, stmt: Stmt) -> None:
        self.tick(path, stmt)
        if self.record:
            self.cells.append((self.x, self.y))


def execute(program: Program, start: State = State(), trace: bool = False, max_steps: int = MAX_STEPS) -> Execution:
    """Run a program from ``start``; ``trace=True`` also keeps each step for the inspector."""
    machine = _Machine(start.x, start.y, FACINGS.index(start.facing), set(start.inventory), max_steps, trace)
    capped = False
    try:
        machine.block(program.body, (), "body")
    except _Capped:
        capped = True
    return Execution(machine.state(), machine.steps, capped, tuple(machine.trace), tuple(machine.cells))
