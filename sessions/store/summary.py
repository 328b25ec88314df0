"""A stored run in a few figures: what a list of runs shows for each (home screen, ``n2f runs``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from engines.core import SCORER_ERROR
from sessions.run.usage import Usage, run_usage


@dataclass(frozen=True)
class RunSummary:
    """Items judged, items whose last attempt hit an infrastructure error, accuracy over the judged, tokens."""

    done: int = 0
    errors: int = 0
    accuracy: float | None = None
    usage: Usage = field(default_factory=Usage)

    @property
    def finished(self) -> int:
        """Items with a result of any status."""
        return self.done + self.errors


def summarize(summaries: Mapping[int, Mapping[str, Any]]) -> RunSummary:
    """The figures of a run from its result summaries (item index -> summary)."""
    judged = [s for s in summaries.values() if s.get("status") != "error"]
    correct = sum(s.get("status") == "correct" for s in judged)
    scored = len(judged) - sum(s.get("status") == SCORER_ERROR for s in judged)  # a scorer failure is not a mistake
    return RunSummary(done=len(judged), errors=len(summaries) - len(judged),
                      accuracy=correct / scored if scored else None, usage=run_usage(summaries.values()))
