"""An example engine written only to ``engines.contract``: the parity of a bit string.

Each item is a bit string; the model answers ``even`` or ``odd`` (the parity of its ones).
The package registers ``ENGINE`` under the entry point ``parity`` of the group
``n2f_tui.engines`` (see its pyproject.toml); n2f then runs, reports, shows and inspects it
like a built-in. It offers no paper figures, so its reports have none.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts, Metric
from engines.core import Item, Report, RunResults, SimOptions, Step, Tag, TagType, Verdict, View
from engines.reporting import accuracy, accuracy_by, tag_table

TEMPLATE = "Is the number of ones in {bits} even or odd? Answer with one word: even or odd."
TAXONOMY = (
    TagType("flipped", "Flipped parity", "the other parity than the right one"),
    TagType("unparseable", "Unparseable", "neither even nor odd"),
    TagType("format_violation", "Format violation", "words around the answer"),
)


@dataclass(frozen=True)
class ParitySettings:
    count: int = field(default=24, metadata={"min": 1, "max": 10000, "help": "how many bit strings"})
    length: int = field(default=6, metadata={"min": 1, "max": 64, "help": "bits per string"})
    temperature: float = field(default=0.0, metadata={"min": 0.0, "max": 2.0, "help": "sampling temperature"})
    max_tokens: int = field(default=8, metadata={"min": 1, "max": 4096, "help": "reply length cap"})


def parity(bits: str) -> str:
    return "odd" if bits.count("1") % 2 else "even"


def build_items(settings: ParitySettings, seed: int) -> list[Item]:
    rng = random.Random(seed)
    strings = ["".join(rng.choice("01") for _ in range(settings.length)) for _ in range(settings.count)]
    return [Item(id=f"parity-{i:03d}", engine="parity", inputs={"bits": bits}, gold={"answer": parity(bits)},
                 meta={"ones": bits.count("1")}) for i, bits in enumerate(strings)]


def score_item(item: Item, outputs: Sequence[str], settings: ParitySettings, with_views: bool) -> Verdict:
    reply = outputs[-1].strip().lower() if outputs else ""
    gold = item.gold["answer"]
    views = [View("key-value", "parity", [["bits", item.inputs["bits"]], ["gold", gold], ["reply", reply]])]
    if reply not in ("even", "odd"):
        return Verdict("unparseable", {"correct": 0.0}, [Tag("unparseable", "Unparseable", repr(reply))], views)
    if reply != gold:
        return Verdict("wrong", {"correct": 0.0}, [Tag("flipped", "Flipped parity", f"{reply}, not {gold}")], views)
    return Verdict("correct", {"correct": 1.0}, [], views)


def aggregate(run: RunResults, against: Sequence[RunResults], taxonomy: list[TagType]) -> Report:
    return Report(metrics={"accuracy": accuracy(run.results)},
                  tables=[accuracy_by(run.results, "ones"), tag_table("Errors", "Error types", run.results, taxonomy)])


def simulate(item: Item, options: SimOptions, rng_seed: int) -> str:
    gold = item.gold["answer"]
    return ({"even": "odd", "odd": "even"}[gold] if random.Random(rng_seed).random() < options.error_rate else gold)


class ParityEngine(Engine[ParitySettings]):
    name = "parity"
    title = "Parity: even or odd ones (an example plugin)"
    settings_type = ParitySettings
    main_score = "correct"

    def load_parts(self) -> EngineParts[ParitySettings]:
        return EngineParts(build_items=build_items, templates=lambda: {"answer": TEMPLATE}, score_item=score_item,
                           taxonomy=TAXONOMY, aggregate=aggregate, simulate=simulate,
                           oracle=lambda item: item.gold["answer"],
                           metrics=(Metric("accuracy", "accuracy", "fraction", True),))

    def next_step(self, item: Item, settings: ParitySettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if outputs:
            return None
        template = (templates or {}).get("answer", TEMPLATE)
        return self.model_step("answer", template.format(**item.inputs), settings)

    def list_score(self, status: str, scores: Mapping[str, float]) -> float | None:
        return scores.get("correct")


ENGINE = ParityEngine()
