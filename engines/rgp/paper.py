"""RGP's published mean C(P) per model and rule setting (main results and the robustness extension).

C(P) is on 0..100 both in the paper and in our report (``mean_C_<setting>``, one per
setting code: h, b, v, r, ri, hr). The extension's parenthesised differences (against
Horizontal, or against the mean of the two settings) are arithmetic on these and are not
stored twice.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import ItemResult
from engines.papers import PaperFigure, PaperRecord
from engines.reporting import scored
from engines.rgp.settings import SETTINGS

# main results: row as printed, model, Horizontal, Block, Vertical, Random
_TABLE1: tuple[tuple[str, str, tuple[float, float, float, float]], ...] = (
    ("o3-mini", "o3-mini", (95.69, 57.07, 27.31, 0.67)),
    ("Gemini-2.5 Pro", "Gemini-2.5 Pro", (92.92, 42.96, 30.39, 10.00)),
    ("o1-mini", "o1-mini", (94.49, 19.38, 4.29, 0.00)),
    ("DeepSeek-R1", "DeepSeek-R1", (89.80, 7.62, 0.00, 0.00)),
    ("Claude-3.7", "Claude-3.7", (84.67, 47.57, 14.71, 3.52)),
    ("QwQ-Plus", "QwQ-Plus", (44.00, 2.86, 23.31, 0.00)),
    ("DeepSeek-V3（非推理）", "DeepSeek-V3", (42.87, 0.00, 0.00, 3.33)),
    ("Qwen-Max（非推理）", "Qwen-Max", (46.67, 0.48, 0.00, 0.00)),
    ("GPT-4o（非推理）", "GPT-4o", (0.00, 0.00, 0.00, 0.00)),
    ("Gemini-2.0", "Gemini-2.0", (7.77, 0.43, 0.67, 3.71)),
    ("Claude-3.5", "Claude-3.5", (6.69, 0.00, 0.00, 0.00)),
)

# robustness extension: model, RI(H), SC(H+R)
_TABLE2: tuple[tuple[str, tuple[float, float]], ...] = (
    ("DeepSeek-R1", (26.54, 27.43)),
    ("o3-mini", (73.20, 78.79)),
    ("Gemini-2.5 Pro", (76.58, 38.98)),
    ("Claude-3.7", (79.04, 66.39)),
    ("QwQ-Plus", (0.00, 4.00)),
    ("Qwen-Max", (1.38, 6.67)),
    ("GPT-4o", (0.00, 0.00)),
)

_CONDITION = "30 functions per setting"
# how every figure was measured: the authors' prompt with the 16 samples, their extraction, check and estimator
CONFIG = (("prompt", "the authors' template"), ("shots", "16 samples"), ("cot", "no"),
          ("data", "the authors' generator"), ("scoring", "the authors' check and estimator"))
PROMPT_DEPENDENT = ""

FIGURES: tuple[PaperFigure, ...] = tuple(
    PaperFigure(engine="rgp", table="Table 1", block="", row=row, column=column, model=model,
                setting=(("setting", code),), metric=f"mean_C_{code}", value=value, scale=100.0,
                condition=_CONDITION + (", non-reasoning" if "非推理" in row else ""), config=CONFIG)
    for row, model, values in _TABLE1
    for (code, column), value in zip((("h", "Horizontal"), ("b", "Block"), ("v", "Vertical"), ("r", "Random")), values)
) + tuple(
    PaperFigure(engine="rgp", table="Table 2", block="", row=model, column=column, model=model,
                setting=(("setting", code),), metric=f"mean_C_{code}", value=value, scale=100.0,
                condition=_CONDITION, config=CONFIG)
    for model, values in _TABLE2
    for (code, column), value in zip((("ri", "RI(H)"), ("hr", "SC(H+R)")), values)
)


def run_setting(settings: Mapping[str, Any], results: Sequence[ItemResult]) -> dict[str, frozenset[str]]:
    """``setting=all`` covers every setting; each has its own ``mean_C_<code>``."""
    chosen = str(settings.get("setting", "all"))
    return {"setting": frozenset(SETTINGS if chosen == "all" else (chosen,))}


def sample_size(metric: str, results: Sequence[ItemResult]) -> int:
    """``mean_C_<code>`` averages C(P) over that setting's scored items."""
    code = metric.removeprefix("mean_C_")
    return sum("C" in r.scores for r in scored(results) if str(r.item.meta.get("setting")) == code)


def run_config(settings: Mapping[str, Any], model: str, results: Sequence[ItemResult]) -> dict[str, str]:
    """The run's configuration in the figures' words (prompt, generator, check and estimator are the authors')."""
    return dict(CONFIG)


PAPER = PaperRecord(FIGURES, run_setting, sample_size, run_config, PROMPT_DEPENDENT)
