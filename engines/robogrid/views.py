"""The inspector's RoboGrid panes, as data (engines.core.View).

For a parsed program: a summary, the first structural difference, both trees as a
style-independent outline side by side (diff) and as trees with the differing statement
marked, both final states against the start, the output's execution trace, a grid of
both robots' paths, the code, and the grammar both as the model saw it (EBNF) and as a
complete lark grammar. For an unparseable reply: the parse error with its line under a
caret and the terminals the parser expected. For the judge task: the answer against the
gold and where the candidate program itself fails to parse.
"""

from __future__ import annotations

from typing import Any

from engines.contract import Metric
from engines.core import Item, View
from engines.parsing import ParseFailure
from engines.robogrid.compare import Edit, first_difference
from engines.robogrid.grammars import Grammar
from engines.robogrid.nodes import (
    If,
    Loop,
    Path,
    Program,
    Stmt,
    expression_depth,
    fmt_int,
    head,
    nesting_depth,
    outline,
    statement_count,
)
from engines.robogrid.parse import Judgement, Parsed, ProgramFailure, parse_code
from engines.robogrid.world import Execution, State

MAX_TREE_NODES = 400
MAX_TRACE_ROWS = 300
GRID_WIDTH, GRID_HEIGHT = 61, 31
MARK = "   <-- first difference"


def ast_tree(title: str, program: Program, mark: Path | None) -> View:
    budget = [MAX_TREE_NODES]

    def block(stmts: tuple[Stmt, ...], prefix: Path, name: str) -> list[dict[str, Any]]:
        out = []
        for i, stmt in enumerate(stmts):
            if budget[0] <= 0:
                out.append({"label": f"... ({len(stmts) - i} more statements)", "children": []})
                break
            budget[0] -= 1
            out.append(node(stmt, prefix + ((name, i),)))
        return out

    def node(stmt: Stmt, path: Path) -> dict[str, Any]:
        label = head(stmt).replace(" (with else)", "") + (MARK if path == mark else "")
        if isinstance(stmt, Loop):
            return {"label": label, "children": block(stmt.body, path, "body")}
        if isinstance(stmt, If):
            children = [{"label": "then", "children": block(stmt.then, path, "then")}]
            if stmt.orelse is not None:
                children.append({"label": "else", "children": block(stmt.orelse, path, "else")})
            return {"label": label, "children": children}
        return {"label": label, "children": []}

    return View("tree", title, {"label": "program", "children": block(program.body, (), "body")})


def _outline_text(program: Program, mark: Path | None) -> str:
    return "\n".join((">> " if path == mark else "   ") + line for path, line in outline(program))


def difference_views(out: Program, gold: Program) -> list[View]:
    edit: Edit | None = first_difference(out, gold)
    if edit is None:
        summary = [["first difference", "none: the trees are identical"]]
    else:
        summary = [["first difference", edit.describe()], ["kind", edit.kind + (f" ({edit.field})" if edit.field else "")]]
    out_mark = edit.out_path if edit else None
    gold_mark = edit.gold_path if edit else None
    return [
        View("key-value", "First structural difference", summary),
        View("diff", "AST (style-independent; >> marks the first difference)", {
            "left": _outline_text(out, out_mark), "right": _outline_text(gold, gold_mark),
            "left_title": "output", "right_title": "gold"}),
        ast_tree("Output AST", out, out_mark),
        ast_tree("Gold AST", gold, gold_mark),
    ]


def _state_cells(state: State | None) -> list[str]:
    if state is None:
        return ["-"] * 4
    return [fmt_int(state.x), fmt_int(state.y), state.facing, ", ".join(state.inventory) or "(empty)"]


def states_table(start: State, out_run: Execution | None, gold_run: Execution) -> View:
    columns = ["", "start", "output", "gold"]
    start_cells = _state_cells(start)
    out_cells = _state_cells(out_run.final if out_run else None)
    gold_cells = _state_cells(gold_run.final)
    rows = [[name, start_cells[k], out_cells[k], gold_cells[k]] for k, name in enumerate(("x", "y", "facing",
                                                                                           "inventory"))]
    rows.append(["steps", "", str(out_run.steps) if out_run else "-", str(gold_run.steps)])
    rows.append(["stopped at the step cap", "", ("yes" if out_run.capped else "no") if out_run else "-",
                 "yes" if gold_run.capped else "no"])
    return View("table", "Final states", {"columns": columns, "rows": rows})


def trace_table(title: str, execution: Execution) -> View:
    rows = [[str(s.step), s.path, s.event, *_state_cells(s.state)] for s in execution.trace[:MAX_TRACE_ROWS]]
    if execution.steps > len(rows):
        rows.append(["...", "", f"{execution.steps - len(rows)} more steps", "", "", "", ""])
    return View("table", title, {"columns": ["step", "statement", "event", "x", "y", "facing", "inventory"],
                                 "rows": rows})


def grid_view(start: State, out_run: Execution | None, gold_run: Execution) -> View:
    """Both paths on the grid around the start: o gold, * output, # both, S start, G/E the ends."""
    x0, y0 = start.x - GRID_WIDTH // 2, start.y - GRID_HEIGHT // 2
    cells = [["."] * GRID_WIDTH for _ in range(GRID_HEIGHT)]

    def draw(execution: Execution, mark: str) -> None:
        prev = (start.x, start.y)
        for pos in execution.cells:
            (ax, ay), (bx, by) = prev, pos
            xs = range(max(min(ax, bx), x0), min(max(ax, bx), x0 + GRID_WIDTH - 1) + 1)
            ys = range(max(min(ay, by), y0), min(max(ay, by), y0 + GRID_HEIGHT - 1) + 1)
            for x in xs:
                for y in ys:
                    cur = cells[y - y0][x - x0]
                    cells[y - y0][x - x0] = mark if cur in (".", mark) else "#"
            prev = pos

    def put(x: int, y: int, mark: str) -> None:
        if x0 <= x < x0 + GRID_WIDTH and y0 <= y < y0 + GRID_HEIGHT:
            cells[y - y0][x - x0] = mark

    draw(gold_run, "o")
    if out_run is not None:
        draw(out_run, "*")
        put(out_run.final.x, out_run.final.y, "E")
    put(gold_run.final.x, gold_run.final.y, "G")
    put(start.x, start.y, "S")
    rows = ["".join(row) for row in reversed(cells)]  # north up
    return View("grid", f"World around the start (o gold, * output, # both, S start, G gold end, E output end; "
                        f"x {x0}..{x0 + GRID_WIDTH - 1}, y {y0}..{y0 + GRID_HEIGHT - 1})", rows)


def _task_view(item: Item) -> View:
    task = item.meta.get("task")
    if task == "instruct":
        return View("text", "Instructions", str(item.inputs.get("instructions", "")))
    return View("key-value", "Goal", [["start", str(item.inputs.get("start_text", ""))],
                                      ["target", str(item.inputs.get("target_text", ""))]])


def _where(parsed: Parsed) -> str:
    if not parsed.removed:
        return "the whole reply"
    return ("a fenced block or marked section" if parsed.marked else "the code lines of the reply") + \
        " (removed: " + " | ".join(parsed.removed[:4]) + ")"


def program_views(item: Item, text: str, parsed: Parsed, grammar: Grammar, gold: Program, out_run: Execution,
                  gold_run: Execution, scores: dict[str, float]) -> list[View]:
    start = State.from_json(item.inputs.get("start") or {})
    summary = [["task", str(item.meta.get("task"))],
               *[[k.upper(), f"{v:g}"] for k, v in scores.items()],
               ["style / lexicon", f"{grammar.style} / {grammar.lexicon.kind} ({grammar.lexicon.name})"],
               ["depth (output / gold)", f"{nesting_depth(parsed.program)} / {nesting_depth(gold)}"],
               ["statements (output / gold)", f"{statement_count(parsed.program)} / {statement_count(gold)}"],
               ["deepest expression (output / gold)",
                f"{expression_depth(parsed.program)} / {expression_depth(gold)}"],
               ["program found in", _where(parsed)]]
    return [View("key-value", "Summary", summary),
            *difference_views(parsed.program, gold),
            states_table(start, out_run, gold_run),
            trace_table("Execution trace (output)", out_run),
            grid_view(start, out_run, gold_run),
            _task_view(item),
            View("code", "Output program", parsed.source),
            View("code", "Gold program", str(item.gold.get("program", ""))),
            *grammar_views(grammar)]


def grammar_views(grammar: Grammar) -> list[View]:
    """The grammar as the model saw it, and as a complete lark grammar to reproduce the parse."""
    return [View("code", "Grammar (EBNF)", grammar.ebnf),
            View("code", "Grammar (lark: Lark(text, parser='lalr'))", grammar.lark_source)]


def failure_views(item: Item, text: str, failure: ProgramFailure, grammar: Grammar, gold: Program,
                  gold_run: Execution) -> list[View]:
    start = State.from_json(item.inputs.get("start") or {})
    expected = ", ".join(grammar.describe_terminal(n) for n in failure.expected[:10]) or "-"
    return [View("key-value", "Summary", [["status", "unparseable"], ["line", str(failure.line)],
                                          ["column", str(failure.column)], ["error", failure.message],
                                          ["expected", expected]]),
            View("code", "Parse error", failure.context),
            View("code", "Output", text),
            _task_view(item),
            View("code", "Gold program", str(item.gold.get("program", ""))),
            ast_tree("Gold AST", gold, None),
            states_table(start, None, gold_run),
            grid_view(start, None, gold_run),
            *grammar_views(grammar)]


def judge_views(item: Item, text: str, judged: Judgement | ParseFailure) -> list[View]:
    from engines.robogrid.score import item_grammar

    grammar = item_grammar(item)
    code = str(item.inputs.get("code", ""))
    candidate = parse_code(code, grammar)
    answer = judged.answer if isinstance(judged, Judgement) else f"(none: {judged.describe()})"
    summary = [["answer", answer], ["gold", str(item.gold.get("answer", ""))],
               ["perturbation", str(item.gold.get("perturbation", "-"))], ["what was broken",
                                                                          str(item.gold.get("note", "-"))]]
    if isinstance(candidate, ParseFailure):
        parse_view = View("code", f"The candidate does not parse: {candidate.describe()}", candidate.context)
    else:
        parse_view = View("text", "The candidate parses", f"{statement_count(candidate)} statements, depth "
                                                          f"{nesting_depth(candidate)}")
    return [View("key-value", "Summary", summary), parse_view, View("code", "Code to check", code),
            View("code", "Reply", text), *grammar_views(grammar)]


METRICS: tuple[Metric, ...] = (
    Metric("accuracy", "accuracy", "fraction", True),
    Metric("svr", "SVR", "fraction", True),
    Metric("ber", "BER", "fraction", True),
    Metric("scr", "SCR", "fraction", True),
    Metric("cber", "CBER", "fraction"),
    Metric("cscr", "CSCR", "fraction"),
    Metric("{}_svr", "{} SVR", "fraction"),
    Metric("{}_ber", "{} BER", "fraction"),
    Metric("{}_scr", "{} SCR", "fraction"),
    Metric("{}_cber", "{} CBER", "fraction"),
    Metric("{}_cscr", "{} CSCR", "fraction"),
)
