"""Deterministic item construction (GenerateInstance of Algorithm 1) for the three tasks.

For every combination of the settings (settings.Condition) and every index, an item is:

* a program sampled for (D, B, p, E) from a random stream keyed by (seed, shape, index),
  deliberately *not* by style, lexicon or task: item ``k`` has the same tree in every
  style and lexicon (appendix A.3.3 "the same underlying AST in different surface
  forms"), so style and lexicon ablations compare like with like;
* a lexicon keyed by (seed, index) and the grammar it makes with the style;
* the program linearised in that grammar (gold ``program``), a start state and the final
  state the program reaches (gold ``final``);
* per task: the template instructions (instruct), the start and target states (goal),
  or a candidate program (judge): even indices the valid program, odd indices a
  perturbation of it (breaks.SYNTAX_BREAKS, checked to fail to parse), so the judge
  set is balanced;
* ``shots`` worked examples in the same grammar (smaller programs, depth <= 3).

``inputs`` carries what the prompt needs (``grammar`` as EBNF, ``lexicon``, ``start``,
``instructions`` / ``target`` / ``code``, ``examples``); ``gold`` the program and its
final state (plus ``answer``, ``perturbation`` and ``note`` for judge items); ``meta``
the grouping keys of the report.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from engines.core import Item
from engines.parsing import ParseFailure
from engines.robogrid.breaks import SYNTAX_BREAKS, Broken
from engines.robogrid.grammars import Grammar, grammar_for
from engines.robogrid.instructions import instructions
from engines.robogrid.lexicon import sample_lexicon
from engines.robogrid.linearise import Code, linearise
from engines.robogrid.nodes import Program, nesting_depth, statement_count
from engines.robogrid.parse import parse_code, remember
from engines.robogrid.programs import Shape, sample_program, sample_start
from engines.robogrid.settings import Condition, RobogridSettings
from engines.robogrid.world import State, execute

ENGINE = "robogrid"
SHOT_DEPTH = 3


def build_items(settings: RobogridSettings, seed: int) -> list[Item]:
    return [build_item(cond, settings, seed, index) for cond in settings.conditions() for index in range(settings.count)]


def perturb(code: Code, grammar: Grammar, rng: random.Random) -> tuple[str, Broken]:
    """An ungrammatical variant of ``code``: (tag code, what was broken), tried kind by kind."""
    kinds = list(SYNTAX_BREAKS)
    first = rng.randrange(len(kinds))
    for kind in kinds[first:] + kinds[:first]:
        broken = SYNTAX_BREAKS[kind](code, grammar, rng)
        if broken is not None and isinstance(parse_code(broken.text, grammar), ParseFailure):
            return kind, broken
    raise AssertionError("every generated program has a block closer to break")  # pragma: no cover


def _task_fields(task: str, program: Program, code: Code, grammar: Grammar, start: State, rng: random.Random,
                 invalid: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(inputs, gold) fields specific to a task, for a program and its linearisation."""
    final = execute(program, start).final
    inputs: dict[str, Any] = {"start": start.to_json()}
    gold: dict[str, Any] = {"program": code.text, "final": final.to_json()}
    if task == "instruct":
        inputs["instructions"] = instructions(program)
    elif task == "goal":
        inputs["start_text"] = start.describe()
        inputs["target"] = final.to_json()
        inputs["target_text"] = final.describe()
    elif invalid:
        kind, broken = perturb(code, grammar, rng)
        inputs["code"] = broken.text
        gold.update(answer="INVALID", perturbation=kind, note=broken.note)
    else:
        inputs["code"] = code.text
        gold["answer"] = "VALID"
    return inputs, gold


def _examples(cond: Condition, shape: Shape, grammar: Grammar, seed: int, index: int, shots: int) -> list[dict[str, Any]]:
    small = Shape(min(shape.depth, SHOT_DEPTH), shape.block_size, shape.else_prob, shape.expr_depth)
    out: list[dict[str, Any]] = []
    for j in range(shots):
        rng = random.Random(f"robogrid:{seed}:shot:{cond.key}:{index}:{j}")
        program = sample_program(small, rng)
        code = linearise(program, grammar)
        inputs, gold = _task_fields(cond.task, program, code, grammar, sample_start(program, rng), rng, j % 2 == 1)
        out.append({**inputs, **{k: v for k, v in gold.items() if k in ("program", "answer")}})
    return out


def make_item(item_id: str, task: str, program: Program, grammar: Grammar, start: State = State(),
              rng: random.Random | None = None, invalid: bool = False, examples: list[dict[str, Any]] | None = None,
              meta: dict[str, Any] | None = None) -> Item:
    """An item of ``task`` for a known program under a grammar: the last step of build_item,
    and how tests and callers build an item around a program of their own."""
    code = linearise(program, grammar)
    remember(grammar, code.text, program)
    fields, gold = _task_fields(task, program, code, grammar, start, rng or random.Random(item_id), invalid)
    inputs = {"grammar": grammar.ebnf, "lexicon": grammar.lexicon.to_json(), **fields, "examples": examples or []}
    base = {"task": task, "depth": nesting_depth(program), "style": grammar.style, "lexicon": grammar.lexicon.kind,
            "lexicon_set": grammar.lexicon.name, "statements": statement_count(program)}
    return Item(item_id, ENGINE, inputs, gold, {**base, **(meta or {})})


@lru_cache(maxsize=4096)
def item_program(shape: Shape, seed: int, index: int) -> Program:
    """The tree of item ``index``: the same for every task, style and lexicon (sampled once)."""
    return sample_program(shape, random.Random(f"robogrid:{seed}:program:{shape}:{index}"))


def build_item(cond: Condition, settings: RobogridSettings, seed: int, index: int) -> Item:
    shape = Shape(cond.depth, settings.block_size, cond.else_prob, cond.expr_depth)
    program = item_program(shape, seed, index)
    grammar = grammar_for(cond.style, sample_lexicon(cond.lexicon, random.Random(f"robogrid:{seed}:lexicon:{index}")))
    rng = random.Random(f"robogrid:{seed}:task:{cond.key}:{index}")
    meta = {"depth": cond.depth, "else_prob": cond.else_prob, "expr_depth": cond.expr_depth,
            "block_size": settings.block_size, "shots": settings.shots, "cot": settings.cot}
    return make_item(f"{ENGINE}-{cond.key}-{index:04d}", cond.task, program, grammar, sample_start(program, rng), rng,
                     invalid=index % 2 == 1, examples=_examples(cond, shape, grammar, seed, index, settings.shots),
                     meta=meta)
