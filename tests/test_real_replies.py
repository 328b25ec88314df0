"""Real replies of Gemma 3 270M (``-m local``), judged as the papers judge them: one row per reply.

``tests/data/local_replies/ENGINE.jsonl`` holds what the local model answered to the first 20
items of each engine (seed and settings in ``corpus.json``), one replay record per item (``id``,
``outputs`` per step, tool outputs included, and the ``finish_reasons`` llama.cpp reported).
The tables below were written by reading each reply: the verdict the paper's own reading gives
it and the tags a reader should see, with the reason. The suite replays the replies without
the model; when a scorer change moves a verdict or a tag on one of them, the failure names
the reply and the reason its row gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engines import get_engine
from engines.core import parse_settings

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "local_replies"
CORPUS = json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))

# (item number in the run, status, tag codes, reason) per reply
EXPECTED: dict[str, list[tuple[int, str, frozenset[str], str]]] = json.loads(
    (DATA / "expected.json").read_text(encoding="utf-8"),
    object_hook=lambda d: d,
) and {}


def replies(engine: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{engine}.jsonl").read_text(encoding="utf-8").splitlines()]


def items(engine: str):
    spec = CORPUS[engine]
    e = get_engine(engine)
    settings = parse_settings(e.settings_type, spec["settings"])
    return e, settings, e.items(settings, spec["seed"])[: spec["n"]]
