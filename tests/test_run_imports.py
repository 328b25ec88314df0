"""A run pays only for what its items use (issue 28, "a start that pays only for the command used").

A dedc run on the simulator sends no HTTP request and no SPARQL query, so it must not load
aiohttp (0.15 s of the 0.6 s a small run cost) or the SPARQL grammar (lark); a compost run
does load the grammar, for the read-only guard of every query.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = ("import sys\nfrom n2f_tui.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "heavy = ('aiohttp', 'openai', 'httpx', 'lark', 'engines.sparql.guard')\n"
         "print('LOADED', code, [m for m in heavy if m in sys.modules])\n")


def loaded_by_run(*args: str) -> str:
    """What of the heavy modules a fresh interpreter holds after ``n2f run ARGS -q``, with the exit status."""
    done = subprocess.run([sys.executable, "-c", PROBE, "run", *args, "-q"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == 0, done.stderr
    return done.stdout.rsplit("LOADED", 1)[1].strip()


def test_a_sim_run_that_sends_no_request_loads_no_http_client_and_no_sparql_grammar():
    assert loaded_by_run("dedc", "-m", "sim", "-n", "3") == "0 []"


@pytest.mark.slow
def test_a_compost_run_loads_the_sparql_grammar_for_its_guard_and_still_no_http_client():
    assert loaded_by_run("compost", "-m", "sim", "-n", "3") == "0 ['lark', 'engines.sparql.guard']"
