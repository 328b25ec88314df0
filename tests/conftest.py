"""Every test runs against a private, empty data home and no real model credentials.

The inspector's tests run without animations (Textual's ``animation_level`` "none"): a smooth
scroll or fade ends on its first frame, at the place it would end anyway, so a test checks the
same end state without waiting out the frames (a pilot pause per frame, 20 ms at least). The
new-run form's walk through every field keeps them on, where scrolling into view is the point.

``@pytest.mark.needs_data`` marks a test that reads the official data (``official_data``);
it skips with one reason when ``../shared/data`` is not beside the checkout.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import textual.constants

from official_data import DATA_ROOT, MISSING_REASON, data_present

textual.constants.TEXTUAL_ANIMATIONS = "none"  # read by every App at its creation


def pytest_sessionfinish(session: pytest.Session) -> None:
    """One full collection, then the survivors frozen: pytest's cleanup then collects five times
    more to catch unraisable exceptions at exit, and each of those walked the worker's whole heap
    (3.5 s of CPU after the inspector's tests). The garbage is still collected here, while the
    unraisable-exception hook is in place; the later passes only have nothing left to walk. Here,
    not at unconfigure: a worker is still inside its session, so xdist does not end it mid-pass
    (execnet interrupts a worker's main thread that goes on after it said it had finished)."""
    gc.collect()
    gc.freeze()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_data") and not data_present():
        pytest.skip(MISSING_REASON)


@pytest.fixture
def data_root() -> Path:
    """The official data folder (``official_data.DATA_ROOT``); the test skips without it."""
    if not data_present():
        pytest.skip(MISSING_REASON)
    return DATA_ROOT


@pytest.fixture(autouse=True)
def n2f_home(tmp_path, monkeypatch):
    home = tmp_path / "n2f-home"
    home.mkdir()
    monkeypatch.setenv("N2F_HOME", str(home))
    monkeypatch.setenv("LOGNAME", "tester")  # the default annotator: the same name on every machine
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return home
