"""rgp work per item, bounded by counting it: parses, tree walks; and the one-walk estimator's fidelity.

An item's program is parsed once for its syntax (however often the run asks) and its
comment-stripped text once for the estimator, whose three readings of the tree (dicts,
dict lines, assignments) come from one walk. The assignments of the program without its
dict lines are read from that walk instead of a second parse; the estimates must be those
of the second parse, on every program here and on random line mutations of them.
"""

from __future__ import annotations

import ast
import json
import random

import pytest

from engines.rgp import ENGINE, estimate as estimator, parse, program_tree
from engines.rgp.estimate import estimate
from engines.rgp.generate import build_items
from engines.rgp.parse import extract_program
from engines.rgp.settings import SETTING_LABELS, RgpSettings
from engines.rgp.simulate import SIM_CODES, oracle, write_program
from test_rgp_estimate import GOLDEN

ITEMS = [item for setting in SETTING_LABELS for item in build_items(RgpSettings(setting=setting, count=2), 0)]
REPLIES = [write_program(item, kind, random.Random(n)) for n, item in enumerate(ITEMS) for kind in ("T1", *SIM_CODES)]
PROGRAMS = [p for p in (extract_program(r).program for r in REPLIES) if p] + [g[1] for g in GOLDEN]
SNIPPETS = ["x = {'A': '*', 'B': '.'}", "d = {k: '*' for k in 'AB'}", "y = f({k: 1 for k in 'CD'})",
            "a = 1; m = {'E': '..'}", "z = {'G': 1,\n    'H': 2}", "w, v = {'B': 2}, 3", "u = v = {'C': '*'}",
            "if s == 'A': r = {'A': '*'}", "p = f(\n  {k: 2 for k in 'EF'}\n)", "@deco({k: 1 for k in 'G'})",
            "\tt = {'H': 1}", "else:", "for k in {'A': 1}: q = k"]


def mutations(program: str, rng: random.Random, count: int = 6) -> list[str]:
    """The program with a snippet inserted (at a line's indentation) or a line deleted, ``count`` times over."""
    found = []
    for _ in range(count):
        lines = program.split("\n")
        at = rng.randrange(len(lines) + 1)
        if rng.random() < 0.75:
            indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())] if at < len(lines) else ""
            lines[at:at] = [indent + line for line in rng.choice(SNIPPETS).split("\n")]
        elif lines:
            del lines[min(at, len(lines) - 1)]
        found.append("\n".join(lines))
    return found


def counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args[0] if args else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_the_estimator_parses_once_and_walks_once(monkeypatch):
    parses = counting(monkeypatch, ast, "parse")
    walks = counting(monkeypatch, program_tree, "walk")
    stdlib_walks = counting(monkeypatch, ast, "walk")
    for program in [extract_program(oracle(item)).program for item in ITEMS]:
        parses.clear(), walks.clear()
        estimate(program)
        assert len(parses) == 1 and len(walks) == 1, program
    assert stdlib_walks == []


def test_an_item_parses_its_program_once_for_its_syntax(monkeypatch):
    """Choosing the sandbox step, rebuilding the replies' prompts and scoring all ask; one parse answers
    them, and one more is the estimator's (of the comment-stripped text)."""
    monkeypatch.setattr(parse, "_verdicts", {})
    item = ITEMS[0]
    reply = oracle(item)
    runs = [{"stdout": s["output"], "stderr": "", "exit_code": 0, "killed_by": "", "wall_s": 0.01}
            for s in item.inputs["samples"]]
    outputs = [reply, json.dumps({"isolation": "test", "timeout_s": 5, "runs": runs})]
    parses = counting(monkeypatch, ast, "parse")
    for done in range(3):
        ENGINE.next_call(item, RgpSettings(), outputs[:done])
    verdict = ENGINE.score(item, outputs, RgpSettings())
    assert verdict.status == "correct"
    program = extract_program(reply).program
    assert parses.count(program) == 1 and len(parses) == 2


def test_syntax_verdicts_are_kept_in_a_bounded_memo(monkeypatch):
    monkeypatch.setattr(parse, "_verdicts", {})
    parses = counting(monkeypatch, ast, "parse")
    for n in range(parse.KEPT_VERDICTS + 10):
        assert parse.syntax_problem(f"print({n})\n") is None
    assert len(parse._verdicts) == parse.KEPT_VERDICTS
    problem = parse.syntax_problem("print(1\n")
    assert problem is not None and parse.syntax_problem("print(1\n") == problem
    assert len(parses) == parse.KEPT_VERDICTS + 11


def reparsed(program: str, monkeypatch) -> estimator.Estimate:
    """The estimate as the original computes it: the program without its dict lines parsed again."""
    with monkeypatch.context() as patch:
        patch.setattr(program_tree, "rest_assignments", lambda parts, lines: None)
        return estimate(program)


def test_the_one_walk_estimate_is_the_reparsed_one(monkeypatch):
    rng = random.Random(28)
    corpus = [m for program in PROGRAMS for m in [program, *mutations(program, rng)]]
    parsed = derived = 0
    for program in corpus:
        assert estimate(program) == reparsed(program, monkeypatch), program
        code = estimator.strip_comments(program)
        tree = estimator._parse(code)
        if tree is not None:
            parsed += 1
            derived += program_tree.rest_assignments(program_tree.walk(tree), code.split("\n")) is not None
    assert derived > 0.8 * parsed, f"{derived} of {parsed}: most programs must be read without a second parse"


@pytest.mark.parametrize("program", [
    "if c:\n    x = {'A': 1}\nelse:\n    y = 2\n",  # a block left empty
    "if c: x = {'A': 1}\nelse:\n    y = 2\n",  # the deleted line holds the if's header
    "@deco({k: 1 for k in 'A'})\ndef f():\n    y = 1\n",  # a decorator line alone
    "y = (1,\n     2); x = {'A': 1}\nz = 3\n",  # a kept statement shares the deleted line
    "if c:\n\tx = {'A': 1}\n\ty = 2\n",  # tabs in the indentation
    "p = f(\n  {k: 2 for k in 'EF'}\n)\nq = 1\n",  # a comprehension inside a kept statement
])
def test_what_the_walk_cannot_tell_is_parsed_again(program, monkeypatch):
    code = estimator.strip_comments(program)
    tree = estimator._parse(code)
    assert tree is not None
    assert program_tree.rest_assignments(program_tree.walk(tree), code.split("\n")) is None
    assert estimate(program) == reparsed(program, monkeypatch)
