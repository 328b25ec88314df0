"""The engine object every engine folder shares, wired to its modules by their contract names.

An engine folder has the same files (generate, prompts, score, tags, simulate, ...), so
the object that serves them to the harness is the same too: subclasses state what
differs (name, settings, main score, tools, how the steps are built) and override a
method only where their family really works differently (logic's two-step simulator,
compost's official-data loader). Modules are imported on first use so that listing
the engines stays cheap.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Mapping, Sequence

from engines.core import Item, Report, RunResults, SimOptions, Step, TagType, Verdict


class PackageEngine:
    name: str
    title: str
    settings_type: type
    main_score: str
    tools: tuple[str, ...] = ()

    def part(self, module: str) -> ModuleType:
        """One of this engine's contract modules, e.g. ``part("score")``."""
        return importlib.import_module(f"engines.{self.name}.{module}")

    def model_params(self, settings: Any) -> dict[str, Any]:
        """The sampling parameters of a model step, from the settings (defaults when None)."""
        settings = settings if settings is not None else self.settings_type()
        return {"temperature": settings.temperature, "max_tokens": settings.max_tokens}

    def items(self, settings: Any, seed: int) -> list[Item]:
        return self.part("generate").build_items(settings, seed)

    def templates(self, settings: Any = None) -> dict[str, str]:
        return self.part("prompts").templates()

    def next_step(
        self, item: Item, settings: Any, outputs: Sequence[str], templates: Mapping[str, str] | None = None
    ) -> Step | None:
        raise NotImplementedError

    def score(self, item: Item, outputs: Sequence[str], settings: Any = None, with_views: bool = True) -> Verdict:
        return self.part("score").score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        return list(self.part("tags").TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        """Single-step families simulate from the item alone; multi-step ones override."""
        return self.part("simulate").simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        return self.part("simulate").oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        return self.part("score").aggregate(run, against, self.taxonomy())
