"""Where the official data and the papers are: ``../shared`` beside the checkout (see its data/README.md).

Tests that read them carry ``@pytest.mark.needs_data``; without ``../shared/data`` they skip
with one reason (conftest.py) instead of erroring.
"""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA_ROOT = SHARED / "data"
PAPERS = SHARED / "papers"
MISSING_REASON = "needs the official data: ../shared/data beside the checkout (see shared/data/README.md)"


def data_present() -> bool:
    return DATA_ROOT.is_dir() and PAPERS.is_dir()
