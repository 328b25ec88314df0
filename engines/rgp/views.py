"""The inspector's rgp panes, as data (engines.core.View).

A judged program: a summary (E(P), N, M, L(P+), L(P), C(P), profile, and the sandbox's
isolation level), the 16 samples as expected/produced grid pairs with wrong cells marked
``X``, what the sandbox saw per run (exit, wall time, stdout, stderr), the program, and
its mapping table P+ as the estimator read it.
"""

from __future__ import annotations

from typing import Any

from engines.contract import Metric
from engines.core import Item, Status, View
from engines.rgp.estimate import Estimate
from engines.rgp.grids import SIDE, grid_rows
from engines.parsing import ParseFailure

MAX_TABLE_ROWS = 400


def _estimate_pairs(est: Estimate) -> list[list[str]]:
    return [
        ["N (input component values)", f"{est.n_raw} (dicts {est.n_dict} + lines {est.n_block}) -> clipped {est.n}"],
        ["M (output cells)", f"{est.m_raw} (dicts {est.m_dict} + lines {est.m_block}) -> clipped {est.m}"],
        ["L(P+)", str(est.table_length)],
        *(["estimator note", note] for note in est.notes),
    ]


def mapping_table(est: Estimate) -> View:
    rows = [[e.kind, e.inputs, e.output, e.n, e.m] for e in est.entries[:MAX_TABLE_ROWS]]
    if len(est.entries) > MAX_TABLE_ROWS:
        rows.append(["...", f"{len(est.entries) - MAX_TABLE_ROWS} more rows", "", "", ""])
    return View("table", "Mapping table P+ (input component values -> output cells)",
                {"columns": ["from", "inputs (per component)", "output", "n_z", "m_z"], "rows": rows})


def _as_grid(text: str) -> list[str] | None:
    rows = grid_rows(text)
    return rows if len(rows) == SIDE and all(len(row) == SIDE for row in rows) else None


def marked(expected: str, produced: str) -> str:
    """The produced grid with each cell that differs from the expected one shown as ``X``.

    Output that is not a 4x4 grid is shown as is (its first lines).
    """
    got = _as_grid(produced)
    if got is None:
        lines = produced.rstrip("\n").split("\n")
        head = "\n".join(line[:40] for line in lines[:6])
        return (head + ("\n..." if len(lines) > 6 else "")) or "(nothing)"
    return "\n".join("".join(g if g == w else "X" for g, w in zip(grow, wrow))
                     for grow, wrow in zip(got, grid_rows(expected)))


def _wrong_cells(expected: str, produced: str) -> int | None:
    got = _as_grid(produced)
    if got is None:
        return None
    return sum(g != w for grow, wrow in zip(got, grid_rows(expected)) for g, w in zip(grow, wrow))


def samples_table(execution: Any) -> View:
    rows = []
    for run in sorted(execution.runs, key=lambda run: run.outcome == "ok"):  # the failed samples first
        outcome = run.outcome
        wrong = _wrong_cells(run.expected, run.stdout) if outcome == "wrong" else None
        if wrong:
            outcome = f"wrong ({wrong} cells)"
        rows.append([run.number, run.input, run.expected, marked(run.expected, run.stdout), outcome])
    return View("table", "Samples: expected and produced grids (failed first, wrong cells as X)",
                {"columns": ["#", "input", "expected", "produced", "result"], "rows": rows})


def sandbox_table(execution: Any) -> View:
    rows = []
    for run in execution.runs:
        ended = run.killed_by or (f"signal {run.signal}" if run.signal else f"exit {run.exit_code}")
        stderr = run.stderr.strip().splitlines()
        rows.append([run.number, ended, f"{run.wall_s:.3f}", _clip(run.stdout, 120) + (" [truncated]" if run.truncated
                     else ""), _clip("\n".join(stderr[-3:]), 300)])
    return View("table", "Sandbox runs (stdout, and the tail of stderr)",
                {"columns": ["#", "ended", "wall s", "stdout", "stderr"], "rows": rows})


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def verdict_views(item: Item, status: Status, program: str, source: str, est: Estimate, execution: Any,
                  scores: dict[str, float], profile_code: str) -> list[View]:
    errors = int(scores["E"])
    total = len(execution.runs)
    summary = [
        ["status", status],
        ["setting", str(item.meta.get("setting_label", item.meta.get("setting", "")))],
        ["E(P)", f"{errors} of {total} samples wrong"],
        ["in-sample accuracy", f"{100 * (total - errors) / total:.2f}%"],
        *_estimate_pairs(est),
        ["L(P)", f"{int(scores['L'])} = L(P+) + 20 x {errors}"],
        ["C(P)", f"{scores['C']:.2f}"],
        ["profile", profile_code or "none (enumerated and wrong)"],
        ["program from", source],
        ["sandbox", execution.isolation or "unknown"],
        ["time limit", f"{execution.timeout_s:g} s per run"],
    ]
    # the grids first: they are what a reader checks, and the program is in the reply beside them
    return [View("key-value", "Summary", summary), samples_table(execution), sandbox_table(execution),
            View("code", "Program", program), mapping_table(est)]


def unparseable_views(item: Item, program: str, problem: ParseFailure, est: Estimate) -> list[View]:
    summary = [["status", "unparseable"], ["line", str(problem.line)], ["column", str(problem.column)],
               ["error", problem.message], ["E(P)", f"{len(item.inputs['samples'])} (not run)"], *_estimate_pairs(est)]
    return [View("key-value", "Summary", summary), View("code", "Syntax error", problem.context or problem.message),
            View("code", "Program", program), mapping_table(est)]


def no_program_views(item: Item, reply: str, est: Estimate) -> list[View]:
    summary = [["status", "unparseable"], ["program", "none found (no python code block)"],
               ["E(P)", f"{len(item.inputs['samples'])} (nothing to run)"], *_estimate_pairs(est)]
    return [View("key-value", "Summary", summary), View("text", "Reply", reply or "(empty)")]


def not_run_views(program: str, est: Estimate, why: str) -> list[View]:
    return [View("key-value", "Summary", [["status", "error"], ["note", why], *_estimate_pairs(est)]),
            View("code", "Program", program), mapping_table(est)]


METRICS: tuple[Metric, ...] = (
    Metric("mean_C", "mean C(P)", "number", True),
    Metric("in_sample_accuracy", "in-sample accuracy", "fraction", True),
    Metric("mean_E", "mean E(P)", "number"),
    Metric("mean_L_table", "mean L(P+)", "number"),
    Metric("mean_L", "mean L(P)", "number"),
    Metric("T1", "T1 items", "count"),
    Metric("T2", "T2 items", "count"),
    Metric("T3", "T3 items", "count"),
    Metric("mean_C_{}", "mean C(P) {}", "number"),
)
