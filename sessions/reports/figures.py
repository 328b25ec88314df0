"""Figures with their intervals as the reports, the CLI and the screens print them."""

from __future__ import annotations

from typing import Any, Iterable

UNDEFINED = "—"


def proportion(value: float | None, ci: Any = None) -> str:
    """A proportion as every engine, screen and command prints it: ``70.0%``, with its interval
    ``70.0% (95% CI 54.6-81.9)``; ``—`` when undefined."""
    if value is None:
        return UNDEFINED
    text = f"{100 * value:.1f}%"
    return text + (f" (95% CI {100 * ci[0]:.1f}-{100 * ci[1]:.1f})" if ci else "")


def figure(value: float | None, ci: Any, percent: bool = False) -> str:
    """``0.47 (0.15-0.76)``; percentages as ``73.3 (56.7-86.7)``; ``—`` when undefined (its reason is
    printed once beside the table: ``undefined_note``)."""
    if value is None:
        return UNDEFINED
    scale, digits = (100, 1) if percent else (1, 2)
    text = f"{value * scale:.{digits}f}"
    return text + (f" ({ci[0] * scale:.{digits}f}-{ci[1] * scale:.{digits}f})" if ci else "")


def undefined_note(figures: Iterable[Any]) -> str:
    """``— kappa undefined: ...`` for the reasons behind the undefined figures among ``figures`` (objects with
    ``value`` and ``reason``), one line each; "" when every figure is defined."""
    reasons = dict.fromkeys(f.reason for f in figures if f.value is None and f.reason)
    return "".join(f"{UNDEFINED} {reason}\n" for reason in reasons)
