"""A report's head and metrics as a person reads them: a label, one unit per number, the headline ones first.

Each engine names its metrics in its contract's ``metrics`` (its ``views.METRICS``, each an
``engines.contract.Metric``); a metric it does not name keeps its own name and is
shown as a plain number, so a new engine needs no code here. ``X_ci_low`` and ``X_ci_high`` are not figures
of their own: they are X's 95% interval, printed beside it in X's unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from rich.table import Table as RichTable

from engines import get_engine
from engines.core import EngineError
from n2f_tui.render import safe_text
from sessions.reports.figures import UNDEFINED, proportion
from n2f_tui.widgets.style import usage_line

INTERVAL = ("_ci_low", "_ci_high")


@dataclass(frozen=True)
class MetricLine:
    name: str
    label: str
    text: str  # the value with its unit (and interval)
    headline: bool


@lru_cache(maxsize=None)
def engine_metrics(engine: str) -> tuple[tuple[re.Pattern[str], str, str, bool], ...]:
    """The engine's metrics (its contract's ``metrics``) as (pattern, label, unit, headline), in its
    order; () for an engine this version does not know."""
    try:
        declared = get_engine(engine).parts.metrics
    except EngineError:
        return ()
    return tuple((re.compile("^" + re.escape(m.name).replace(r"\{\}", "([A-Za-z0-9]+)") + "$"), m.label, m.unit,
                  m.headline) for m in declared)


def formatted(value: float, unit: str) -> str:
    if unit == "fraction":
        return proportion(value)
    if unit == "percent":
        return proportion(value / 100)
    if unit == "count":
        return f"{value:,.0f}"
    if unit == "score":
        return f"{value:.3f}"
    return f"{value:.4g}" if abs(value) < 10_000 else f"{value:,.0f}"


def _describe(engine: str, name: str) -> tuple[int, str, str, bool]:
    """(order, label, unit, headline) of one metric; an unnamed one comes last as a plain number."""
    for order, (pattern, label, unit, headline) in enumerate(engine_metrics(engine)):
        match = pattern.match(name)
        if match:
            return order, label.format(*match.groups()), unit, headline
    return len(engine_metrics(engine)), name, "number", False


def figures(engine: str, metrics: Mapping[str, Any]) -> list[MetricLine]:
    """Every metric once (intervals folded into their figure), headline first, then in the engine's order."""
    out = []
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or any(name.endswith(s) and name[: -len(s)] in metrics
                                                        for s in INTERVAL):
            continue
        order, label, unit, headline = _describe(engine, name)
        text = formatted(float(value), unit)
        low, high = (metrics.get(name + s) for s in INTERVAL)
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            text = (proportion(float(value), (float(low), float(high))) if unit == "fraction" else
                    text + f" [{formatted(float(low), unit)}, {formatted(float(high), unit)}]")
        out.append((not headline, order, MetricLine(name, label, text, headline)))
    return [figure for *_, figure in sorted(out, key=lambda entry: (entry[0], entry[1]))]


def headline_line(engine: str, metrics: Mapping[str, Any], skip: tuple[str, ...] = ()) -> str:
    """The headline figures on one line (``skip``: names shown elsewhere), e.g. ``SVR 90.0%  BER 80.0%``."""
    return "  ".join(f"{f.label} {f.text}" for f in figures(engine, metrics) if f.headline and f.name not in skip)


def render_report_head(summary: dict[str, Any], run: str | None = None, provenance: bool = False) -> RichTable:
    """The report's head (``sessions.api.build_report``'s summary): what the run is and how it differs from
    the defaults, its items and accuracy, then every metric labelled, one unit per number, headline first.
    ``run`` names the run (default: its id, and its name if it has one); ``provenance`` adds what reproduces
    it (``n2f report``; the inspector's report leaves the machine's details out)."""
    head = RichTable.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    counts = ", ".join(f"{k} {v}" for k, v in summary["counts"].items() if v)
    head.add_row("run", safe_text(run or summary["run"] + (f" ({summary['name']})" if summary.get("name") else "")))
    head.add_row("engine", safe_text(summary["engine"]))
    head.add_row("model", safe_text(summary["model"]))
    description = summary.get("description") or {}
    head.add_row("changes", safe_text(description.get("text", "defaults")
                                      + (f" (forked from {description['forked_from']})"
                                         if description.get("forked_from") else "")))
    head.add_row("items", safe_text(f"{summary['n']} ({counts})"))
    metrics = summary.get("metrics") or {}
    judged = sum(summary["counts"].get(k, 0) for k in ("correct", "wrong", "unparseable"))
    head.add_row("accuracy", safe_text(proportion(summary["accuracy"], summary.get("accuracy_ci")) if judged
                                       else f"{UNDEFINED} (no item judged yet)"))
    review = summary.get("review") or {}
    if review.get("reviewed"):
        people = ", ".join(review.get("annotators", []))
        head.add_row("review", safe_text(f"{review['reviewed']} item(s) reviewed ({people}), {review['settled']} settled, "
                                         f"{review['disputed']} disputed: tag counts are final tags"))
    usage = summary.get("usage") or {}
    if usage.get("total_tokens") or usage.get("cached_tokens"):
        head.add_row("usage", safe_text(usage_line(usage["prompt_tokens"], usage["completion_tokens"], usage["cost"])
                                        + " spent"))
    cache = summary.get("cache") or {}
    if cache.get("cached"):
        head.add_row("cache", f"{cache['cached']:,} of {cache['replies']:,} replies from the cache"
                              f" ({usage.get('cached_tokens', 0):,} tokens not spent again)")
    served = summary.get("served") or []
    if served:
        head.add_row("served by", safe_text(", ".join(
            s["model"] + (f" ({s['system_fingerprint']})" if s.get("system_fingerprint") else "") for s in served)))
    replies = summary.get("replies") or {}
    if replies.get("reported"):
        head.add_row("replies", f"{replies['truncated']} of {replies['reported']} cut by the cap "
                                f"(max_tokens={replies['max_tokens']})")
    if summary.get("sandbox"):
        head.add_row("sandbox", safe_text(summary["sandbox"]))
    if provenance and summary.get("provenance"):
        head.add_row("provenance", safe_text(provenance_text(summary["provenance"])))
    for figure in figures(summary["engine"], metrics):
        if figure.name != "accuracy":
            head.add_row(safe_text(figure.label), safe_text(figure.text))
    return head


def provenance_text(block: Mapping[str, Any]) -> str:
    """``git 72cecf8a1b · dataset sha256 3fa9c2d1e0b4 · Linux x86_64, Python 3.11.7 · cache 0 of 40 steps``."""
    revision = block.get("revision") or {}
    parts = [f"git {revision['commit'][:10]}{' modified' if revision.get('dirty') else ''}"
             if revision.get("commit") else "revision unknown"]
    parts += [f"{key} sha256 {digest[:12]}" for key, digest in (block.get("dataset_sha256") or {}).items()]
    machine = block.get("platform") or {}
    if machine:
        parts.append(f"{machine.get('os', '?')} {machine.get('machine', '')}, Python {machine.get('python', '?')}")
    cache = block.get("cache") or {}
    if cache.get("enabled"):
        parts.append(f"cache {cache.get('from_cache', 0)} of {cache.get('replies', 0)} replies")
    return " · ".join(parts)
