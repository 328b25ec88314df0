"""The ``n2f`` subcommands, one module per group; each adds its parsers and names its commands.

``SUMMARIES`` is every command with its group and the line ``n2f --help`` lists, in that order
(running, reading, upkeep, studies, about). It lives here, in a module that imports nothing, so
that ``n2f --help`` and each command pay only for their own group: ``n2f_tui.cli`` imports the
group of the command given and lists the others from this table.
"""

from __future__ import annotations

SUMMARIES: dict[str, tuple[str, str]] = {
    "run": ("running", "run a benchmark headless"),
    "items": ("running", "print the items as JSON lines"),
    "score": ("running", "score one item's outputs; prints the verdict as JSON"),
    "papers": ("reading", "the papers' published figures on record: table, setting, models, metrics"),
    "runs": ("reading", "list the runs in the store"),
    "report": ("reading", "a run's report: the paper's tables"),
    "show": ("reading", "one item of a run: prompt, output, verdict, views"),
    "export": ("reading", "export runs, one row per item (or an Inspect AI log of one run)"),
    "resume": ("upkeep", "finish a run that was cut off, retry items in status error"),
    "smoke": ("upkeep", "a small seeded sample of every engine through one model, one table"),
    "rescore": ("upkeep", "re-score stored outputs with the current scorer (no model calls)"),
    "bench": ("upkeep", "measure each engine's items/s and memory, and concurrency against a slow stub"),
    "cache": ("upkeep", "the response cache: what it holds, and clearing it"),
    "tui": ("upkeep", "the inspector (what bare `n2f` opens), optionally on one run"),
    "pack": ("study", "a run as one file for another machine (items, outputs, results, study, annotations)"),
    "unpack": ("study", "install a packed run into this home under the same run id"),
    "study": ("study", "a reproducible sample of a run's items for people to label"),
    "annotations": ("study", "move one person's annotation events between machines; settle labels"),
    "agreement": ("study", "agreement between annotators, adjudication queue, tagger quality"),
    "settings": ("about", "an engine's settings: type, default, allowed values, meaning"),
    "completion": ("about", "print the shell completion script for bash, zsh or fish"),
}
GROUPS = tuple(dict.fromkeys(group for group, _ in SUMMARIES.values()))


def summary(command: str) -> str:
    """The one-line help of ``command`` (its group's parser uses it as ``n2f --help`` does)."""
    return SUMMARIES[command][1]
