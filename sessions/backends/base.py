"""The model-backend boundary: one request per engine step, one completion back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from engines.core import Item, Step
from sessions.redact import redact

if TYPE_CHECKING:
    from sessions.backends.limits import AdaptiveLimit  # a run's limit; reading commands never load asyncio


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``-m`` value: ``sim:error_rate=0.3``, ``oracle``, ``replay:FILE``, ``openai:MODEL@URL``."""

    kind: str  # sim | oracle | replay | openai
    name: str = ""  # model name (openai) or file path (replay)
    base_url: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        head = self.kind if not self.name else f"{self.kind}:{self.name}"
        if self.base_url:
            head += f"@{self.base_url}"
        if self.options:
            head += ("," if self.name or self.base_url else ":") + ",".join(f"{k}={v}" for k, v in self.options.items())
        return head


@dataclass(frozen=True)
class CallRequest:
    item: Item
    step: Step
    step_index: int
    outputs: tuple[str, ...]
    attempt: int = 0
    # When set, the backend streams and calls it with each text delta as it arrives;
    # when None it may use a non-streaming request.
    on_text: Callable[[str], None] | None = field(default=None, compare=False)


@dataclass
class Completion:
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    latency: float = 0.0
    cached: bool = False
    finish_reason: str = ""  # "stop", "length", ... as the server or llama.cpp reports it; "" when unknown
    served_model: str = ""  # the model id the server says answered (a name may point at a new deployment)
    fingerprint: str = ""  # the reply's ``system_fingerprint``, when the server sends one


class BackendError(Exception):
    """An infrastructure failure (network, timeout, server error, malformed reply).

    Such items end in status ``error``: they are retried or left for ``resume`` and
    never counted as model mistakes. The message is redacted (``sessions.redact``): it is
    stored with the item and shown, and servers echo keys.
    """

    def __init__(self, message: str, transient: bool = True):
        super().__init__(redact(message))
        self.transient = transient


class Backend(ABC):
    spec: ModelSpec
    server_slots: int | None = None  # requests the server says it serves at once (llama.cpp), known after preflight

    @abstractmethod
    async def complete(self, request: CallRequest) -> Completion:
        """Answer one step; raise BackendError on infrastructure failure."""

    async def preflight(self) -> None:
        """Check the backend is usable before a run starts; raise InputError if not."""

    def use_limit(self, limit: AdaptiveLimit) -> None:
        """Send calls through the run's adaptive concurrency limit; backends without a server need none."""

    def describe(self) -> dict[str, Any]:
        """What a run records about the model: never a key."""
        return {"kind": self.spec.kind, "model": self.spec.text}

    async def aclose(self) -> None:
        """Release connections."""
