"""A key a server echoes back is never stored or shown: ``grep -r`` of the data home and the exports finds none."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_support import n2f
from sessions.redact import redact, remember
from stub_openai import running_stub

KEYS = ("gw-live-7f3a9c1e5b2d4f60aa", "sk-proj-Zq8xT2vLm9Rk4Wn7Yp3Jc6Hd1Fs5Ga0")  # a gateway's own shape, OpenAI's


def grep(key: str, *where: Path) -> str:
    """What ``grep -r`` (the tool itself, not our reading of the files) finds of ``key``."""
    found = subprocess.run(["grep", "-r", "-a", "-F", key, *map(str, where)], capture_output=True, text=True)
    return found.stdout


@pytest.mark.parametrize("key", KEYS)
def test_a_key_echoed_in_a_401_is_in_no_file_and_no_output(key, n2f_home, tmp_path):
    env = {"OPENAI_API_KEY": key}
    with running_stub(["echo_key"] * 20) as stub:
        run = n2f("run", "dedc", "-n", "3", "-m", f"openai:stub-model@{stub.base_url}", "--name", "k", "--json", "-q",
                  env=env)
        assert stub.chat_requests() and key in stub.chat_requests()[0]["headers"]["authorization"], "the key was sent"
    assert run.returncode == 1 and json.loads(run.stdout)["counts"]["error"] == 3
    outputs = [run.stdout + run.stderr]
    for args in (("show", "k", "1"), ("show", "k", "1", "--json"), ("report", "k", "--json"), ("runs", "--json"),
                 ("export", "k", "--format", "csv", "-o", str(tmp_path / "k.csv")),
                 ("export", "k", "--format", "jsonl", "--annotations", "-o", str(tmp_path / "k.jsonl"))):
        result = n2f(*args, env=env)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout + result.stderr)
    shown = json.loads(n2f("show", "k", "1", "--json", env=env).stdout)
    assert "HTTP 401" in shown["record"]["error"] and "[redacted]" in shown["record"]["error"]
    assert grep(key, n2f_home, tmp_path / "k.csv", tmp_path / "k.jsonl") == ""
    assert not any(key in text or key[:12] in text for text in outputs)


def test_redaction_removes_the_configured_key_and_key_shaped_tokens():
    remember("my-gateway-secret-42")
    text = ("bad key my-gateway-secret-42; Incorrect API key provided: sk-abc123def456ghi789. "
            "Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9 api_key=hunter2hunter2")
    assert redact(text) == ("bad key [redacted]; Incorrect API key provided: sk-[redacted] "
                            "Authorization: [redacted] api_key=[redacted]")
    assert redact("the task-list was skipped") == "the task-list was skipped"
