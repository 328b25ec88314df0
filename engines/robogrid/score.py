"""RoboGrid verdicts (section 4.2: SVR, BER, SCR) and run aggregation (Tables 2, 3, Figure 2).

Per item, by task:

* judge: ``svr`` is 1 when the VALID/INVALID answer is right (SVR is accuracy for task
  1); status correct/wrong, unparseable without a VALID or INVALID;
* goal: ``svr`` 1 when the reply parses under the item's grammar, ``ber`` 1 when running
  it from the start state ends in the target state (a run stopped at the step cap never
  does); status correct when both hold;
* instruct: ``svr``, ``ber`` as above against the gold's final state, ``scr`` 1 when the
  tree equals the gold tree; status correct when SCR = 1.

A reply that is an echo of the prompt (its grammar included; ``replies.echo_evidence``, the
whole reply compared) is tagged as the echo it is (``autoregressive_echoing``, added with the
reply tags) and gets no syntax tag of the paper's: the rules it rewrote are the grammar's
own words, not an attempt at a program. A program stopped at the step cap is ``step_limit``
(with BER 0, whatever state it passed through) and the report counts these apart.

SCR = 1 implies BER = 1 (same tree, same deterministic run from the same start) and BER
= 1 implies SVR = 1, so SCR <= BER <= SVR holds item by item and in every aggregate.
Task 1 defines only SVR and task 2 no SCR (Table 2), so those keys are absent rather
than invented. CBER = BER / SVR and CSCR = SCR / SVR are computed on the aggregates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Mapping, Sequence

from engines.core import (LENIENT, Chart, DataError, Item, ItemResult, Report, RunResults, Status, Table, Tag, TagType,
                          Verdict)
from engines.parsing import ParseFailure
from engines.robogrid.grammars import Grammar, grammar_for
from engines.robogrid.lexicon import Lexicon
from engines.robogrid.nodes import Program
from engines.replies import echo_evidence
from engines.robogrid.parse import parse_code, parse_reply, parse_verdict
from engines.robogrid.prompts import build_prompt
from engines.robogrid.settings import RobogridSettings
from engines.robogrid.tags import drift_tags, judge_tags, syntax_tags, tag
from engines.robogrid.world import MAX_STEPS, State, execute
from engines.reporting import Rows, correct, count, counted, grouped, joined, scored, status_counts, tag_table

DEFAULT_SETTINGS = RobogridSettings()
TASK_KEYS = {"judge": ("svr",), "goal": ("svr", "ber"), "instruct": ("svr", "ber", "scr")}
STEP_LIMIT = "step_limit"  # tag and score (1.0) of a program whose run was stopped at the step cap
TASK_ORDER = ("instruct", "goal", "judge")  # the headline metrics describe the first task a run has
STANDARD = {"style": "block", "lexicon": "alien", "expr_depth": 2, "else_prob": 0.5, "depth": 10}
DIMENSIONS = ("depth", "else_prob", "expr_depth", "style", "lexicon", "shots", "cot")
TABLE1_KEYS = DIMENSIONS[:5]  # always tabulated; shots and cot only when a run (or its pool) varies them
DIMENSION_LABEL = {"depth": "Max nesting depth (D)", "else_prob": "Control flow density (p)",
                   "expr_depth": "Expression complexity (E)", "style": "Syntactic style",
                   "lexicon": "Lexical familiarity", "shots": "Worked examples", "cot": "Chain of thought"}


# ------------------------------------------------------------------ the item


def item_task(item: Item) -> str:
    task = str(item.meta.get("task", ""))
    if task not in TASK_KEYS:
        raise DataError(f"item {item.id}: meta.task must be judge, goal or instruct, not {task!r}")
    return task


def item_cot(item: Item, settings: RobogridSettings = DEFAULT_SETTINGS) -> bool:
    """Whether the item asks for reasoning first: its own choice (a pool item), else the run's."""
    return bool(item.meta.get("cot", settings.cot))


def item_grammar(item: Item) -> Grammar:
    style = str(item.meta.get("style", ""))
    if style not in ("block", "c", "sexpr"):
        raise DataError(f"item {item.id}: meta.style must be block, c or sexpr, not {style!r}")
    return grammar_for(style, Lexicon.from_json(item.inputs.get("lexicon") or {}))


def item_gold(item: Item) -> Program:
    """The gold tree, parsed (once, cached) from the gold program under the item's grammar."""
    parsed = parse_code(str(item.gold.get("program", "")), item_grammar(item))
    if isinstance(parsed, ParseFailure):
        raise DataError(f"item {item.id}: the gold program does not parse ({parsed.describe()})")
    return parsed


def item_start(item: Item) -> State:
    return State.from_json(item.inputs.get("start") or {})


# ------------------------------------------------------------------ verdicts


def score_item(item: Item, outputs: Sequence[str], settings: RobogridSettings = DEFAULT_SETTINGS,
               with_views: bool = True) -> Verdict:
    task = item_task(item)
    text = outputs[-1] if outputs else ""
    lenient = settings.extract == LENIENT
    if task == "judge":
        return _score_judge(item, text, item_cot(item, settings), lenient, with_views)
    return _score_program(item, task, text, item_cot(item, settings), lenient, with_views)


def _format_violation(removed: tuple[str, ...]) -> Tag:
    more = f" (+{len(removed) - 4} more)" if len(removed) > 4 else ""
    return tag("format_violation", "removed: " + " | ".join(removed[:4]) + more)


def _score_judge(item: Item, text: str, cot: bool, lenient: bool, with_views: bool) -> Verdict:
    from engines.robogrid import views

    judged = parse_verdict(text, cot, lenient)
    if isinstance(judged, ParseFailure):
        tags = [tag("unparseable", judged.describe())]
        set_off = parse_verdict(text, cot, lenient=True)
        if not isinstance(set_off, ParseFailure):  # a judgement inside prose: say so, though it is not read
            tags.append(_format_violation(set_off.removed))
        return Verdict("unparseable", {"svr": 0.0}, tags, views.judge_views(item, text, judged) if with_views else [])
    right = judged.answer == item.gold.get("answer")
    tags = judge_tags(judged.answer, item.gold)
    if judged.removed and not cot:
        tags.append(_format_violation(judged.removed))
    status: Status = "correct" if right else "wrong"
    return Verdict(status, {"svr": float(right)}, tags, views.judge_views(item, text, judged) if with_views else [])


def _score_program(item: Item, task: str, text: str, cot: bool, lenient: bool, with_views: bool) -> Verdict:
    from engines.robogrid import views

    grammar = item_grammar(item)
    gold = item_gold(item)
    start = item_start(item)
    keys = TASK_KEYS[task]
    parsed = parse_reply(text, grammar, lenient)
    if isinstance(parsed, ParseFailure):
        tags: list[Tag] = [tag("unparseable", parsed.describe())]
        echo = echo_evidence(text, build_prompt(item, cot), by_similarity=True)
        if echo is None:
            tags += syntax_tags(parsed.source, grammar, text, parsed.start)
        else:  # an echo's tokens are the prompt's, not an attempt at a program: no paper tag is read off them
            tags.append(tag("autoregressive_echoing", f"{echo}; no syntax tag is derived from an echo"))
        set_off = None if lenient else parse_reply(text, grammar, lenient=True)
        if set_off is not None and not isinstance(set_off, ParseFailure):  # a program among prose, not read
            tags.append(_format_violation(set_off.removed))
        vs = views.failure_views(item, text, parsed, grammar, gold, execute(gold, start, trace=True)) if with_views else []
        return Verdict("unparseable", {k: 0.0 for k in keys}, tags, vs)
    out_run = execute(parsed.program, start)
    gold_run = execute(gold, start)
    ber = not out_run.capped and out_run.final == gold_run.final
    scr = parsed.program == gold
    scores = {"svr": 1.0, "ber": float(ber)}
    if task == "instruct":
        scores["scr"] = float(scr)
    if out_run.capped:
        scores[STEP_LIMIT] = 1.0
    correct = scr if task == "instruct" else ber
    tags = []
    if not correct:
        traced = execute(gold, start, trace=True) if task == "goal" else gold_run
        tags = drift_tags(parsed.program, gold, out_run, traced, start, near_copy_only=task == "goal")
    if out_run.capped and not any(t.code == STEP_LIMIT for t in tags):
        tags.insert(0, tag(STEP_LIMIT, f"execution stopped at the cap of {MAX_STEPS} steps"))
    if parsed.removed and (not cot or not parsed.marked):
        tags.append(_format_violation(parsed.removed))
    vs = []
    if with_views:
        vs = views.program_views(item, text, parsed, grammar, gold, execute(parsed.program, start, trace=True),
                                 execute(gold, start, trace=True), scores)
    return Verdict("correct" if correct else "wrong", scores, tags, vs)


# ------------------------------------------------------------------ reporting


def _pct(x: float | None) -> float | str:
    return "-" if x is None else round(100 * x + 0.0, 2)


def rates(results: Sequence[ItemResult]) -> dict[str, float]:
    """Mean SVR/BER/SCR over the items that define each, with CBER and CSCR (fractions 0-1)."""
    sums: defaultdict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    for r, n in counted(results):
        for key, value in r.scores.items():
            if key in ("svr", "ber", "scr"):
                sums[key] += n * value  # 0 or 1: the same sum as item by item
                counts[key] += n
    out = {key: sums[key] / counts[key] for key in ("svr", "ber", "scr") if counts[key]}
    if out.get("svr") and "ber" in out:
        out["cber"] = out["ber"] / out["svr"]
    if out.get("svr") and "scr" in out:
        out["cscr"] = out["scr"] / out["svr"]
    return out


def _by_task(results: Sequence[ItemResult]) -> dict[str, Sequence[ItemResult]]:
    return grouped(results, lambda r: str(r.item.meta.get("task", "?")))


def _table2(runs: Sequence[RunResults]) -> Table:
    by_model: dict[str, Rows] = {}
    for r in runs:
        by_model[r.model] = joined(by_model.get(r.model, ()), scored(r.results))
    rows = []
    for model, results in by_model.items():
        tasks = _by_task(results)
        j, g, i = (rates(tasks.get(t, [])) for t in ("judge", "goal", "instruct"))
        rows.append([model, _pct(j.get("svr")), _pct(g.get("svr")), _pct(g.get("ber")), _pct(g.get("cber")),
                     _pct(i.get("svr")), _pct(i.get("ber")), _pct(i.get("scr")), _pct(i.get("cber")),
                     _pct(i.get("cscr"))])
    return Table("Table 2", "Main results: judgement SVR; goal SVR, BER, CBER; instruction SVR, BER, SCR, CBER, CSCR",
                 ["model", "judge SVR", "goal SVR", "goal BER", "goal CBER", "instruct SVR", "instruct BER",
                  "instruct SCR", "instruct CBER", "instruct CSCR"], rows,
                 note="percent; CBER = BER/SVR, CSCR = SCR/SVR; '-' where a task was not run or is undefined")


def _differs(meta: Mapping[str, Any]) -> list[str]:
    return [k for k, v in STANDARD.items() if str(meta.get(k)) != str(v)]


def _configuration(r: ItemResult) -> tuple[str, str, str] | None:
    """Table 3's row of an item: its task, and the standard condition or the one dimension it differs in
    (None when it differs in more)."""
    away = _differs(r.item.meta)
    task = str(r.item.meta.get("task"))
    if not away:
        return (task, "Baseline", "Standard")
    if len(away) == 1:
        return (task, DIMENSION_LABEL[away[0]], f"{away[0]}={r.item.meta.get(away[0])}")
    return None


def _table3(results: Sequence[ItemResult]) -> tuple[Table, int]:
    """Baseline (the paper's standard condition) and one-dimension-away configurations, per task."""
    groups = grouped(results, _configuration)
    skipped = len(groups.get(None, ()))
    rows = []
    configured = [(key, group) for key, group in groups.items() if key is not None]
    for (task, dim, conf), group in sorted(configured, key=lambda kv: (kv[0][0], kv[0][1] != "Baseline",
                                                                       kv[0][1], kv[0][2])):
        m = rates(group)
        rows.append([task, dim, conf, len(group), _pct(m.get("svr")), _pct(m.get("ber")), _pct(m.get("scr"))])
    standard = ", ".join(f"{k}={v}" for k, v in STANDARD.items())
    return Table("Table 3", "Ablations against the standard condition",
                 ["task", "dimension", "configuration", "n", "SVR", "BER", "SCR"], rows,
                 note=f"percent; standard: {standard}; rows differ from it in one dimension"), skipped


def _by(results: Sequence[ItemResult], key: str) -> Table:
    groups = grouped(results, lambda r: (str(r.item.meta.get("task")), str(r.item.meta.get(key, "?"))))
    rows = []
    for (task, value), group in sorted(groups.items(), key=lambda kv: (kv[0][0], _natural(kv[0][1]))):
        m = rates(group)
        rows.append([task, value, len(group), _pct(m.get("svr")), _pct(m.get("ber")), _pct(m.get("scr")),
                     _pct(m.get("cber")), _pct(m.get("cscr"))])
    return Table(f"by {key}", f"{DIMENSION_LABEL[key]}: SVR, BER, SCR, CBER, CSCR",
                 ["task", key, "n", "SVR", "BER", "SCR", "CBER", "CSCR"], rows, note="percent")


def _natural(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _figure2(results: Sequence[ItemResult]) -> list[Chart]:
    """SVR, BER and SCR by depth for the most demanding task present (Figure 2)."""
    tasks = _by_task(results)
    task = next((t for t in TASK_ORDER if t in tasks), None)
    if task is None:
        return []
    depths = grouped(tasks[task], lambda r: int(r.item.meta.get("depth", 0)))
    charts = []
    for key in TASK_KEYS[task]:
        series = {f"D={d}": round(100 * rates(depths[d]).get(key, 0.0), 2) for d in sorted(depths)}
        charts.append(Chart("Figure 2", f"{key.upper()} by recursion depth ({task})", series, "%"))
    return charts


#: what ``aggregate`` and the paper record read of an item (``EngineParts.report_keys``): its task and the
#: dimensions the tables group by
REPORT_KEYS = ("task", *DIMENSIONS)


def aggregate(run_results: RunResults, against: Sequence[RunResults], taxonomy: Sequence[TagType]) -> Report:
    judged = scored(run_results.results)
    pooled = joined(judged, *(scored(other.results) for other in against if other.model == run_results.model))
    tasks = _by_task(judged)
    metrics: dict[str, float] = {}
    for task in TASK_ORDER:
        if task in tasks:
            for key, value in rates(tasks[task]).items():
                metrics[f"{task}_{key}"] = value
    primary = next((t for t in TASK_ORDER if t in tasks), None)
    notes = []
    if primary is not None:
        metrics.update(rates(tasks[primary]))
        if len(tasks) > 1:
            notes.append(f"svr/ber/scr without a task prefix are the {primary} task's")
    metrics["accuracy"] = correct(judged) / len(judged) if judged else 0.0
    counts = status_counts(run_results.results)
    if counts.get("error"):
        notes.append(f"{counts['error']} items in status error are excluded")
    capped = count(judged, lambda r: r.scores.get(STEP_LIMIT, 0.0) >= 1.0)
    if "goal" in tasks or "instruct" in tasks:
        metrics[STEP_LIMIT] = float(capped)
    if capped:
        notes.append(f"{capped} program(s) stopped at the step cap of {MAX_STEPS} steps (tag step_limit): their "
                     "BER is 0 whatever states they passed through, and they are counted here apart")
    if any(o.model == run_results.model for o in against):
        notes.append("Table 3 and the by-dimension tables pool this run with the other runs of the same model")
    table3, skipped = _table3(pooled)
    if skipped:
        notes.append(f"{skipped} items differ from the standard condition in more than one dimension and are "
                     "left out of Table 3 (the by-dimension tables include them)")
    tables = [_table2([run_results, *against]), table3]
    tables += [_by(pooled, key) for key in DIMENSIONS
               if key in TABLE1_KEYS or len({str(r.item.meta.get(key)) for r, _ in counted(pooled)}) > 1]
    tables.append(tag_table("Appendix A.4", "Failure modes (items per tag)", judged, taxonomy))
    return Report(metrics=metrics, tables=tables, charts=_figure2(pooled), notes=notes)
