"""What a line of a run's index says of its record: the ``Summary`` lists, counts and ``resume`` read.

The index (``sessions.store.results_log``) holds one a record; the summary table
(``sessions.store.summary_table``) keeps them in columns.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, TypedDict

from engines.core import Status

from sessions.run.usage import Usage


class _Judged(TypedDict):
    status: Status
    scores: dict[str, float]
    tags: list[str]  # the tags' codes
    attempt: int


class Summary(_Judged, total=False):
    """One line of the index without its ``i``: what every record has, then what only some have
    (``at``/``len`` once it is on disk, ``legacy`` when it was read from an earlier version's file)."""

    usage: dict[str, int]
    replies: int
    cached: int
    finish_reasons: list[str]
    at: int
    len: int
    legacy: bool


def summary_of(record: Mapping[str, Any]) -> Summary:
    """What lists, filters, counts, token totals and ``resume`` need of a record, without its outputs and steps."""
    summary: Summary = {
        "status": record.get("status", "error"),
        "scores": record.get("scores", {}),
        "tags": [t["code"] for t in record.get("tags", [])],
        "attempt": int(record.get("attempt", 0)),
    }
    usage = Usage()
    usage.add_steps(record.get("steps", []))  # replies from the cache apart: they cost nothing
    if usage.prompt_tokens or usage.completion_tokens or usage.cached_tokens:
        summary["usage"] = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                            **({"cached_tokens": usage.cached_tokens} if usage.cached_tokens else {})}
    replies = [step for step in record.get("steps", []) if "tool" not in step]
    if replies:
        summary["replies"] = len(replies)
        cached = sum(1 for step in replies if step.get("cached"))
        if cached:
            summary["cached"] = cached
    reasons = [str(step["finish_reason"]) for step in record.get("steps", []) if step.get("finish_reason")]
    if reasons:
        summary["finish_reasons"] = reasons
    return summary


def finish_reasons(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each step's finish reason as recorded ("" where the backend reported none, and for tools)."""
    return [str(step.get("finish_reason", "")) for step in steps]
