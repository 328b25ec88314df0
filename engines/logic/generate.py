"""Deterministic datasets of the paper (section 3): CNF, random grammar formulas, FOL.

* ``cnf``: item i has ratio r = ratios[i mod 13] (1.0, 1.5, ..., 7.0) and m = round(r·n)
  clauses (halves round up); each clause takes k distinct variables of x1..xn (written in
  index order), each negated with probability 1/2 (random k-SAT). Clauses may repeat:
  with k = n = 3 there are only 8 different clauses.
* ``random``: item i has exactly as many binary operators as CNF item i (m·k - 1): a
  random binary tree of that many ∧/∨ nodes over x1..xn (the split of operators between
  the two sides is uniform), each leaf negated with probability 1/2 and each inner node
  with probability 0.15 (the grammar's ``¬p`` on compound formulas), never ``¬¬``.
* ``fol``: item i has 1 + (i mod max_ops) operators (¬, ∧, ∨), built by applying the
  same grammar top-down (¬ with probability 1/3, never ``¬¬``); every atom is a random
  predicate of the vocabulary whose arguments are each a variable (x1, x2) with
  probability 1/4 (the released code's rate) or an object; at least one variable occurs.
  The formula is prenex: each variable that occurs gets a quantifier, ∀ or ∃ at random,
  in vocabulary order (no vacuous quantifiers).

Formulas are distinct within a dataset (up to 50 redraws), and every random choice of
item i comes from its own stream keyed by (dataset, seed, i, redraw), so an item does not
depend on ``count``. A formula too large for the parser or the solver is a settings error.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from engines.core import Item, SettingsError
from engines.logic.formula import (
    AND,
    EXISTS,
    FORALL,
    OR,
    Atom,
    Formula,
    Not,
    Quant,
    Measure,
    junction,
    measure,
    prefix,
)
from engines.logic.parse import MAX_CHARS, MAX_DEPTH, remember
from engines.logic.render import show
from engines.logic.settings import LogicSettings
from engines.logic.solver import MAX_SOLVER_NODES
from engines.logic.vocabulary import Vocabulary, first_order, propositional

ENGINE = "logic"
REDRAWS = 50
LEAF_NEGATION = 0.5
INNER_NEGATION = 0.15
FOL_NEGATION = 1 / 3
FOL_VARIABLE_RATE = 0.25


def _rng(dataset: str, seed: int, index: int, redraw: int) -> random.Random:
    """An independent, reproducible stream (string seeds hash with SHA-512, stable across runs)."""
    return random.Random(f"logic/{dataset}/{seed}/{index}/{redraw}")


# ------------------------------------------------------------------- formulas


def literal(rng: random.Random, name: str, rate: float = LEAF_NEGATION) -> Formula:
    atom = Atom(name)
    return Not(atom) if rng.random() < rate else atom


def cnf_formula(rng: random.Random, names: tuple[str, ...], k: int, m: int) -> Formula:
    order = {name: i for i, name in enumerate(names)}

    def variables() -> list[str]:
        return list(names) if k == len(names) else sorted(rng.sample(names, k), key=order.__getitem__)

    clauses = [junction(OR, [literal(rng, v) for v in variables()]) for _ in range(m)]
    return junction(AND, clauses)


def random_formula(rng: random.Random, names: tuple[str, ...], binary: int) -> Formula:
    """A formula of the grammar x | p ∨ p' | p ∧ p' | ¬p with exactly ``binary`` ∧/∨."""
    def build(ops: int) -> Formula:
        if ops == 0:
            return literal(rng, rng.choice(names))
        left = rng.randint(0, ops - 1)
        node = junction(rng.choice((AND, OR)), [build(left), build(ops - 1 - left)])
        return Not(node) if rng.random() < INNER_NEGATION else node
    return build(binary)


Shape = tuple[Any, ...]  # a matrix's skeleton: ("atom",), ("not", shape) or (AND | OR, shape, shape)


def fol_formula(rng: random.Random, vocab: Vocabulary, ops: int) -> Formula:
    """A prenex formula with ``ops`` operators (¬, ∧, ∨) in its matrix."""
    def shape(n: int, negated: bool) -> Shape:
        if n == 0:
            return ("atom",)
        if not negated and rng.random() < FOL_NEGATION:
            return ("not", shape(n - 1, True))
        left = rng.randint(0, n - 1)
        return (rng.choice((AND, OR)), shape(left, False), shape(n - 1 - left, False))

    skeleton = shape(ops, False)
    slots = _count_atoms(skeleton)
    atoms: list[tuple[str, list[str]]] = []
    for _ in range(slots):
        name, arity = rng.choice(vocab.predicates)
        args = [rng.choice(vocab.variables) if rng.random() < FOL_VARIABLE_RATE else rng.choice(vocab.constants)
                for _ in range(arity)]
        atoms.append((name, args))
    if not any(a in vocab.variables for _, args in atoms for a in args):
        name, args = rng.choice(atoms)
        args[rng.randrange(len(args))] = rng.choice(vocab.variables)
    feed = iter(Atom(name, tuple(args)) for name, args in atoms)

    def build(node: Shape) -> Formula:
        if node[0] == "atom":
            return next(feed)
        if node[0] == "not":
            return Not(build(node[1]))
        return junction(node[0], [build(node[1]), build(node[2])])

    matrix = build(skeleton)
    used = {a for _, args in atoms for a in args}
    formula = matrix
    for var in reversed([v for v in vocab.variables if v in used]):
        formula = Quant(rng.choice((FORALL, EXISTS)), var, formula)
    return formula


def _count_atoms(node: Shape) -> int:
    if node[0] == "atom":
        return 1
    return sum(_count_atoms(child) for child in node[1:])


# ------------------------------------------------------------------------ items


def _meta(formula: Formula, dataset: str, m: Measure, **extra: object) -> dict[str, object]:
    ops = m.operators
    binary = ops[AND] + ops[OR]
    quantifiers = [q.kind for q in prefix(formula)[0]]
    meta: dict[str, object] = {
        "dataset": dataset,
        # the paper's x-axis: ∧/∨ for propositional formulas (Fig. 2), ¬/∧/∨ for FOL (Fig. 3)
        "operators": binary + (ops["not"] if dataset == "fol" else 0),
        "binary_operators": binary,
        "negations": ops["not"],
        "depth": m.depth,
    }
    if dataset == "fol":
        meta["quantifiers"] = "".join("∀" if q == FORALL else "∃" for q in quantifiers)
        meta["variables"] = len(quantifiers)
    else:
        meta["variables"] = len(m.names)
    meta.update(extra)
    return meta


def _checked(formula: Formula, text: str, settings: LogicSettings) -> Measure:
    """The formula's measure, after making sure the parser and the solver will take it."""
    m = measure(formula)
    if len(text) > MAX_CHARS or m.depth > MAX_DEPTH or m.nodes > MAX_SOLVER_NODES:
        raise SettingsError(
            f"these settings make formulas too large to judge ({len(text)} characters, {m.nodes} nodes, "
            f"depth {m.depth}; limits {MAX_CHARS}, {MAX_SOLVER_NODES}, {MAX_DEPTH}): "
            f"lower r_max, k or n (dataset={settings.dataset})")
    return m


def _distinct(make: Callable[[random.Random], Formula], dataset: str, seed: int, index: int,
              seen: set[str]) -> tuple[Formula, str]:
    for redraw in range(REDRAWS):
        formula = make(_rng(dataset, seed, index, redraw))
        text = show(formula)
        if text not in seen:
            break
    seen.add(text)
    return formula, text


def _item(item_id: str, formula: Formula, text: str, vocab: Vocabulary, meta: dict[str, object]) -> Item:
    remember(text, formula)  # the scorer and the simulator need not parse the gold text again
    return Item(id=item_id, engine=ENGINE,
                inputs={"formula": text, "logic": vocab.logic, "vocabulary": vocab.to_json()},
                gold={"formula": text}, meta=meta)


def build_items(settings: LogicSettings, seed: int) -> list[Item]:
    """The items of ``settings.dataset`` for this seed."""
    if settings.dataset == "fol":
        return _fol_items(settings, seed)
    vocab = propositional(settings.n)
    names = vocab.propositions
    ratios = settings.ratios()
    items: list[Item] = []
    seen: set[str] = set()
    for i in range(settings.count):
        r = ratios[i % len(ratios)]
        m = max(1, int(r * settings.n + 0.5))
        extra: dict[str, object] = {"ratio": r, "clauses": m, "k": settings.k, "n": settings.n}
        if settings.dataset == "cnf":
            formula, text = _distinct(lambda rng: cnf_formula(rng, names, settings.k, m), "cnf", seed, i, seen)
        else:
            binary = m * settings.k - 1
            formula, text = _distinct(lambda rng: random_formula(rng, names, binary), "random", seed, i, seen)
            extra["matched"] = f"logic-cnf-{i + 1:04d}"
        items.append(_item(f"logic-{settings.dataset}-{i + 1:04d}", formula, text, vocab,
                           _meta(formula, settings.dataset, _checked(formula, text, settings), **extra)))
    return items


def _fol_items(settings: LogicSettings, seed: int) -> list[Item]:
    vocab = first_order(settings.vocab)
    items: list[Item] = []
    seen: set[str] = set()
    for i in range(settings.count):
        ops = 1 + i % settings.max_ops
        formula, text = _distinct(lambda rng: fol_formula(rng, vocab, ops), f"fol-{settings.vocab}", seed, i, seen)
        items.append(_item(f"logic-fol-{settings.vocab}-{i + 1:04d}", formula, text, vocab,
                           _meta(formula, "fol", _checked(formula, text, settings), vocab=settings.vocab)))
    return items
