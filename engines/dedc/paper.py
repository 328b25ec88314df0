"""DEDC's published accuracies (Tables 1, 4 and 5) as data, with the run settings they were measured in.

Each table gives P_dc (without primitive demonstrations, ``primitives=false``) and P_c
(with them, ``primitives=true``) per model; our report names them ``P_dc`` and ``P_c``
and keeps them in percent, as the paper prints them. D_c, D_d and the Deltas are
arithmetic on these two (section 2.4, section 4) and are not stored twice. Table 3
counts error types, not a rate: it is not on record here.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from engines.core import ItemResult
from engines.dedc.score import effective_settings
from engines.papers import PaperFigure, PaperRecord, canonical
from engines.reporting import scored

# rows as the tables print them, and the models as section 3.1 names them
ROWS = ("GPT-4o", "Claude-3.5", "DeepSeek-2.5", "Mistral-large", "Llama-3.1")
MODELS = ("GPT-4o-20240806", "Claude-3.5-sonnet-20240620", "DeepSeek-2.5", "Mistral-large-2407", "Llama-3.1-405B")

# (table, block as printed, gap, names, ((P_dc, P_c) per model in ROWS order))
_TABLES: tuple[tuple[str, str, str, str, tuple[tuple[float, float], ...]], ...] = (
    ("Table 1", "", "base", "opaque",
     ((81.42, 94.74), (91.02, 98.76), (68.73, 86.69), (76.78, 95.98), (74.92, 90.71))),
    ("Table 4", "0% gap", "0", "opaque",
     ((86.69, 96.59), (94.43, 99.38), (76.16, 93.19), (83.28, 98.45), (83.59, 94.74))),
    ("Table 4", "100% gap", "100", "opaque",
     ((79.26, 93.19), (89.78, 98.14), (63.47, 84.52), (76.47, 95.98), (71.83, 87.62))),
    ("Table 5", "Anomalous", "base", "anomalous",
     ((52.94, 87.00), (57.28, 95.36), (41.80, 80.50), (13.93, 68.11), (45.82, 90.09))),
    ("Table 5", "Cross", "base", "cross",
     ((44.27, 84.52), (53.56, 92.57), (33.13, 72.45), (26.63, 73.99), (35.29, 75.54))),
)

# how every figure was measured (section 2.2, released code): the authors' prompt with 3 demonstrations
# (primitive demonstrations on top for P_c), no reasoning asked for, their checker
CONFIG = (("prompt", "the authors' template"), ("shots", "3 demonstrations"), ("cot", "no"),
          ("data", "the 323 schemes"), ("scoring", "the authors' checker (convert_to_one)"))
PROMPT_DEPENDENT = ("; D_d = P_c - P_dc and the Deltas compare runs whose prompts differ only in their "
                    "demonstrations, so for such a model they are 0 up to noise by construction, not a finding")

FIGURES: tuple[PaperFigure, ...] = tuple(
    PaperFigure(engine="dedc", table=table, block=block, row=row, column=column, model=model,
                setting=(("gap", gap), ("names", names), ("primitives", primitives)),
                metric=metric, value=pair[index], scale=100.0,
                condition="3 demonstrations, temperature 0", config=CONFIG)
    for table, block, gap, names, values in _TABLES
    for row, model, pair in zip(ROWS, MODELS, values)
    for index, (column, metric, primitives) in enumerate((("P_dc", "P_dc", False), ("P_c", "P_c", True)))
)


def run_setting(settings: Mapping[str, Any], results: Sequence[ItemResult]) -> dict[str, frozenset[str]]:
    """gap, names and primitives as the run had them (an official file's name stands for its knobs)."""
    data = effective_settings(settings)
    return {key: frozenset({canonical(data[key])}) for key in ("gap", "names", "primitives")}


def sample_size(metric: str, results: Sequence[ItemResult]) -> int:
    """P_dc and P_c are accuracies over the run's scored items."""
    return len(scored(results))


def run_config(settings: Mapping[str, Any], model: str, results: Sequence[ItemResult]) -> dict[str, str]:
    """The run's configuration in the figures' words: the template is the authors' (byte for byte) and
    the status is always the authors' checker's verdict; only the number of demonstrations varies."""
    data = effective_settings(settings)
    return {"prompt": "the authors' template", "shots": f"{data.get('shots', 3)} demonstrations", "cot": "no",
            "data": "the 323 schemes", "scoring": "the authors' checker (convert_to_one)"}


PAPER = PaperRecord(FIGURES, run_setting, sample_size, run_config, PROMPT_DEPENDENT)
