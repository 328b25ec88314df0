"""Engines are plugins: a package installed beside n2f-tui is found through its ``n2f_tui.engines`` entry point.

The example package (tests/example_engine, the README's "Write your own engine") is installed
into a private site folder the way pip records an installed project: the package beside a
``NAME-VERSION.dist-info`` folder with ``METADATA`` and ``entry_points.txt`` (the packaging
spec "Recording installed projects"), the entry points read from the example's own
pyproject.toml. That needs no network and no build backend, and the subprocesses find it
through ``PYTHONPATH`` as they would in site-packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXAMPLE = Path(__file__).parent / "example_engine"


def record_installed(site: Path, name: str, version: str, entry_points: dict[str, dict[str, str]]) -> None:
    """The ``.dist-info`` folder pip writes for an installed project: its metadata and entry points."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) for group, entries in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")


def install_example(site: Path) -> None:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    shutil.copytree(EXAMPLE / "n2f_parity", site / "n2f_parity")
    record_installed(site, project["name"], project["version"], project["entry-points"])


def install_module(site: Path, dist: str, module: str, source: str, engine: str) -> None:
    """A one-module plugin package registering ``module:ENGINE`` as engine ``engine``."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    record_installed(site, dist, "0.1", {"n2f_tui.engines": {engine: f"{module}:ENGINE"}})


def n2f(site: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))}
    done = subprocess.run([sys.executable, "-m", "n2f_tui", *args], capture_output=True, text=True, timeout=300,
                          env=env)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def site(tmp_path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    return folder


def test_the_example_engine_installed_as_a_package_runs_reports_and_shows(site):
    install_example(site)
    run = json.loads(n2f(site, "run", "parity", "-m", "sim:error_rate=0.25", "--name", "par", "--json", "-q").stdout)
    assert run["engine"] == "parity" and run["n"] == 24
    counts = run["counts"]
    assert counts["correct"] + counts["wrong"] == 24 and 0 < counts["wrong"] < 24
    assert run["accuracy"] == pytest.approx(counts["correct"] / 24)
    assert run["tags"] == {"flipped": counts["wrong"]}

    report = json.loads(n2f(site, "report", "par", "--json").stdout)
    assert report["accuracy"] == run["accuracy"]
    assert report["paper"]["figures_on_record"] == 0 and report["paper"]["tables"] == []  # it offers no paper
    assert "Accuracy by ones" in n2f(site, "report", "par").stdout
    assert json.loads(n2f(site, "papers", "parity", "--json").stdout) == []
    assert {e["engine"] for e in json.loads(n2f(site, "papers", "--json").stdout)} == {
        "dedc", "logic", "robogrid", "rgp", "compost"}

    shown = json.loads(n2f(site, "show", "par", "1", "--json").stdout)
    assert shown["item"]["engine"] == "parity"
    assert shown["prompts"][0]["messages"][0]["content"].startswith("Is the number of ones in")
    assert shown["verdict"]["status"] == shown["record"]["status"]
    assert "parity" in n2f(site, "show", "par", "1").stdout
    assert [r["engine"] for r in json.loads(n2f(site, "runs", "--json").stdout)] == ["parity"]
    assert "count" in n2f(site, "settings", "parity").stdout

    always = json.loads(n2f(site, "run", "parity", "-m", "always:odd", "--json", "-q").stdout)  # the plugin's backend
    assert always["model"] == "always:odd" and always["usage"]["total_tokens"] == 2 * 24
    odd = [json.loads(line) for line in n2f(site, "items", "parity").stdout.splitlines() if '"odd"' in line]
    assert always["counts"]["correct"] == len(odd) and always["engine"] == "parity"
    dedc = json.loads(n2f(site, "run", "dedc", "-n", "3", "-m", "always:x", "--json", "-q").stdout)
    assert dedc["counts"]["unparseable"] + dedc["counts"]["wrong"] == 3  # any engine, any registered backend


async def test_the_inspector_shows_the_example_engine_s_detail_and_report(site, monkeypatch):
    import engines
    from n2f_tui.widgets.detail import DetailView
    from tui_support import detail_shown, inspect_run, make_run, report_text

    install_example(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(engines, "_loaded", None)  # list the engines again, the plugin among them
    assert engines.engine_names()[-1] == "parity" and engines.problems() == []
    await make_run("par", limit=12, engine="parity", model="sim:error_rate=0.3")
    async with inspect_run("par") as (app, pilot):
        screen = app.screen
        await detail_shown(pilot, screen)
        text = " ".join(screen.query_one(DetailView).text().split())
        item = screen.state.items[screen.current]
        assert "Is the number of ones in " + item.inputs["bits"] in text  # the prompt
        assert "parity" in text and "gold " + item.gold["answer"] in text  # the engine's own key-value pane
        report = await report_text(pilot, app, "Accuracy by ones")
        assert "Error types" in report and "Flipped parity" in report
        assert app.is_running  # an engine without paper figures has none; the app stays up


BROKEN_IMPORT = "import n2f_no_such_module_anywhere\n"
NOT_A_BACKEND = "ENGINE = object()\n"
BROKEN_CONTRACT = '''
from typing import Mapping, Sequence
from n2f_parity import ParityEngine


class Misnamed(ParityEngine):
    name = "misnamed"  # registered as "wrongname"


ENGINE = Misnamed()
'''
BROKEN_PARTS = '''
from n2f_parity import ParityEngine


class Partless(ParityEngine):
    name = "partless"

    def load_parts(self):
        import n2f_parts_that_are_not_there


ENGINE = Partless()
'''


def test_a_broken_plugin_is_one_line_and_the_others_keep_working(site):
    install_example(site)
    install_module(site, "n2f-broken-import", "n2f_broken_import", BROKEN_IMPORT, "broken")
    install_module(site, "n2f-misnamed", "n2f_misnamed", BROKEN_CONTRACT, "wrongname")
    install_module(site, "n2f-partless", "n2f_partless", BROKEN_PARTS, "partless")
    (site / "n2f_nobackend.py").write_text(NOT_A_BACKEND, encoding="utf-8")
    record_installed(site, "n2f-nobackend", "0.1", {"n2f_tui.backends": {"nothing": "n2f_nobackend:ENGINE"}})

    settings = n2f(site, "settings", "parity")
    warnings = settings.stderr.strip().splitlines()
    assert len(warnings) == 3, settings.stderr  # one line per broken plugin
    assert "'broken' (n2f-broken-import" in warnings[0] and "ModuleNotFoundError" in warnings[0]
    assert "'wrongname' (n2f-misnamed" in warnings[1] and "its name is 'misnamed'" in warnings[1]
    assert "model backend plugin 'nothing' (n2f-nobackend" in warnings[2] and "not a sessions.backends.models.BackendKind" in warnings[2]
    assert "Traceback" not in settings.stderr
    # listing runs imports no engine (issue 28), so it has no plugin to name
    assert n2f(site, "runs").stderr.strip().splitlines() == ["no runs yet; start one with `n2f run dedc`"]

    dedc = json.loads(n2f(site, "run", "dedc", "-n", "5", "--json", "-q").stdout)
    assert dedc["n"] == 5
    assert json.loads(n2f(site, "run", "parity", "-n", "5", "--json", "-q").stdout)["n"] == 5

    refused = n2f(site, "run", "broken", check=False)
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1].startswith("n2f: error: engine plugin")
    partless = n2f(site, "run", "partless", "-q", check=False)  # declared well, its parts fail at first use
    lines = partless.stderr.strip().splitlines()
    assert partless.returncode == 2 and "Traceback" not in partless.stderr
    assert lines[-1].startswith("n2f: error: engine partless: its parts cannot be loaded: ModuleNotFoundError")
    assert len(json.loads(n2f(site, "runs", "--json").stdout)) == 2
    assert n2f(site, "run", "dedc", "-n", "2", "-m", "always", "-q").returncode == 0  # the good backend plugin works
    nothing = n2f(site, "run", "dedc", "-m", "nothing", check=False)
    assert nothing.returncode == 2 and "model backend plugin 'nothing'" in nothing.stderr.strip().splitlines()[-1]


async def test_the_inspector_names_a_broken_plugin_once_and_offers_the_other_engines(site, monkeypatch):
    import engines
    from n2f_tui.app import N2FApp
    from n2f_tui.screens.newrun import engine_choices
    from n2f_tui.widgets.style import STABLE
    from tui_support import screen_named, until

    install_example(site)
    install_module(site, "n2f-broken-import", "n2f_broken_import", BROKEN_IMPORT, "broken")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(engines, "_loaded", None)
    app = N2FApp(formats=STABLE, demo=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: screen_named(app, "HomeScreen"))
        named = [n.message for n in app._notifications if "'broken'" in n.message]
        assert len(named) == 1 and "ModuleNotFoundError" in named[0]
        assert [value for _, value in engine_choices()] == ["dedc", "logic", "robogrid", "rgp", "compost", "parity"]
