"""The inspector's logic panes, as data (engines.core.View).

The original formula, the step-1 description, the round-trip formula (and the raw reply
when text had to be removed), the two side by side, both ASTs as kind trees, the solver
verdict with its countermodel (each symbol's value and both formulas' truth values in
it), and the truth-table agreement. An unparseable reply shows where parsing stopped.
"""

from __future__ import annotations

from typing import Any

from engines.contract import Metric
from engines.core import Verdict, View
from engines.logic.formula import FORALL, Arrow, Atom, Equal, Formula, Junction, Not, Quant, children
from engines.logic.reading import Reading
from engines.logic.render import show
from engines.logic.score import Judgement
from engines.logic.solver import EQUIVALENT, NOT_EQUIVALENT, UNKNOWN
from engines.parsing import ParseFailure

MAX_TREE_NODES = 300
MAX_SHOWN = 10_000  # characters of a reply shown in a pane
_VERDICT_TEXT = {EQUIVALENT: "equivalent", NOT_EQUIVALENT: "not equivalent", UNKNOWN: "unknown"}
_OP_TEXT = {"and": "∧ and", "or": "∨ or", "implies": "→ implies", "iff": "↔ iff"}


def ast_tree(title: str, f: Formula) -> View:
    """The formula's node kinds as a tree (operators with their arity, atoms as leaves)."""
    budget = [MAX_TREE_NODES]

    def label(node: Formula) -> str:
        if isinstance(node, Atom):
            return f"{show(node)}  ({'predicate' if node.args else 'proposition'})"
        if isinstance(node, Equal):
            return f"{show(node)}  (equality)"
        if isinstance(node, Not):
            return "¬ not"
        if isinstance(node, Junction):
            return f"{_OP_TEXT[node.op]} ({len(node.parts)} parts)"
        if isinstance(node, Arrow):
            return _OP_TEXT[node.op]
        assert isinstance(node, Quant)
        return f"{'∀' if node.kind == FORALL else '∃'}{node.var} {node.kind}"

    def tree(node: Formula) -> dict[str, Any]:
        budget[0] -= 1
        if budget[0] <= 0:
            return {"label": label(node) + " ...", "children": []}
        return {"label": label(node), "children": [tree(c) for c in children(node)]}

    return View("tree", title, tree(f))


def _verdict_rows(j: Judgement, verdict: Verdict) -> list[list[str]]:
    rows = [["status", verdict.status]]
    outcome = j.outcome
    if outcome is not None:
        rows += [["verdict", _VERDICT_TEXT[outcome.verdict]],
                 ["original ⊨ round trip", outcome.forward],
                 ["round trip ⊨ original", outcome.backward],
                 ["solver time", f"{1000 * outcome.seconds:.1f} ms"]]
        if outcome.reason:
            rows.append(["why unknown", outcome.reason])
    if j.agreement is not None:
        a = j.agreement
        rows.append(["truth-table agreement", f"{a.agree}/{a.total} ({100 * a.fraction:.1f}%)"])
    if isinstance(j.reading, Reading):
        rows.append(["format", "clean" if not j.reading.removed else "removed: " + " | ".join(j.reading.removed)])
    for t in verdict.tags:
        rows.append([t.code, t.evidence])
    return rows


def _countermodel(j: Judgement) -> View | None:
    outcome = j.outcome
    if outcome is None or outcome.countermodel is None or outcome.values is None:
        return None
    rows = outcome.countermodel.rows()
    original, output = outcome.values
    rows += [["original", "true" if original else "false"], ["round trip", "true" if output else "false"]]
    return View("table", "Countermodel (the two formulas differ here)", {"columns": ["symbol", "value"], "rows": rows})


def _truth_table(j: Judgement) -> View | None:
    a = j.agreement
    if a is None:
        return None
    return View("key-value", "Truth-table agreement", [
        ["agreeing assignments", f"{a.agree} of {a.total}"], ["agreement", f"{100 * a.fraction:.1f}%"],
        ["variables", ", ".join(a.variables)]])


def _clip(text: str) -> str:
    if len(text) <= MAX_SHOWN:
        return text
    return text[:MAX_SHOWN] + f"\n... ({len(text) - MAX_SHOWN} more characters)"


def views(j: Judgement, verdict: Verdict) -> list[View]:
    original_text = show(j.original)
    out: list[View] = [View("key-value", "Verdict", _verdict_rows(j, verdict)),
                       View("code", "Original formula", original_text),
                       View("text", "Description (step 1)", _clip(j.description) or "(no description)")]
    if isinstance(j.reading, ParseFailure):
        error: ParseFailure = j.reading
        out += [View("code", "Parse error", f"{error.describe()}\n{error.context}"),
                View("code", "Reply (step 2)", _clip(j.reply)),
                ast_tree("Original AST", j.original)]
        return out
    formula = j.reading.formula
    round_trip = show(formula)
    out.append(View("code", "Round-trip formula", round_trip))
    if j.reading.removed or j.reply.strip() != round_trip:
        out.append(View("code", "Reply (step 2)", _clip(j.reply)))
    out.append(View("diff", "Original vs round trip", {"left": original_text, "right": round_trip,
                                                       "left_title": "original", "right_title": "round trip"}))
    for view in (_countermodel(j), _truth_table(j)):
        if view is not None:
            out.append(view)
    out += [ast_tree("Original AST", j.original), ast_tree("Round-trip AST", formula)]
    return out


METRICS: tuple[Metric, ...] = (
    Metric("accuracy", "round-trip accuracy", "fraction", True),
    Metric("mean_truth_table_agreement", "truth-table agreement", "fraction", True),
    Metric("unknown", "Z3 unknown", "count"),
    Metric("unknown_rate", "Z3 unknown rate", "fraction"),
)
