"""The round-trip paper's figures as data: it prints its results as plots, so the only numbers are in its text.

Section 3.1 states GPT-4 reached at least 95% round-trip accuracy on the CNF set
(``dataset=cnf``, the prompt-tuning set); section 3.2 states GPT-4 "barely achieved 80%"
on first-order formulas with a single operator (``dataset=fol max_ops=1``; the text does
not say which vocabulary). Our report keeps accuracy as a fraction, so the values are the
printed percentages divided by 100. ``row`` holds the sentence as printed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import ItemResult
from engines.papers import PaperFigure, PaperRecord, canonical
from engines.reporting import scored

# how both figures were measured: the same two zero-shot prompts for every model, fresh contexts,
# formulas from the paper's grammar, equivalence decided by a prover with undecided items thrown out
CONFIG = (("prompt", "the paper's two prompts"), ("shots", "0"), ("cot", "no"), ("data", "the paper's grammar"),
          ("scoring", "equivalence by a prover, undecided items set aside"))
PROMPT_DEPENDENT = ""

FIGURES: tuple[PaperFigure, ...] = (
    PaperFigure(engine="logic", table="Section 3.1", block="", column="",
                row=r"GPT-4 in our case) was able to achieve $\geq 95\%$ accuracy",
                model="GPT-4", setting=(("dataset", "cnf"),), metric="accuracy", value=0.95, percent=True,
                relation=">=", condition="400 (3,m)-CNF formulas, r = 1.0..7.0, temperature 0.1", config=CONFIG),
    PaperFigure(engine="logic", table="Section 3.2", block="", column="",
                row="Even with a single operator, GPT-4 barely achieved 80% accuracy",
                model="GPT-4", setting=(("dataset", "fol"), ("max_ops", 1)), metric="accuracy", value=0.80,
                percent=True, condition="prenex FOL, one operator, read off the text (Figure 3 has no table)",
                config=CONFIG),
)


def run_setting(settings: Mapping[str, Any], results: Sequence[ItemResult]) -> dict[str, frozenset[str]]:
    return {key: frozenset({canonical(settings.get(key, default))})
            for key, default in (("dataset", "cnf"), ("max_ops", 10), ("vocab", "symbolic"))}


def sample_size(metric: str, results: Sequence[ItemResult]) -> int:
    """Accuracy is over the decided items (a Z3 ``unknown`` is set aside, as the paper threw out its timeouts)."""
    return len(scored(results))


def run_config(settings: Mapping[str, Any], model: str, results: Sequence[ItemResult]) -> dict[str, str]:
    """The run's configuration in the figures' words (the prompts, generator and judge follow the paper)."""
    return dict(CONFIG)


PAPER = PaperRecord(FIGURES, run_setting, sample_size, run_config, PROMPT_DEPENDENT)
