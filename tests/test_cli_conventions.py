"""The command-line conventions people expect, through the real entry point: --version, completion,
settings, examples in every help, hint lines whole on a pipe, reading whatever the config says."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from cli_support import n2f as cli_n2f, n2f_process
from engines import get_engine

ROOT = Path(__file__).resolve().parents[1]


n2f = partial(cli_n2f, check=True)


def test_version_names_the_package_version_and_the_checkout_s_revision():
    from importlib import metadata

    printed = n2f("--version").stdout.strip()
    assert printed.startswith(f"n2f {metadata.version('n2f-tui')}")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout: no revision to compare with")
    assert f"(git {head.stdout.strip()[:10]}" in printed


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_script_is_valid_for_its_shell(shell, tmp_path):
    script = n2f("completion", shell).stdout
    assert "n2f" in script and "_ARGCOMPLETE" in script
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here to check the script's syntax")
    path = tmp_path / f"n2f.{shell}"
    path.write_text(script, encoding="utf-8")
    checked = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_n2f_completion_bash_passes_bash_n():
    script = n2f("completion", "bash").stdout
    checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def completions(tmp_path: Path, line: str) -> list[str]:
    """What the shell scripts get back from ``n2f`` for the words typed so far (argcomplete's protocol,
    in a process of its own: argcomplete ends the process it answers from)."""
    answer = tmp_path / "answer"
    n2f_process(check=True, env={"_ARGCOMPLETE": "1", "COMP_LINE": line, "COMP_POINT": str(len(line)), "_ARGCOMPLETE_IFS": "\n",
             "_ARGCOMPLETE_STDOUT_FILENAME": str(answer)})
    return answer.read_text(encoding="utf-8").split()


def test_completion_offers_commands_and_engine_names(tmp_path):
    assert {"run", "runs", "rescore", "report", "resume"} <= set(completions(tmp_path, "n2f r"))
    assert completions(tmp_path, "n2f run de") == ["dedc"]
    assert set(completions(tmp_path, "n2f settings r")) == {"robogrid", "rgp"}


def test_settings_lists_every_setting_with_type_default_allowed_values_and_meaning():
    fields = {f.name: f for f in dataclasses.fields(get_engine("dedc").settings_type)}
    rows = {r["name"]: r for r in json.loads(n2f("settings", "dedc", "--json").stdout)}
    assert set(rows) == set(fields)
    for name, field in fields.items():
        assert rows[name]["default"] == field.default and rows[name]["help"] == field.metadata["help"]
    assert rows["gap"]["allowed"] == "base | 0 | 100" and rows["gap"]["type"] == "str"
    assert rows["shots"]["allowed"] == "1..8" and rows["shots"]["type"] == "int"
    assert rows["primitives"]["allowed"] == "true | false"
    table = n2f("settings", "dedc").stdout
    assert all(name in table for name in fields)
    assert "demonstrations per item (paper: 3)" in table
    refused = n2f("settings", "nope", check=False)
    assert refused.returncode == 2 and "known engines: dedc" in refused.stderr


def command_paths(parser, path=()):
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from command_paths(child, (*path, name))


def test_every_command_s_help_ends_with_examples():
    from n2f_tui.cli import build_parser

    paths = list(command_paths(build_parser()))
    assert len(paths) > 20
    for path, parser in paths:
        lines = parser.format_help().rstrip().splitlines()
        start = lines.index("examples:")
        assert lines[start + 1:] and all(line.startswith("  n2f") for line in lines[start + 1:]), path
    printed = n2f("export", "--help").stdout.rstrip().splitlines()
    assert "examples:" in printed and printed[-1].startswith("  n2f export")


def test_hint_lines_stay_whole_on_a_pipe():
    name = "a-run-named-at-length-so-that-a-hint-naming-it-passes-80-cols"
    n2f("run", "dedc", "-n", "3", "--name", name, "-q")
    hint = n2f("rescore", name).stderr.strip().splitlines()
    assert len(hint) == 1 and len(hint[0]) > 80 and name in hint[0]


def test_read_only_commands_work_whatever_the_config_says_about_running(n2f_home):
    n2f("run", "dedc", "-n", "4", "--name", "before", "-q")
    (n2f_home / "config.toml").write_text('concurrency = "eight"\n', encoding="utf-8")
    runs = n2f("runs", "--json")
    assert [r["name"] for r in json.loads(runs.stdout)] == ["before"]
    assert "concurrency must be an integer" in runs.stderr and len(runs.stderr.strip().splitlines()) == 1
    assert json.loads(n2f("report", "before", "--json").stdout)["n"] == 4
    assert json.loads(n2f("show", "before", "1", "--json").stdout)["record"]
    refused = n2f("run", "dedc", "-n", "1", check=False)  # running does need it
    assert refused.returncode == 2 and "concurrency must be an integer" in refused.stderr


def test_the_top_level_help_pays_for_no_command_group():
    """``n2f --help`` lists every command from the light table and imports none of their groups: no
    engine, no store, no rich (0.33 s of CPU before, 7x a bare interpreter; the figure is in the notes)."""
    probe = ("import sys\nfrom n2f_tui.cli import main\n"
             "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
             "heavy = ('engines', 'sessions.api', 'sessions.store.runs', 'rich', 'textual', 'importlib.metadata', 'asyncio')\n"
             "print('LOADED', [m for m in heavy if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    help_text, loaded = done.stdout.rsplit("LOADED", 1)
    assert loaded.strip() == "[]"
    from n2f_tui.commands import SUMMARIES

    for command, (_, line) in SUMMARIES.items():
        assert command in help_text and line.split()[0] in help_text


def test_showing_an_item_loads_nothing_that_prepares_or_runs_a_run(n2f_home):
    """``n2f show RUN 1`` reads one item: the facade imports its names when used, so no backend
    limit, asyncio, runner or run preparation is loaded (its CPU figure is in issue 28's note)."""
    n2f("run", "dedc", "-n", "2", "--name", "few", "-q")
    probe = ("import sys\nfrom n2f_tui.cli import main\n"
             "code = main(['show', 'few', '1'])\n"
             "heavy = ('asyncio', 'sessions.run.prepare', 'sessions.run.runner', 'sessions.backends.limits', 'textual')\n"
             "print('LOADED', code, [m for m in heavy if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    shown, loaded = done.stdout.rsplit("LOADED", 1)
    assert "few item 1/2" in shown and loaded.split() == ["0", "[]"], loaded
