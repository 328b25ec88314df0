"""Token usage and cost: per item from its steps, totals per run, and the budget a run may stop at.

Usage is what the model server reported for each step (``prompt_tokens``,
``completion_tokens``), or what the local model counted; steps without usage (tools,
the simulator) add nothing. Cost needs a price per million tokens from the config's
``[prices]`` table: without one a run's cost is unknown (None), never zero.

A reply served from the response cache cost nothing: its tokens are counted apart
(``cached_tokens``), never as spent tokens or cost, and never against a budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from sessions.config import Price


def _tokens(usage: Mapping[str, Any] | None) -> int:
    usage = usage or {}
    return int(usage.get("prompt_tokens", 0) or 0) + int(usage.get("completion_tokens", 0) or 0)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # the tokens of replies served from the cache: not spent

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: Mapping[str, Any] | None, sign: int = 1) -> None:
        if not usage:
            return
        self.prompt_tokens += sign * int(usage.get("prompt_tokens", 0) or 0)
        self.completion_tokens += sign * int(usage.get("completion_tokens", 0) or 0)
        self.cached_tokens += sign * int(usage.get("cached_tokens", 0) or 0)

    def add_steps(self, steps: Iterable[Mapping[str, Any]] | None, sign: int = 1) -> None:
        for step in steps or []:
            if step.get("cached"):
                self.cached_tokens += sign * _tokens(step.get("usage"))
            else:
                self.add(step.get("usage"), sign)

    def add_record(self, record: Mapping[str, Any] | None, sign: int = 1) -> None:
        """A full record's steps, or a stored summary's totals (``sessions.store.results_log.summary_of``)."""
        record = record or {}
        if "steps" in record:
            self.add_steps(record["steps"], sign)
        else:
            self.add(record.get("usage"), sign)

    def cost(self, price: Price | None) -> float | None:
        return price.cost(self.prompt_tokens, self.completion_tokens) if price is not None else None

    def to_json(self, price: Price | None = None) -> dict[str, Any]:
        cost = self.cost(price)
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "cost": None if cost is None else round(cost, 6),
        }


def run_usage(records: Iterable[Mapping[str, Any]]) -> Usage:
    """The sum over stored records (full ones or their summaries)."""
    usage = Usage()
    for record in records:
        usage.add_record(record)
    return usage


@dataclass(frozen=True)
class Budget:
    """Where a run stops taking new items: a token total and/or a cost (which needs a price)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    price: Price | None = None

    def __bool__(self) -> bool:
        return self.max_tokens is not None or self.max_cost is not None

    def reached(self, usage: Usage) -> bool:
        if self.max_tokens is not None and usage.total_tokens >= self.max_tokens:
            return True
        cost = usage.cost(self.price)
        return self.max_cost is not None and cost is not None and cost >= self.max_cost
