"""A minimal engine on the contract, for testing the sessions layer on its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from engines.core import Item, Message, Report, Step, Tag, TagType, Verdict, View
from engines.reporting import accuracy


@dataclass(frozen=True)
class FakeSettings:
    count: int = field(default=20, metadata={"min": 1})
    steps: int = 1


class FakeEngine:
    name = "fake"
    title = "fake engine"
    settings_type = FakeSettings
    main_score = "correct"

    def items(self, settings, seed):
        return [Item(id=f"fake-{i}", engine="fake", inputs={"question": f"q{i}"}, gold={"answer": f"a{i}"}, meta={"k": i % 3})
                for i in range(settings.count)]

    def model_params(self, settings):
        return {}

    def templates(self, settings):
        return {"answer": "Q: {question}"}

    def next_step(self, item, settings, outputs, templates=None):
        if len(outputs) >= settings.steps:
            return None
        template = (templates or self.templates(settings))["answer"]
        return Step(name=f"s{len(outputs)}", messages=(Message("user", template.format(**item.inputs)),), template="answer")

    def score(self, item, outputs, settings, with_views=True, finish_reasons=(), templates=None):
        ok = outputs and outputs[-1] == item.gold["answer"]
        tags = [] if ok else [Tag("oops", "Oops", evidence=f"got {outputs[-1]!r}" if outputs else "nothing")]
        return Verdict(status="correct" if ok else "wrong", scores={"correct": float(bool(ok))}, tags=tags,
                       views=[View("text", "output", outputs[-1] if outputs else "")])

    def taxonomy(self):
        return [TagType("oops", "Oops", "a wrong answer")]

    def simulate(self, item, step, outputs, options, rng_seed):
        import random

        return "wrong" if random.Random(rng_seed).random() < options.error_rate else item.gold["answer"]

    def oracle(self, item, step, outputs):
        return item.gold["answer"]

    def report(self, run, against=()):
        return Report(metrics={"accuracy": accuracy(run.results)})


def register(monkeypatch) -> FakeEngine:
    """Make ``get_engine("fake")`` return a FakeEngine for the duration of one test."""
    import engines

    engine = FakeEngine()
    monkeypatch.setattr(engines, "ENGINE_NAMES", (*engines.ENGINE_NAMES, "fake"))
    monkeypatch.setitem(engines._loaded, "fake", engine)
    return engine
