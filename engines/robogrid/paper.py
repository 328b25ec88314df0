"""RoboGrid's Tables 2 and 3 as data: SVR, BER, SCR and the conditional rates per model and task.

The paper prints percentages; our report keeps these rates as fractions
(``<task>_svr``, ``<task>_ber``, ``<task>_scr``, ``<task>_cber``, ``<task>_cscr``), so each
value is the printed number divided by 100 (``percent=True``). Dashes (CBER and CSCR of
a model with SVR 0) are not figures and are not on record.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import ItemResult
from engines.papers import PaperFigure, PaperRecord, canonical
from engines.reporting import count, keep, scored

STANDARD: tuple[tuple[str, str | int | float | bool], ...] = (
    ("depth", 10), ("else_prob", 0.5), ("expr_depth", 2), ("style", "block"), ("lexicon", "alien"),
    ("shots", 0), ("cot", True))

# Table 2 columns in print order: (task setting, metric, column as printed)
_TABLE2_COLUMNS = (
    ("judge", "svr", "Grammaticality Judgment SVR"),
    ("goal", "svr", "Goal-Conditioned Generation SVR"),
    ("goal", "ber", "Goal-Conditioned Generation BER"),
    ("goal", "cber", "Goal-Conditioned Generation CBER"),
    ("instruct", "svr", "Instruction-to-Code Generation SVR"),
    ("instruct", "ber", "Instruction-to-Code Generation BER"),
    ("instruct", "scr", "Instruction-to-Code Generation SCR"),
    ("instruct", "cber", "Instruction-to-Code Generation CBER"),
    ("instruct", "cscr", "Instruction-to-Code Generation CSCR"),
)

# Table 2 rows as printed (percent); None where the paper prints a dash
_TABLE2: tuple[tuple[str, str, tuple[float | None, ...]], ...] = (
    ("Open Source Models", "Qwen3-8B", (47.0, 1.00, 1.00, 100, 0.00, 0.00, 0.00, None, None)),
    ("Open Source Models", "Qwen3-32B", (51.0, 62.5, 58.5, 93.6, 0.50, 0.50, 0.00, 100, 0.00)),
    ("Open Source Models", "Qwen3-235B", (92.0, 96.0, 76.5, 79.7, 40.0, 34.5, 19.0, 86.3, 47.5)),
    ("Open Source Models", "Mimo-V2-flash", (79.5, 69.5, 54.0, 77.7, 21.5, 17.5, 9.00, 81.4, 41.9)),
    ("Open Source Models", "DeepSeek-V3.2", (86.0, 100, 96.5, 96.5, 68.5, 60.0, 39.5, 87.6, 57.7)),
    ("Open Source Models", "GLM4.7", (65.0, 74.5, 68.5, 91.9, 44.5, 38.5, 24.5, 86.5, 55.1)),
    ("Open Source Models", "MiniMax M2.1", (41.0, 91.5, 85.5, 93.4, 8.50, 6.00, 2.50, 70.6, 29.4)),
    ("Closed Source Models", "GPT-5-nano", (70.0, 76.5, 71.5, 93.5, 9.50, 1.50, 0.00, 15.8, 0.00)),
    ("Closed Source Models", "GPT-5-mini", (83.5, 100, 90.0, 90.0, 65.0, 60.5, 6.00, 93.1, 9.23)),
    ("Closed Source Models", "GPT-5.2", (75.0, 95.5, 60.0, 62.8, 38.0, 16.0, 10.0, 42.1, 26.3)),
)

# Table 3 (Mimo-V2-flash, instruction-to-code): (dimension, configuration, the one setting changed, SVR, BER, SCR)
_TABLE3: tuple[tuple[str, str, tuple[str, str | float | int], tuple[float, float, float]], ...] = (
    ("Baseline", "Standard", ("style", "block"), (21.5, 17.5, 9.00)),
    ("Control Flow Density ($p$)", "No Else ($p=0.0$)", ("else_prob", 0.0), (24.5, 22.5, 15.0)),
    ("Control Flow Density ($p$)", "All Else ($p=1.0$)", ("else_prob", 1.0), (13.0, 11.5, 8.50)),
    ("Expression Complexity", "Shallow ($E=1$)", ("expr_depth", 1), (22.5, 20.0, 10.5)),
    ("Expression Complexity", "Deep ($E=3$)", ("expr_depth", 3), (16.5, 14.0, 4.00)),
    ("Syntactic Style", "C-style", ("style", "c"), (19.5, 16.0, 6.50)),
    ("Syntactic Style", "S-expr", ("style", "sexpr"), (16.0, 13.5, 4.50)),
    ("Lexical Fam.", "Natural", ("lexicon", "natural"), (24.5, 21.5, 10.5)),
)


def _with(task: str, change: tuple[str, Any] | None = None) -> tuple[tuple[str, Any], ...]:
    changed = dict(STANDARD)
    if change is not None:
        changed[change[0]] = change[1]
    return (("task", task), *changed.items())


# how every figure was measured (section 4): zero-shot with reasoning, the paper's generator and definitions
CONFIG = (("prompt", "the paper's template"), ("shots", "0"), ("cot", "yes"), ("data", "the paper's generator"),
          ("scoring", "the paper's definitions (SVR, BER, SCR)"))
PROMPT_DEPENDENT = "; the Table 3 dimensions that change the prompt (style, lexicon) do not change its answers"

FIGURES: tuple[PaperFigure, ...] = tuple(
    PaperFigure(engine="robogrid", table="Table 2", block=block, row=model, column=column, model=model,
                setting=_with(task), metric=f"{task}_{key}", value=round(printed / 100, 6), percent=True,
                condition="200 items per task, 0-shot CoT", config=CONFIG)
    for block, model, values in _TABLE2
    for (task, key, column), printed in zip(_TABLE2_COLUMNS, values)
    if printed is not None
) + tuple(
    PaperFigure(engine="robogrid", table="Table 3", block=dimension, row=configuration, column=key.upper(),
                model="Mimo-V2-flash", setting=_with("instruct", change), metric=f"instruct_{key}",
                value=round(printed / 100, 6), percent=True, condition=f"{dimension}: {configuration}",
                config=CONFIG)
    for dimension, configuration, change, values in _TABLE3
    for key, printed in zip(("svr", "ber", "scr"), values)
)

_KNOBS = ("depth", "else_prob", "expr_depth", "style", "lexicon")


def run_setting(settings: Mapping[str, Any], results: Sequence[ItemResult]) -> dict[str, frozenset[str]]:
    """The run's values; a knob given as a list pools its values into one rate, so it matches no single figure.

    ``task`` is the exception: every task's rates carry the task in their name.
    """
    out: dict[str, frozenset[str]] = {}
    for key in _KNOBS:
        values = [v.strip() for v in str(settings.get(key, dict(STANDARD).get(key))).split(",") if v.strip()]
        out[key] = frozenset({canonical(values[0])}) if len(values) == 1 else frozenset()
    out["task"] = frozenset(canonical(v) for v in str(settings.get("task", "instruct")).split(",") if v.strip())
    out["shots"] = frozenset({canonical(settings.get("shots", 0))})
    out["cot"] = frozenset({canonical(settings.get("cot", True))})
    return out


def sample_size(metric: str, results: Sequence[ItemResult]) -> int:
    """A task's SVR, BER and SCR average its scored items; CBER and CSCR condition on syntactically valid ones."""
    task, _, key = metric.partition("_")
    part = keep(scored(results), lambda r: r.item.meta.get("task") == task)
    if key in ("cber", "cscr"):
        return count(part, lambda r: r.scores.get("svr", 0.0) == 1.0)
    return count(part, lambda r: key in r.scores)


def run_config(settings: Mapping[str, Any], model: str, results: Sequence[ItemResult]) -> dict[str, str]:
    """The run's configuration in the figures' words (the prompt, generator and scorer are the paper's)."""
    cot = canonical(settings.get("cot", True)) == "true"
    return {"prompt": "the paper's template", "shots": str(settings.get("shots", 0)), "cot": "yes" if cot else "no",
            "data": "the paper's generator", "scoring": "the paper's definitions (SVR, BER, SCR)"}


PAPER = PaperRecord(FIGURES, run_setting, sample_size, run_config, PROMPT_DEPENDENT)
