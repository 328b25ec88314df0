"""The config file: the SDK's key names, prices, and one clear error for a key nobody reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessions.config import Config, Price, load_config
from sessions.errors import InputError


def write(text: str) -> Path:
    path = Path(os.environ["N2F_HOME"], "config.toml")
    path.write_text(text)
    return path


def test_no_file_is_the_defaults():
    assert load_config() == Config()


def test_every_known_key_is_read():
    write("""
model = "openai:gpt-4o-mini"
concurrency = 4

[openai]
base_url = "https://example.com/v1"
api_key = "sk-x"
organization = "org-1"
project = "proj-1"
deadline = 30
attempt_timeout = 10.5
max_retries = 2
transport = "httpx"
azure_endpoint = "https://me.openai.azure.com"
azure_deployment = "dep"
api_version = "2024-10-21"

[prices."gpt-4o-mini"]
input = 0.15
output = 0.6
""")
    config = load_config()
    assert (config.default_model, config.concurrency) == ("openai:gpt-4o-mini", 4)
    assert (config.openai_base_url, config.openai_api_key, config.openai_organization, config.openai_project) == (
        "https://example.com/v1", "sk-x", "org-1", "proj-1")
    assert (config.openai_deadline, config.openai_attempt_timeout, config.openai_max_retries) == (30.0, 10.5, 2)
    assert config.openai_transport == "httpx"
    assert (config.azure_endpoint, config.azure_deployment, config.azure_api_version) == (
        "https://me.openai.azure.com", "dep", "2024-10-21")
    assert config.price_for("openai:gpt-4o-mini", "gpt-4o-mini") == Price(0.15, 0.6)
    assert config.price_for("openai:other", "other") is None


def test_a_price_by_model_text_comes_first():
    write('[prices."openai:m@http://box:8000/v1"]\ninput = 1\noutput = 2\n[prices.m]\ninput = 3\n')
    config = load_config()
    assert config.price_for("openai:m@http://box:8000/v1", "m") == Price(1.0, 2.0)
    assert config.price_for("openai:m", "m") == Price(3.0, 0.0)
    assert Price(0.15, 0.6).cost(1_000_000, 500_000) == pytest.approx(0.45)  # 0.15 + 0.30 US$


@pytest.mark.parametrize("text, message", [
    ("[openai]\ndeadlin = 5\n", "unknown key 'openai.deadlin' (known: base_url, api_key, organization, project, deadline,"),
    ("modle = 'sim'\n", "unknown key 'modle' (known: model, concurrency, annotator, [openai], [prices], [cache], [sparql])"),
    ("[prices.m]\nprompt = 1\n", "unknown key 'prices.m.prompt' (known: input, output)"),
    ("[openai]\ndeadline = 'soon'\n", "openai.deadline must be a number"),
    ("concurrency = 2.5\n", "concurrency must be an integer"),
    ("[openai]\ntransport = 'curl'\n", "openai.transport must be one of aiohttp, httpx"),
    ("[openai]\ndeadline = 0\n", "must be positive"),
    ("openai = 3\n", "openai must be a table"),
    ("[openai\n", "is not valid TOML"),
])
def test_bad_config_is_one_clear_error(text, message):
    path = write(text)
    with pytest.raises(InputError) as info:
        load_config()
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)
