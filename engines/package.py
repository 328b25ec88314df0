"""The engine object every engine folder shares, wired to its modules by their contract names.

An engine folder has the same files (generate, prompts, score, tags, simulate, ...), so
the object that serves them to the harness is the same too: subclasses state what
differs (name, settings, main score, tools, how the steps are built) and override a
method only where their family really works differently (logic's two-step simulator,
compost's official-data loader). Modules are imported on first use so that listing
the engines stays cheap.

Every verdict also carries the shared reply tags (``engines.replies``: prompt echoes,
loops, empty and truncated replies, another script), found on each model step's reply
against the prompt of that step; ``reply_tag_map`` files them under the engine's own
codes where its taxonomy has a place for them.
"""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType
from typing import Any, Mapping, Sequence

from engines import replies
from engines.core import LENIENT, STRICT, Item, Report, RunResults, SimOptions, Step, TagType, Verdict, View


class PackageEngine:
    name: str
    title: str
    settings_type: type
    main_score: str
    tools: tuple[str, ...] = ()
    model_steps: int = 1  # model calls per item: a per-item reply budget is split across them
    report_reads_outputs: bool = False  # whether report() looks at ItemResult.outputs (tool results)
    reply_tag_map: Mapping[str, str] = {}  # shared reply code -> this engine's code for it

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

    def score(self, item: Item, outputs: Sequence[str], settings: Any = None, with_views: bool = True,
              finish_reasons: Sequence[str] = (), templates: Mapping[str, str] | None = None) -> Verdict:
        """The engine's verdict plus the shared reply tags of its model steps.

        ``finish_reasons`` are the backend's, per step (tool steps have ""); ``templates``
        are the run's, so that an echo is compared with the prompt the model really saw.
        """
        verdict = self._judged(item, outputs, settings, with_views)
        known = {(t.code, t.evidence) for t in verdict.tags}
        labels = {t.code: t.label for t in self.taxonomy()}
        for tag in replies.reply_tags(self.model_replies(item, outputs, settings, finish_reasons, templates),
                                      self.reply_tag_map, labels):
            if (tag.code, tag.evidence) not in known:
                verdict.tags.append(tag)
        return verdict

    def _judged(self, item: Item, outputs: Sequence[str], settings: Any, with_views: bool) -> Verdict:
        """The strict verdict; with ``extract=lenient`` the lenient one rides along as
        ``lenient_correct`` / ``lenient_<main score>`` and its views, never as the status."""
        score_item = self.part("score").score_item
        if getattr(settings, "extract", STRICT) != LENIENT:
            return score_item(item, outputs, settings, with_views)
        verdict = score_item(item, outputs, dataclasses.replace(settings, extract=STRICT), with_views)
        lenient = score_item(item, outputs, settings, with_views)
        verdict.scores["lenient_correct"] = float(lenient.correct)
        verdict.scores[f"lenient_{self.main_score}"] = float(lenient.scores.get(self.main_score, 0.0))
        if lenient.status != verdict.status or lenient.scores != {k: v for k, v in verdict.scores.items()
                                                                  if not k.startswith("lenient_")}:
            verdict.views += [View(v.kind, f"lenient reading: {v.title}", v.data) for v in lenient.views]
        return verdict

    def model_replies(self, item: Item, outputs: Sequence[str], settings: Any, finish_reasons: Sequence[str],
                      templates: Mapping[str, str] | None) -> list[replies.Reply]:
        """Each model step's reply with the prompt it answered (tool steps' outputs are not replies)."""
        found = []
        for index, text in enumerate(outputs):
            step = self.next_step(item, settings, outputs[:index], templates)
            if step is None:
                break
            if step.kind != "model":
                continue
            prompt = "\n".join(m.content for m in step.messages)
            reason = finish_reasons[index] if index < len(finish_reasons) else ""
            found.append(replies.Reply(text, prompt, reason))
        return found

    def taxonomy(self) -> list[TagType]:
        """The engine's own error taxonomy (what its simulator can inject); the shared reply
        tags are ``engines.replies.TAXONOMY``."""
        return list(self.part("tags").TAXONOMY)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        """Single-step families simulate from the item alone; multi-step ones override."""
        return self.part("simulate").simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        return self.part("simulate").oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        return with_extraction(self.part("score").aggregate(run, against, self.taxonomy()), run)


def with_extraction(report: Report, run: RunResults) -> Report:
    """The report says how replies were read; a lenient run also gets its lenient accuracy,
    named apart from the paper's figures (which count the strict verdicts)."""
    mode = getattr(run.settings, "extract", None)
    if mode is None:
        return report
    if mode == STRICT:
        report.notes.append("extract=strict: replies are read as the paper's authors read them")
        return report
    judged = [r for r in run.results if r.status != "error"]
    lenient = [r.scores.get("lenient_correct", float(r.status == "correct")) for r in judged]
    report.metrics["lenient_accuracy"] = sum(lenient) / len(lenient) if lenient else 0.0
    report.notes.append("extract=lenient: lenient_accuracy also reads answers set off from prose; statuses and "
                        "the paper's metrics count the strict reading")
    return report
