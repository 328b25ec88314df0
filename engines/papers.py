"""The papers' published figures as data, and how a run's own figure is set beside them.

An engine offers its paper through the contract: ``EngineParts.paper``, a :class:`PaperRecord`
(the built-ins keep theirs in ``engines/<name>/paper.py`` as ``PAPER``). It holds ``figures``,
each one number of one of its paper's tables, with the setting it was measured in written in
the engine's own settings and the metric written as the engine's report names it; it says
which setting a run was in (``run_setting``) and over how many items a metric of the run was
computed (``sample_size``). This module does the rest the same way for every engine; an
engine without a record simply has no figures.

The interval is a 95% Wilson score interval on the run's figure, from the number of
items the figure was computed over. For accuracies and rates (SVR, BER, SCR, P_dc, the
round-trip accuracy) that is the Wilson interval of a proportion. For means of a per-item
score bounded in [0, scale] (CompoST's per-question F1, RGP's C(P)), the variance of a
bounded score with mean m is at most m(scale - m) (Bhatia-Davis inequality), the value a
0/1 score would have, so the same interval is a conservative one for them without
resampling the run. A paper figure is "within noise" when it lies inside that interval;
a bound the text states (``>=``) is met when the interval reaches it.

Like with like. Each figure also records the configuration it was measured in
(``config``: prompt, shots, chain of thought, data source, scoring, in the words of
``CONFIG_KEYS``), and each engine's ``paper.run_config`` says the same of a run. A verdict
is given only when they agree and the run has ``MIN_ITEMS`` items or more behind its
figure; otherwise the comparison says ``not comparable: <what differs>`` or
``too few items``, and the numbers stand beside each other without a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from engines.core import ItemResult

Scalar = str | int | float | bool

#: What a configuration is made of (the keys of ``PaperFigure.config`` and of ``run_config``).
CONFIG_KEYS = ("prompt", "shots", "cot", "data", "scoring")
#: Below this many items behind the run's figure no verdict is given (the interval is too wide to mean much).
MIN_ITEMS = 30
#: Models that never read the prompt: what they answer cannot depend on it.
PROMPT_BLIND = {
    "sim": "the simulator answers from the gold with injected errors",
    "oracle": "the oracle answers with the gold",
    "replay": "a replay returns replies recorded earlier, under whatever prompt produced them",
}


@dataclass(frozen=True)
class PaperFigure:
    """One published number: where it is printed, what it measured, and in which setting.

    ``value`` is in the unit of our report's metric; ``percent`` says the paper prints it
    as a percentage of a figure our report keeps as a fraction (printed = 100 * value).
    ``scale`` is the top of the metric's range in our report (1 for fractions, 100 for
    percentages). ``relation`` is ``=`` for a printed number, ``>=`` for a bound the text
    states. ``condition`` names what else the paper's configuration had; ``offline`` says
    why the figure cannot be reproduced by an offline run, when it cannot.
    """

    engine: str
    table: str
    block: str
    row: str
    column: str
    model: str
    setting: tuple[tuple[str, Scalar], ...]
    metric: str
    value: float
    percent: bool = False
    scale: float = 1.0
    relation: str = "="
    condition: str = ""
    offline: str = ""
    config: tuple[tuple[str, str], ...] = ()

    def setting_text(self) -> str:
        return " ".join(f"{k}={_text(v)}" for k, v in self.setting)

    def config_text(self) -> str:
        return "; ".join(f"{k}: {v}" for k, v in self.config)


@dataclass(frozen=True)
class Comparison:
    """The run's figure against one paper figure of the same model."""

    paper: float
    run: float
    n: int
    diff: float
    low: float
    high: float
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return {"paper": self.paper, "run": self.run, "n": self.n, "diff": self.diff,
                "diff_low": self.low, "diff_high": self.high, "verdict": self.verdict}


@dataclass(frozen=True)
class PaperRecord:
    """An engine's paper on record: its figures, the setting a run was in (each key the papers fix ->
    the canonical values the run covers), the number of items a run's metric was computed over, the
    run's configuration in the figures' words (``CONFIG_KEYS``: settings, model, results -> key ->
    phrase) and what a prompt-blind model makes of the prompt-dependent figures (a clause, or "")."""

    figures: tuple[PaperFigure, ...]
    run_setting: Callable[[Mapping[str, Any], Sequence[ItemResult]], dict[str, frozenset[str]]]
    sample_size: Callable[[str, Sequence[ItemResult]], int]
    run_config: Callable[[Mapping[str, Any], str, Sequence[ItemResult]], dict[str, str]]
    prompt_dependent: str = ""


def paper_record(engine: str) -> PaperRecord | None:
    """The record the engine registered under ``engine`` offers through its parts, or None."""
    from engines import get_engine

    return get_engine(engine).parts.paper


def figures(engine: str) -> tuple[PaperFigure, ...]:
    record = paper_record(engine)
    return tuple(record.figures) if record else ()


def canonical(value: Any) -> str:
    """One spelling per setting value, so ``"10"``, ``10`` and ``10.0`` or ``True`` and ``"true"`` agree."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text
    try:
        return repr(float(text))
    except ValueError:
        return text


def _text(value: Any) -> str:
    return canonical(value) if isinstance(value, bool) else str(value)


def setting_matches(figure: PaperFigure, run: Mapping[str, frozenset[str]]) -> bool:
    """Every key the paper fixed has that value among the values the run covers."""
    return all(canonical(v) in run.get(k, frozenset()) for k, v in figure.setting)


# Names a run's model goes by that do not reduce to the paper's name by normalisation
# (keys lower case, release date and ``:latest`` already dropped); a paper's own name goes
# through the same map, so DEDC's Claude-3.5-sonnet-20240620 and RGP's Claude-3.5 meet.
MODEL_ALIASES: dict[str, str] = {
    "llama3.3:70b": "Llama 3.3",
    "llama-3.3-70b-instruct": "Llama 3.3",
    "claude-3-7-sonnet": "Claude-3.7",
    "claude-3.7-sonnet": "Claude-3.7",
    "claude-3-5-sonnet": "Claude-3.5",
    "claude-3.5-sonnet": "Claude-3.5",
}

_DATE = re.compile(r"-?(\d{4}-\d{2}-\d{2}|\d{8})$")
_RUN_STAMP = re.compile(r"_\d{4}-\d{2}-\d{2}.*$")


def normalise_model(name: str) -> str:
    """Lower case, letters and digits only, a trailing release date dropped: ``gpt-4o-mini-2024-07-18`` -> ``gpt4omini``."""
    text = _DATE.sub("", name.strip().lower().removesuffix(":latest"))
    text = MODEL_ALIASES.get(text, text).lower()
    return re.sub(r"[^a-z0-9]", "", text)


def model_candidates(spec: str) -> list[str]:
    """The model names a run's model spec may stand for.

    ``openai:gpt-4o-mini@http://host/v1`` -> ``gpt-4o-mini``; a replayed released results
    file names its model in its file name (``easy__zeroshot_plain__gpt-4o-mini-2024-07-18_<time>.csv``),
    so each ``__``-separated part of the name, its time stamp dropped, is a candidate.
    """
    kind, _, rest = spec.partition(":")
    if kind == "replay":
        stem = re.split(r"[\\/]", rest)[-1]
        return [_RUN_STAMP.sub("", part) for part in stem.split("__") if part]
    if kind in ("openai", "local"):
        return [rest.split("@", 1)[0].rsplit("/", 1)[-1]]
    return [spec]


def same_model(spec: str, paper_model: str) -> bool:
    target = normalise_model(paper_model)
    return any(normalise_model(c) == target for c in model_candidates(spec))


def config_differences(figure: PaperFigure, run_config: Mapping[str, str]) -> list[str]:
    """What the run's configuration does not share with the figure's, one phrase per key."""
    return [f"{key}: paper {value}, run {run_config.get(key, 'not known')}"
            for key, value in figure.config if run_config.get(key) != value]


def prompt_blind(model: str) -> str:
    """Why the run's model cannot be affected by the prompt ('' when it reads the prompt)."""
    return PROMPT_BLIND.get(model.partition(":")[0], "")


def compare(figure: PaperFigure, run_value: float, n: int,
            run_config: Mapping[str, str] | None = None) -> Comparison | None:
    """The run's figure minus the paper's, with the 95% interval described in the module docstring,
    and a verdict only for a run in the figure's configuration with ``MIN_ITEMS`` items or more."""
    if n <= 0:
        return None
    share = min(max(run_value / figure.scale, 0.0), 1.0)
    low, high = wilson_share(share, n)
    low, high = low * figure.scale, high * figure.scale
    differs = config_differences(figure, run_config) if run_config is not None else []
    if differs:
        verdict = "not comparable: " + "; ".join(differs)
    elif n < MIN_ITEMS:
        verdict = f"too few items (n={n} < {MIN_ITEMS})"
    elif figure.relation == ">=":
        verdict = "within noise" if high >= figure.value else "below the paper"
    elif low <= figure.value <= high:
        verdict = "within noise"
    else:
        verdict = "below the paper" if run_value < figure.value else "above the paper"
    return Comparison(paper=figure.value, run=run_value, n=n, diff=run_value - figure.value,
                      low=low - figure.value, high=high - figure.value, verdict=verdict)


def wilson_share(share: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval around an observed share of n items (a mean score as well as a count)."""
    denom = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denom
    half = z * (share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5 / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def grouped(found: Sequence[PaperFigure]) -> dict[tuple[str, str], list[PaperFigure]]:
    """Figures by (table, block), in the order the paper prints them."""
    out: dict[tuple[str, str], list[PaperFigure]] = {}
    for f in found:
        out.setdefault((f.table, f.block), []).append(f)
    return out
