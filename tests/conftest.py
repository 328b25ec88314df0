"""Every test runs against a private, empty data home and no real model credentials."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def n2f_home(tmp_path, monkeypatch):
    home = tmp_path / "n2f-home"
    home.mkdir()
    monkeypatch.setenv("N2F_HOME", str(home))
    monkeypatch.setenv("LOGNAME", "tester")  # the default annotator: the same name on every machine
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return home
