"""The layout shows the architecture: layers import one way, packages have no cycles, names are unique.

``engines/`` is pure and imports neither ``sessions`` nor ``n2f_tui``; ``sessions/`` never
imports ``n2f_tui``, and of the engines only their shared modules (the contract, the core
records, reporting, papers, plugins, parsing, the SPARQL language), never one family's internals: what an engine
lends a tool travels through its public ``EngineParts`` or its steps. Inside ``sessions/``
no module imports the front ends' facade ``sessions.api``, and the imports between modules,
lazy ones included, form no cycle. No two classes of the layers share a name.
"""

from __future__ import annotations

import ast
import subprocess
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "sessions", "n2f_tui")
# A family is an engine package (it defines ENGINE); every other module of engines/ is shared by them all.
FAMILIES = {p.parent.name for p in (ROOT / "engines").glob("*/__init__.py") if "\nENGINE = " in p.read_text()}


def shared_engine_module(name: str) -> bool:
    return name.split(".")[0] == "engines" and not (len(name.split(".")) > 1 and name.split(".")[1] in FAMILIES)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module the file imports, at any depth (lazy imports count), ``TYPE_CHECKING`` blocks left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: {m for m in imports_of(path) if m in modules and m != name} for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_layers_import_one_way():
    wrong = [f"{name} imports {target}" for name, targets in graph().items() for target in sorted(targets)
             if (name.startswith("engines") and target.split(".")[0] in {"sessions", "n2f_tui"})
             or (name.startswith("sessions") and target.startswith("n2f_tui"))]
    assert not wrong, "\n".join(wrong)


def test_sessions_use_only_the_engines_shared_modules_and_never_the_facade():
    wrong = [f"{name} imports {target}" for name, targets in graph().items() if name.startswith("sessions.")
             for target in sorted(targets)
             if (target.startswith("engines") and not shared_engine_module(target))
             or (target == "sessions.api" and name != "sessions.api")]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_inside_sessions():
    edges = {name: {t for t in targets if t.startswith("sessions")} for name, targets in graph().items()
             if name.startswith("sessions")}
    assert cycles(edges) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_two_classes_of_the_layers_share_a_name():
    """Engine families are namespaces of their own (each folder has the same files by design, so
    each may have its ``Parsed``); across ``sessions/``, ``n2f_tui/`` and the engines' shared
    modules a name means one class."""
    where = defaultdict(list)
    for name, path in project_modules().items():
        if name.startswith("engines") and not shared_engine_module(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(name)
    shared = {cls: modules for cls, modules in where.items() if len(modules) > 1}
    assert not shared, shared


def test_every_data_file_of_the_packages_is_installed_with_them():
    """``pip install .`` copies only ``.py`` files and what package-data names: a data file left out
    works from the checkout (the tests) and fails for every user of the installed command."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    tracked = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    missing = []
    for name in (n for n in tracked if not n.endswith(".py")):
        path = Path(name)
        owners = [(pkg, pattern) for pkg, patterns in declared.items() for pattern in patterns
                  if path.is_relative_to(Path(*pkg.split("."))) and path.relative_to(Path(*pkg.split("."))).match(pattern)]
        if not owners:
            missing.append(name)
    assert not missing, missing


def test_every_name_of_the_facade_resolves_to_its_owner():
    from sessions import api

    for module, names in api.OWNERS.items():
        for name in names:
            assert getattr(api, name) is getattr(__import__(module, fromlist=[name]), name)
    assert set(api.__all__) == {n for names in api.OWNERS.values() for n in names}
