"""Figures with their intervals as the reports, the CLI and the screens print them."""

from __future__ import annotations

from typing import Any


def figure(value: float | None, ci: Any, percent: bool = False) -> str:
    """``0.47 (0.15-0.76)``; percentages as ``73.3 (56.7-86.7)``; ``-`` when undefined."""
    if value is None:
        return "-"
    scale, digits = (100, 1) if percent else (1, 2)
    text = f"{value * scale:.{digits}f}"
    return text + (f" ({ci[0] * scale:.{digits}f}-{ci[1] * scale:.{digits}f})" if ci else "")
