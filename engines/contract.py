"""The engine contract: one typed object per benchmark family, the same operations for all.

An engine subclasses ``Engine[S]`` with ``S`` its frozen settings dataclass, fills in
the abstract operations and names its own functions in one ``EngineParts`` record; the
base class adds what every family shares (the operations that only hand over to those
functions, the model parameters, the shared reply tags, the lenient reading riding along
the strict verdict). Registration is one entry point in the group ``n2f_tui.engines``
(``engines/__init__.py``); the contract test checks every registered engine against this
class, and ``declaration_problems`` is what the registry checks before it lists one (a
plugin that breaks it is left out, naming itself), so a new family is added by filling
in one object, never by naming modules. Everything an engine offers goes through here,
its paper's figures included (``EngineParts.paper``; an engine without them has none).

Every operation is pure and deterministic. An engine imports its heavy modules (Z3, lark,
pyoxigraph) in ``load_parts``, called on first use, so that listing the engines stays cheap.
"""

from __future__ import annotations

import dataclasses
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, ClassVar, Generic, Literal, Mapping, Protocol, Sequence, TypeVar

from engines import replies
from engines.core import (LENIENT, SCORER_ERROR, STRICT, UNJUDGED, EngineError, Item, Message, Report, RunResults,
                          SettingsError, SimOptions, Status, Step, Tag, TagType, Verdict, View)
from engines.papers import PaperRecord
from engines.parsing import shorten
from engines.reporting import keep, status_counts, total
from engines.taxonomy import UNPARSEABLE


class ModelSettings(Protocol):
    """What every engine's settings hold for its model steps (a dataclass, so ``dataclasses.replace`` applies)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @property
    def temperature(self) -> float: ...

    @property
    def max_tokens(self) -> int: ...


S = TypeVar("S", bound=ModelSettings)


UNREAD_HEAD = 2_000  # characters of an unread output its view shows

Unit = Literal["fraction", "percent", "score", "count", "number"]


@dataclass(frozen=True)
class Metric:
    """How the inspector labels one of a report's metrics (an engine lists them in ``views.METRICS``,
    the headline ones first).

    ``name`` with ``{}`` stands for a family (one per split, task or setting), filled into ``label``
    the same way. Units: fraction (0-1, shown as %), percent (already in %), score (0-1, shown as
    is), count, number.
    """

    name: str
    label: str
    unit: Unit
    headline: bool = False


@dataclass(frozen=True)
class EngineParts(Generic[S]):
    """An engine's own functions behind the operations every engine hands over the same way.

    ``simulate`` and ``oracle`` answer from the item alone; an engine whose replies depend on
    the step (logic's second step reads the first) leaves them None and overrides
    ``Engine.simulate`` and ``Engine.oracle`` instead.
    """

    build_items: Callable[[S, int], Sequence[Item]]
    templates: Callable[[], dict[str, str]]
    score_item: Callable[[Item, Sequence[str], S, bool], Verdict]
    taxonomy: Sequence[TagType]
    aggregate: Callable[[RunResults, Sequence[RunResults], list[TagType]], Report]
    simulate: Callable[[Item, SimOptions, int], str] | None = None
    oracle: Callable[[Item], str] | None = None
    metrics: Sequence[Metric] = ()  # how reports label its metrics (views.METRICS); unnamed ones show plainly
    paper: PaperRecord | None = None  # the paper's published figures (paper.PAPER); None: the engine has none
    # the item meta keys ``aggregate`` (and the paper record) read, when those and each result's status, scores and
    # tag codes are all it reads: its results then come to it as rows of equal results (``engines.reporting.Rows``,
    # the keys from ``items.keys``). None: it reads more (item ids, replies, tool results) and gets every item's own
    report_keys: tuple[str, ...] | None = None


class Engine(ABC, Generic[S]):
    """One benchmark family, generic over its settings dataclass ``S``."""

    name: ClassVar[str]
    title: ClassVar[str]
    settings_type: type[S]
    main_score: ClassVar[str]  # the per-item score compared between runs: dedc "correct", compost "f1"
    tools: ClassVar[tuple[str, ...]] = ()  # sessions tools its tool steps use (rgp "python_sandbox")
    model_steps: ClassVar[int] = 1  # model calls per item: a per-item reply budget is split across them
    report_reads_outputs: ClassVar[bool] = False  # report() reads ItemResult.outputs (tool results)
    reply_tag_map: ClassVar[Mapping[str, str]] = {}  # shared reply code -> this engine's code for it
    rank: ClassVar[int] = 100  # where listings put it (the built-ins 0-4 in the README's order); ties by name

    # ---------------------------------------------------------- what each engine fills in

    @abstractmethod
    def load_parts(self) -> EngineParts[S]:
        """The engine's own functions, imported here so that only an engine in use loads them."""

    @abstractmethod
    def next_step(self, item: Item, settings: S, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> Step | None:
        """The next call to make given the outputs so far, or None when the item is done."""

    @abstractmethod
    def list_score(self, status: Status, scores: Mapping[str, float]) -> float | None:
        """The one number the inspector's list shows and sorts by, in [0, 1]; None when the
        item has none (not scored). Monotone with the status: a wrong item of this engine
        never scores above a correct one."""

    # ------------------------------------------- handed over to the engine's own parts

    @cached_property
    def parts(self) -> EngineParts[S]:
        """The engine's parts; a plugin whose parts fail to import or are not an EngineParts is an
        EngineError naming it (one line, exit status 2), not a traceback."""
        try:
            parts = self.load_parts()
        except EngineError:
            raise
        except Exception as exc:  # a plugin's imports may fail any way
            raise EngineError(f"engine {self.name}: its parts cannot be loaded: {type(exc).__name__}: {exc}") from None
        if not isinstance(parts, EngineParts):
            raise EngineError(f"engine {self.name}: load_parts returned {type(parts).__name__}, not EngineParts")
        return parts

    def items(self, settings: S, seed: int) -> Sequence[Item]:
        """Build (or load) the items for these settings (a lazy sequence for large official files)."""
        return self.parts.build_items(settings, seed)

    def templates(self, settings: S) -> dict[str, str]:
        """Default prompt templates by name (editable by the user)."""
        return self.parts.templates()

    def judge(self, item: Item, outputs: Sequence[str], settings: S, with_views: bool) -> Verdict:
        """The engine's own verdict on one item's outputs, read as ``settings.extract`` says."""
        return self.parts.score_item(item, outputs, settings, with_views)

    def taxonomy(self) -> list[TagType]:
        """The engine's own error taxonomy (what its simulator can inject); the shared reply
        tags are ``engines.replies.TAXONOMY``."""
        return list(self.parts.taxonomy)

    def simulate(self, item: Item, step: Step, outputs: Sequence[str], options: SimOptions, rng_seed: int) -> str:
        """A simulated model reply: the gold answer, or with an injected error of the taxonomy."""
        assert self.parts.simulate is not None, f"{self.name} answers by step: it overrides simulate"
        return self.parts.simulate(item, options, rng_seed)

    def oracle(self, item: Item, step: Step, outputs: Sequence[str]) -> str:
        """The gold reply for this step."""
        assert self.parts.oracle is not None, f"{self.name} answers by step: it overrides oracle"
        return self.parts.oracle(item)

    def report(self, run: RunResults, against: Sequence[RunResults] = ()) -> Report:
        """The run in the paper's tables and the headline metrics, saying how replies were read
        (``with_extraction`` says it for an engine whose tables do not)."""
        failed = status_counts(run.results)[SCORER_ERROR]
        if failed:  # no scores to aggregate: counted apart, in the report's counts and this note
            run = dataclasses.replace(run, results=keep(run.results, lambda r: r.status != SCORER_ERROR))
        report = with_extraction(self.parts.aggregate(run, against, self.taxonomy()), run)
        if failed:
            report.notes.append(f"{failed} item(s) in status {SCORER_ERROR} (the scorer failed on their replies) are "
                                "left out of the tables; `n2f rescore` judges them again")
        return report

    # -------------------------------------------------------------------- shared by all

    def model_params(self, settings: S) -> dict[str, Any]:
        """The sampling parameters every model step sends (recorded in the run for reproduction)."""
        return {"temperature": settings.temperature, "max_tokens": settings.max_tokens}

    def model_step(self, name: str, prompt: str, settings: S, system: str = "") -> Step:
        """The model step built from template ``name``: ``prompt`` as the user's message (after
        ``system`` when given), with the run's sampling parameters."""
        messages = ((Message("system", system),) if system else ()) + (Message("user", prompt),)
        return Step(name=name, messages=messages, params=self.model_params(settings), template=name)

    def next_call(self, item: Item, settings: S, outputs: Sequence[str],
                  templates: Mapping[str, str] | None = None) -> tuple[Step | None, str]:
        """``next_step`` and ``""``, never raising: an output over the readers' bounds ends the item (no
        step reads it; ``score`` judges it unread), and an exception of the engine reading the outputs
        so far ends it too, with the ``scorer_error`` text as the second value."""
        if outputs and replies.out_of_bounds(outputs[-1]):
            return None, ""
        try:
            return self.next_step(item, settings, outputs, templates), ""
        except SettingsError:  # a template naming an unknown placeholder is the user's to fix, not the reply's
            raise
        except Exception as exc:  # noqa: BLE001 - an engine failing on one reply fails that item alone
            return None, scorer_error(exc).error

    def score(self, item: Item, outputs: Sequence[str], settings: S | None = None, with_views: bool = True,
              finish_reasons: Sequence[str] = (), templates: Mapping[str, str] | None = None,
              prompts: Sequence[str | None] | None = None) -> Verdict:
        """The verdict plus the shared reply tags of its model steps; views only when asked.

        ``settings`` default to the engine's defaults (``n2f score`` without ``-s``).

        ``finish_reasons`` are the backend's, per step (tool steps have ""); ``templates``
        are the run's, so that an echo is compared with the prompt the model really saw;
        ``prompts``, when the caller has them (a run's trace), are those prompts per step
        (None for a tool step), so none is built again. They inform the reply tags, never
        the status.

        Never raises for any output: one over the readers' bounds is judged ``unparseable``
        unread (``replies.out_of_bounds``), and any exception of the engine's own reading,
        scoring, tagging or views becomes the item's status ``scorer_error`` with the
        exception in ``Verdict.error`` (``rescore`` judges it again after a fix).
        """
        if settings is None:
            settings = self.settings_type()
        try:
            for index, text in enumerate(outputs):
                reason = replies.out_of_bounds(text)
                if reason:
                    return self._unread(item, outputs, index, reason, settings, with_views)
            return self._score(item, outputs, settings, with_views, finish_reasons, templates, prompts)
        except Exception as exc:  # noqa: BLE001 - a scorer's failure is this item's verdict, never the run's end
            return scorer_error(exc)

    def _unread(self, item: Item, outputs: Sequence[str], index: int, reason: str, settings: S,
                with_views: bool) -> Verdict:
        """The verdict on an output over the readers' bounds: ``unparseable``, with the engine's own
        scores for an empty reply in its place (so that every report finds its keys)."""
        empty = self.judge(item, [*outputs[:index], ""], settings, False)
        where = f"output {index + 1}: " if len(outputs) > 1 else ""
        labels = {t.code: t.label for t in self.taxonomy()}
        tags = [Tag(UNPARSEABLE, labels.get(UNPARSEABLE, "Unparseable"), where + reason),
                Tag(replies.OVERSIZED_REPLY, replies.LABELS[replies.OVERSIZED_REPLY], where + reason)]
        views = [View("key-value", "Not read", [["output", str(index + 1)], ["reason", reason]]),
                 View("text", f"Output {index + 1} (its first {UNREAD_HEAD:,} characters)", outputs[index][:UNREAD_HEAD])]
        return Verdict(UNPARSEABLE, dict(empty.scores), tags, views if with_views else [])

    def _score(self, item: Item, outputs: Sequence[str], settings: S, with_views: bool,
               finish_reasons: Sequence[str], templates: Mapping[str, str] | None,
               prompts: Sequence[str | None] | None) -> Verdict:
        verdict = self._strict_with_lenient(item, outputs, settings, with_views)
        known = {(t.code, t.evidence) for t in verdict.tags}
        labels = {t.code: t.label for t in self.taxonomy()}
        if prompts is None:
            prompts = self._prompts(item, outputs, settings, templates)
        model_replies = [replies.Reply(text, prompt, finish_reasons[index] if index < len(finish_reasons) else "")
                         for index, (text, prompt) in enumerate(zip(outputs, prompts)) if prompt is not None]
        for tag in replies.reply_tags(model_replies, self.reply_tag_map, labels):
            if (tag.code, tag.evidence) not in known:
                verdict.tags.append(tag)
        return verdict

    def _strict_with_lenient(self, item: Item, outputs: Sequence[str], settings: S, with_views: bool) -> Verdict:
        """The strict verdict; with ``extract=lenient`` the lenient one rides along as
        ``lenient_correct`` / ``lenient_<main score>`` and its views, never as the status."""
        if getattr(settings, "extract", STRICT) != LENIENT:
            return self.judge(item, outputs, settings, with_views)
        verdict = self.judge(item, outputs, dataclasses.replace(settings, extract=STRICT), with_views)
        lenient = self.judge(item, outputs, settings, with_views)
        verdict.scores["lenient_correct"] = float(lenient.correct)
        verdict.scores[f"lenient_{self.main_score}"] = float(lenient.scores.get(self.main_score, 0.0))
        if lenient.status != verdict.status or lenient.scores != {k: v for k, v in verdict.scores.items()
                                                                  if not k.startswith("lenient_")}:
            verdict.views += [View(v.kind, f"lenient reading: {v.title}", v.data) for v in lenient.views]
        return verdict

    def _prompts(self, item: Item, outputs: Sequence[str], settings: S,
                 templates: Mapping[str, str] | None) -> list[str | None]:
        """The prompt each output answered, built again from the templates (None for a tool step's
        output); as many as the engine asked steps for."""
        found: list[str | None] = []
        for index in range(len(outputs)):
            step, _ = self.next_call(item, settings, outputs[:index], templates)
            if step is None:
                break
            found.append("\n".join(m.content for m in step.messages) if step.kind == "model" else None)
        return found


def scorer_error(exc: Exception) -> Verdict:
    """The verdict of an item its engine failed to judge: the exception and where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    text = shorten(f"{type(exc).__name__}: {exc}", 500) + where
    return Verdict(SCORER_ERROR, {}, [], [View("text", "Scorer error", text)], error=text)


def declaration_problems(engine: object, name: str) -> list[str]:
    """What an object registered as engine ``name`` gets wrong in the contract's declarations
    (checked without loading its parts, so listing engines stays cheap); empty when nothing."""
    if not isinstance(engine, Engine):
        return [f"it is a {type(engine).__name__}, not an engines.contract.Engine"]
    found = []
    if getattr(engine, "name", None) != name:
        found.append(f"its name is {getattr(engine, 'name', None)!r}, registered as {name!r}")
    for attribute in ("title", "main_score"):
        if not isinstance(getattr(engine, attribute, None), str) or not getattr(engine, attribute):
            found.append(f"{attribute} must be a non-empty string")
    settings = getattr(engine, "settings_type", None)
    frozen = getattr(getattr(settings, "__dataclass_params__", None), "frozen", False)
    if not (isinstance(settings, type) and dataclasses.is_dataclass(settings) and frozen):
        found.append("settings_type must be a frozen dataclass")
    if not isinstance(engine.model_steps, int) or engine.model_steps < 1:
        found.append("model_steps must be an integer of at least 1")
    return found


def with_extraction(report: Report, run: RunResults) -> Report:
    """The report says how replies were read; a lenient run also gets its lenient accuracy,
    named apart from the paper's figures (which count the strict verdicts)."""
    mode = getattr(run.settings, "extract", None)
    if mode is None:
        return report
    if mode == STRICT:
        report.notes.append("extract=strict: replies are read as the paper's authors read them")
        return report
    judged = keep(run.results, lambda r: r.status not in UNJUDGED)
    lenient = total(judged, lambda r: r.scores.get("lenient_correct", float(r.status == "correct")))
    report.metrics["lenient_accuracy"] = lenient / len(judged) if judged else 0.0
    report.notes.append("extract=lenient: lenient_accuracy also reads answers set off from prose; statuses and "
                        "the paper's metrics count the strict reading")
    return report
