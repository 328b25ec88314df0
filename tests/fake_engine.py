"""A minimal engine on the contract, for testing the sessions layer on its own."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from engines.contract import Engine, EngineParts
from engines.core import Item, Message, Report, RunResults, SimOptions, Step, Tag, TagType, Verdict, View
from engines.reporting import accuracy


@dataclass(frozen=True)
class FakeSettings:
    count: int = field(default=20, metadata={"min": 1})
    steps: int = 1
    temperature: float = 0.0
    max_tokens: int = 16


class FakeEngine(Engine[FakeSettings]):
    name = "fake"
    title = "fake engine"
    settings_type = FakeSettings
    main_score = "correct"

    def load_parts(self) -> EngineParts[FakeSettings]:
        return EngineParts(build_items=fake_items, templates=lambda: {"answer": "Q: {question}"}, score_item=judge,
                           taxonomy=[TagType("oops", "Oops", "a wrong answer")], aggregate=report,
                           simulate=simulate, oracle=lambda item: item.gold["answer"])

    def model_params(self, settings: FakeSettings) -> dict:
        return {}

    def next_step(self, item: Item, settings: FakeSettings, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        if len(outputs) >= settings.steps:
            return None
        template = (templates or self.templates(settings))["answer"]
        return Step(name=f"s{len(outputs)}", messages=(Message("user", template.format(**item.inputs)),), template="answer")

    def list_score(self, status: str, scores: Mapping[str, float]) -> float | None:
        return scores.get("correct")


def fake_items(settings: FakeSettings, seed: int) -> list[Item]:
    return [Item(id=f"fake-{i}", engine="fake", inputs={"question": f"q{i}"}, gold={"answer": f"a{i}"}, meta={"k": i % 3})
            for i in range(settings.count)]


def judge(item: Item, outputs: Sequence[str], settings: FakeSettings, with_views: bool) -> Verdict:
    ok = outputs and outputs[-1] == item.gold["answer"]
    tags = [] if ok else [Tag("oops", "Oops", evidence=f"got {outputs[-1]!r}" if outputs else "nothing")]
    return Verdict(status="correct" if ok else "wrong", scores={"correct": float(bool(ok))}, tags=tags,
                   views=[View("text", "output", outputs[-1] if outputs else "")])


def simulate(item: Item, options: SimOptions, rng_seed: int) -> str:
    return "wrong" if random.Random(rng_seed).random() < options.error_rate else item.gold["answer"]


def report(run: RunResults, against: Sequence[RunResults], taxonomy: list[TagType]) -> Report:
    return Report(metrics={"accuracy": accuracy(run.results)})


def register(monkeypatch) -> FakeEngine:
    """Make ``get_engine("fake")`` return a FakeEngine for the duration of one test."""
    import engines

    engine = FakeEngine()
    monkeypatch.setitem(engines._engines(), "fake", engine)
    return engine
