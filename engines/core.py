"""Shared types of the engine contract.

Every engine speaks in these types so that the runner, the store, the CLI and the
inspector can treat all benchmark families alike. Everything here is plain data that
round-trips through JSON: runs are stored, replayed and re-scored from these shapes.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, Mapping, Sequence, TypeVar, get_args, overload

Status = Literal["correct", "wrong", "unparseable", "scorer_error", "error"]  # error: the infrastructure failed (resume)
STATUSES: tuple[Status, ...] = get_args(Status)
SCORER_ERROR: Final = "scorer_error"  # the engine failed to judge the item: rescore judges it again
UNJUDGED: tuple[Status, ...] = ("error", SCORER_ERROR)  # not judgements of the model: left out of accuracy and the tables


class EngineError(Exception):
    """Base of the errors an engine raises on bad input (mapped to exit status 2)."""


class SettingsError(EngineError):
    """A setting is unknown, malformed or out of range."""


class DataError(EngineError):
    """A dataset file is missing or not in the expected format."""


# --------------------------------------------------------------------------- items

T = TypeVar("T")


class OnDemand(Sequence[T], Generic[T]):
    """A sequence whose elements are made (or read) only when asked for, one at a time.

    Subclasses give ``__len__`` and ``element(index)`` for 0 <= index < len; slices and
    negative indices work as for a list.
    """

    def element(self, index: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self.element(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.element(index)


@dataclass(slots=True)
class Item:
    """One benchmark item: everything needed to prompt a model and judge its answer."""

    id: str
    engine: str
    inputs: dict[str, Any]
    gold: dict[str, Any]
    meta: Mapping[str, Any] = field(default_factory=dict)  # read-only once made (brief readings share it)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "engine": self.engine, "inputs": self.inputs, "gold": self.gold, "meta": dict(self.meta)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Item":
        try:
            return cls(
                id=str(data["id"]),
                engine=str(data["engine"]),
                inputs=dict(data["inputs"]),
                gold=dict(data["gold"]),
                meta=dict(data.get("meta") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"not an item (needs id, engine, inputs, gold): {exc}") from None


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Step:
    """One call the runner must make for an item.

    ``kind="model"`` sends ``messages`` to the model. ``kind="tool"`` asks the sessions
    layer to run a side effect the engine may not do itself (execute a program in a
    sandbox, run a SPARQL query); ``tool`` names it and ``payload`` carries its input.
    Either way the step's output is a string appended to the item's outputs.
    """

    name: str
    messages: tuple[Message, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    kind: str = "model"
    tool: str = ""
    payload: Mapping[str, Any] = field(default_factory=dict)
    template: str = ""  # name of the prompt template this step was built from

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "messages": [m.to_json() for m in self.messages],
            "params": dict(self.params),
            "tool": self.tool,
            "payload": dict(self.payload),
            "template": self.template,
        }


# ------------------------------------------------------------------------ verdicts


@dataclass(frozen=True)
class TagType:
    """One entry of an engine's error taxonomy, offered to the tagger and the annotator."""

    code: str
    label: str
    description: str
    group: str = ""
    key: str = ""  # the annotator's key for the code in the tag dialog (a digit or capital; "" gives one in order)


@dataclass(slots=True)
class Tag:
    code: str
    label: str
    evidence: str = ""
    source: str = "auto"  # auto | manual

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "label": self.label, "evidence": self.evidence, "source": self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Tag":
        return cls(
            code=str(data["code"]),
            label=str(data.get("label", data["code"])),
            evidence=str(data.get("evidence", "")),
            source=str(data.get("source", "auto")),
        )


@dataclass
class View:
    """A pane of the inspector, as data.

    Data shapes by kind: text/code -> str; key-value -> list of [key, value];
    table -> {"columns": [...], "rows": [[...]...]}; tree -> {"label", "children"};
    diff -> {"left", "right", "left_title", "right_title"}; grid -> list of rows of
    str; chart -> {"series": {label: number}, "unit": str}.
    """

    kind: str
    title: str
    data: Any

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "data": self.data}


@dataclass
class Verdict:
    status: Status
    scores: dict[str, float] = field(default_factory=dict)
    tags: list[Tag] = field(default_factory=list)
    views: list[View] = field(default_factory=list)
    error: str = ""  # status scorer_error: the exception the engine raised judging the item

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def to_json(self, with_views: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "status": self.status,
            "correct": self.correct,
            "scores": dict(self.scores),
            "tags": [t.to_json() for t in self.tags],
        }
        if self.error:
            data["error"] = self.error
        if with_views:
            data["views"] = [v.to_json() for v in self.views]
        return data


# ------------------------------------------------------------------------- reports


@dataclass
class Table:
    name: str  # named after the paper's table, e.g. "Table 1"
    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "columns": self.columns, "rows": self.rows, "note": self.note}


@dataclass
class Chart:
    name: str
    title: str
    series: dict[str, float]
    unit: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "series": self.series, "unit": self.unit}


@dataclass
class Report:
    metrics: dict[str, float]
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "metrics": self.metrics,
            "tables": [t.to_json() for t in self.tables],
            "charts": [c.to_json() for c in self.charts],
            "notes": self.notes,
        }


@dataclass(slots=True)
class ItemResult:
    """What a run holds for one item: the engine needs these to build its report."""

    item: Item
    status: Status
    scores: dict[str, float]
    tags: list[Tag]
    outputs: list[str] = field(default_factory=list)


@dataclass
class RunResults:
    """One run as the engine sees it when reporting (optionally against other runs)."""

    name: str
    model: str
    settings: Any
    results: Sequence[ItemResult]  # each item's own, or ``engines.reporting.Rows`` of equal ones


# ------------------------------------------------------------------------ settings

STRICT, LENIENT = "strict", "lenient"


def extract_field() -> Any:
    """The ``extract`` setting every engine with a choice of reading shares (``-s extract=lenient``).

    ``strict`` (the default) reads a reply as the paper's authors did; ``lenient`` also tries
    what the engine's docstring names (a fenced block, a whole line...) for diagnosis. The
    item's status is always the strict verdict, the one the paper's figures count; the
    lenient one is reported beside it (``Engine.score``).
    """
    return field(default=STRICT, metadata={"choices": (STRICT, LENIENT),
                 "help": "strict: read replies as the paper's authors did (what its metrics count); "
                         "lenient: also report a lenient reading, for diagnosis"})



def settings_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init]


def _resolve_type(cls: type, f: dataclasses.Field[Any]) -> Any:
    hints = typing.get_type_hints(cls)
    return hints.get(f.name, str)


def _coerce(name: str, raw: str, tp: Any, choices: Sequence[str] | None) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if raw.lower() in ("", "none"):
            return None
        tp = args[0]
    if tp is bool:
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"setting {name}: expected true or false, got {raw!r}")
    if tp is int:
        try:
            return int(raw)
        except ValueError:
            raise SettingsError(f"setting {name}: expected an integer, got {raw!r}") from None
    if tp is float:
        try:
            number = float(raw)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):  # nan slips past every range check; inf is no setting's value
            raise SettingsError(f"setting {name}: expected a finite number, got {raw!r}")
        return number
    if choices and raw not in choices:
        raise SettingsError(f"setting {name}: {raw!r} is not one of {', '.join(choices)}")
    return raw


def parse_settings(cls: type, pairs: Mapping[str, str] | Sequence[str]) -> Any:
    """Build a frozen settings dataclass from ``key=value`` strings (or a mapping).

    Field metadata may carry ``choices`` (allowed string values), ``min``/``max``
    (numeric bounds) and ``help``. Unknown keys and bad values raise SettingsError
    with a message naming the key and what was expected.
    """
    if not isinstance(pairs, Mapping):
        mapping: dict[str, str] = {}
        for pair in pairs:
            if "=" not in pair:
                raise SettingsError(f"setting {pair!r}: expected KEY=VALUE")
            key, value = pair.split("=", 1)
            mapping[key.strip()] = value.strip()
        pairs = mapping
    known = {f.name: f for f in settings_fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in pairs.items():
        if key not in known:
            raise SettingsError(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
        f = known[key]
        value = raw if not isinstance(raw, str) else _coerce(key, raw, _resolve_type(cls, f), f.metadata.get("choices"))
        lo, hi = f.metadata.get("min"), f.metadata.get("max")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if lo is not None and value < lo or hi is not None and value > hi:
                raise SettingsError(f"setting {key}: {value} is outside {lo}..{hi}")
        values[key] = value
    return cls(**values)


def describe_settings(cls: type) -> list[dict[str, Any]]:
    """Each setting as ``n2f settings`` lists it: name, type, default, allowed values and meaning,
    read from the dataclass and its field metadata (the same ``parse_settings`` checks)."""
    rows = []
    for f in settings_fields(cls):
        tp = _resolve_type(cls, f)
        choices, lo, hi = f.metadata.get("choices"), f.metadata.get("min"), f.metadata.get("max")
        if choices:
            allowed = " | ".join(choices)
        elif tp is bool:
            allowed = "true | false"
        elif lo is not None or hi is not None:
            allowed = f"{'' if lo is None else lo}..{'' if hi is None else hi}"
        else:
            allowed = "any"
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        rows.append({"name": f.name, "type": getattr(tp, "__name__", str(tp)), "default": default,
                     "allowed": allowed, "help": f.metadata.get("help", "")})
    return rows


def settings_to_json(settings: Any) -> dict[str, Any]:
    return {f.name: getattr(settings, f.name) for f in settings_fields(type(settings))}


def settings_from_json(cls: type, data: Mapping[str, Any]) -> Any:
    known = {f.name for f in settings_fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in known})


# ----------------------------------------------------------------------- simulator


@dataclass(frozen=True)
class SimOptions:
    """Options of the offline simulator (``sim:error_rate=0.3,error=omission``)."""

    error_rate: float = 0.3
    error: str = ""  # force one tag code
    seed: int = 0
