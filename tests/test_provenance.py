"""A run records what reproduces it (revision, dataset file hash, OS and Python, cache counts), and the report shows it."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import partial
from pathlib import Path

import pytest

from official_data import DATA_ROOT
from sessions.store.runs import RunStore
from stub_openai import running_stub
from cli_support import n2f as cli_n2f

ROOT = Path(__file__).resolve().parents[1]


n2f = partial(cli_n2f, check=True)


@pytest.mark.needs_data
def test_meta_records_the_revision_the_dataset_hash_and_the_machine_and_the_report_shows_them():
    dataset = DATA_ROOT / "dedc" / "4_to_4_shot3.jsonl"
    n2f("run", "dedc", "-s", f"dataset={dataset}", "-n", "6", "--name", "official", "-q")
    provenance = RunStore.open("official").meta["provenance"]
    assert provenance["dataset_sha256"] == {"dataset": hashlib.sha256(dataset.read_bytes()).hexdigest()}
    assert provenance["platform"]["python"] == platform.python_version()
    assert provenance["platform"]["os"] == platform.system()
    assert provenance["cache"] == {"enabled": False, "replies": 6, "from_cache": 0}
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert provenance["revision"]["commit"] == head.stdout.strip()

    assert json.loads(n2f("report", "official", "--json").stdout)["provenance"] == provenance
    shown = " ".join(l.strip("│ ") for l in n2f("report", "official").stdout.split("╰")[0].splitlines())
    line = shown[shown.index("provenance"):]  # the head's row, folded at the panel's width
    assert f"dataset sha256 {provenance['dataset_sha256']['dataset'][:12]}" in line
    assert f"Python {platform.python_version()}" in line


def test_the_cache_counts_say_how_many_replies_came_from_the_cache():
    with running_stub() as stub:
        model = f"openai:stub-model@{stub.base_url}"
        n2f("run", "dedc", "-n", "5", "-m", model, "--name", "first", "-q")
        n2f("run", "dedc", "-n", "5", "-m", model, "--name", "again", "-q")
        asked = len(stub.chat_requests())
    assert RunStore.open("first").meta["provenance"]["cache"] == {"enabled": True, "replies": 5, "from_cache": 0}
    assert RunStore.open("again").meta["provenance"]["cache"] == {"enabled": True, "replies": 5, "from_cache": 5}
    assert asked == 5  # the second run asked the server nothing
