"""Every test runs against a private, empty data home and no real model credentials.

``@pytest.mark.needs_data`` marks a test that reads the official data (``official_data``);
it skips with one reason when ``../shared/data`` is not beside the checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from official_data import DATA_ROOT, MISSING_REASON, data_present


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
