"""The offline logic model: a readable description, then the formula with realistic damage.

Step 1 (FS->NL) answers the templated English description of the original formula
(``describe``). Step 2 (NL->FS) answers the original formula, written in one of the
notations models use (mostly the prompt's unicode; ASCII, words, ``v`` for or, LaTeX),
sometimes with redundant parentheses and, one reply in ten, inside prose or a code fence. With
probability ``error_rate`` (or always, for ``error=CODE``) one error of the taxonomy is
made, decided once per item so that both steps agree:

* negation_error: a literal flipped, or a negation added to / dropped from a subformula;
* operator_swap: a ∧/∨ node written with the other operator, or two neighbouring parts
  joined by the other operator;
* scope_error: misplaced parentheses: ``a ∧ (b ∨ c)`` regrouped as ``(a ∧ b) ∨ c``;
* omission: a clause or subformula dropped; extra_subformula: a literal or clause added;
* symbol_hallucination: a proposition, object or predicate renamed to one not in the
  vocabulary (everywhere, or at one occurrence);
* arity_error / argument_error / quantifier_error (first-order items only): an argument
  dropped or added; arguments swapped or replaced; a quantifier flipped, moved past one
  of the other kind, or dropped;
* extra_operator: ``a ∨ b`` written as ``a → b`` (or ``a ∧ b`` as ``a ↔ b``);
* copied_formula: the description copies the formula (the round trip is then right);
* format_violation: the right formula inside prose or a code fence (unparseable by the
  authors' reading of the whole reply, correct under ``extract=lenient``);
* unparseable: half a formula, unbalanced brackets or prose without a formula.

An injected error is kept only if it changes the meaning (a different truth table; for
first-order formulas a small random structure telling them apart); up to 12 variants are
tried, after which the last one is answered even if it happens to be equivalent. A code
that cannot apply to the item (a first-order error on a propositional formula, a
regrouping with nothing to regroup) falls back to another error when it was drawn at
random; a forced code (``error=CODE``) that cannot apply leaves the answer right.
Everything is a pure function of the item, the step, the options and ``rng_seed``.
"""

from __future__ import annotations

import random
from typing import Callable

from engines.core import Item, SettingsError, SimOptions, Step
from engines.logic.describe import describe
from engines.logic.edits import Path, at, new_atom, nodes_of, replace, requantify
from engines.logic.formula import (
    AND,
    DUAL,
    IFF,
    IMPLIES,
    OR,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    junction,
    map_atoms,
    prefix,
    symbols,
)
from engines.logic.models import separated
from engines.logic.prompts import FS_TO_NL
from engines.logic.render import ASCII, LATEX, UNICODE, V_OR, WORDS, Notation, render
from engines.logic.score import gold_formula, item_vocabulary
from engines.logic.tags import ERROR_CODES
from engines.logic.truth import TableOf
from engines.logic.vocabulary import ENGLISH, Vocabulary
from engines.wrapping import wrap as wrap_answer

SIM_CODES = ERROR_CODES + ("unparseable", "format_violation")
FOL_ONLY = frozenset(("arity_error", "argument_error", "quantifier_error"))
STEP_ONE_CODES = frozenset(("copied_formula",))
WRAP_RATE = 0.1
ATTEMPTS = 12
# Models mostly answer in the notation the prompt shows (unicode); the rest exercise the parser.
NOTATIONS: tuple[tuple[Notation, float], ...] = ((UNICODE, 0.8), (ASCII, 0.06), (WORDS, 0.05), (V_OR, 0.05),
                                                 (LATEX, 0.04))
EXTRA_PARENS = 0.1

Injector = Callable[[Formula, Vocabulary, random.Random], "Formula | None"]


# --------------------------------------------------------------- injectors


def inject_negation(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    compound = nodes_of(f, Junction)
    if compound and rng.random() < 0.3:
        path, node = rng.choice(compound)
        return replace(f, path, Not(node))
    path, atom = rng.choice(nodes_of(f, Atom, Equal))
    if path and isinstance(at(f, path[:-1]), Not):
        return replace(f, path[:-1], atom)
    return replace(f, path, Not(atom))


def inject_swap(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    found = nodes_of(f, Junction)
    if not found:
        return None
    path, node = rng.choice(found)
    assert isinstance(node, Junction)
    parts = list(node.parts)
    if len(parts) >= 3 and rng.random() < 0.5:
        i = rng.randrange(len(parts) - 1)
        parts[i:i + 2] = [junction(DUAL[node.op], parts[i:i + 2])]
        return replace(f, path, junction(node.op, parts))
    return replace(f, path, junction(DUAL[node.op], parts))


def inject_scope(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    """Regroup ``s ∘ (c1 • c2 ...)`` as ``(s ∘ c1) • c2 ...`` (same symbols in the same order)."""
    options = []
    for path, node in nodes_of(f, Junction):
        assert isinstance(node, Junction)
        for i, part in enumerate(node.parts):
            if isinstance(part, Junction):
                options += [(path, node, i, side) for side in (-1, 1) if 0 <= i + side < len(node.parts)]
    if not options:
        return None
    path, node, i, side = rng.choice(options)
    parts = list(node.parts)
    inner = parts[i]
    assert isinstance(inner, Junction)
    if side < 0:
        group = junction(inner.op, [junction(node.op, [parts[i - 1], inner.parts[0]]), *inner.parts[1:]])
        parts[i - 1:i + 1] = [group]
    else:
        group = junction(inner.op, [*inner.parts[:-1], junction(node.op, [inner.parts[-1], parts[i + 1]])])
        parts[i:i + 2] = [group]
    return replace(f, path, junction(node.op, parts))


def inject_omission(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    found = nodes_of(f, Junction)
    if not found:
        return None
    path, node = found[0] if rng.random() < 0.5 else rng.choice(found)
    assert isinstance(node, Junction)
    parts = list(node.parts)
    del parts[rng.randrange(len(parts))]
    return replace(f, path, junction(node.op, parts))


def inject_extra(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    quants, matrix = prefix(f)
    found = nodes_of(matrix, Junction)
    if not found:
        extra = junction(rng.choice((AND, OR)), [matrix, new_atom(vocab, rng)])
        return requantify([(q.kind, q.var) for q in quants], extra)
    path, node = found[0] if rng.random() < 0.5 else rng.choice(found)
    assert isinstance(node, Junction)
    clause_like = [p for p in node.parts if isinstance(p, Junction)]
    new = junction(clause_like[0].op, [new_atom(vocab, rng) for _ in clause_like[0].parts]) \
        if clause_like and rng.random() < 0.6 else new_atom(vocab, rng)
    grown = replace(matrix, path, junction(node.op, [*node.parts, new]))
    return requantify([(q.kind, q.var) for q in quants], grown)


_ENGLISH_NAMES = ("Eve", "Frank", "Grace", "Henry")
_ENGLISH_VERBS = ("Likes", "Sees", "Meets", "Calls")


def inject_hallucination(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    syms = symbols(f)
    choices = [("prop", p) for p in sorted(syms.propositions)] + [("const", c) for c in sorted(syms.constants)]
    choices += [("pred", p) for p, _ in sorted(syms.predicates)]
    kind, old = rng.choice(choices)
    taken = vocab.known() | syms.bound
    if vocab.style == ENGLISH and kind != "prop":
        new = next(n for n in (_ENGLISH_NAMES if kind == "const" else _ENGLISH_VERBS) if n not in taken)
    else:
        stem = {"prop": "x", "const": "o", "pred": "p"}[kind]
        new = next(f"{stem}{i}" for i in range(1, len(taken) + 2) if f"{stem}{i}" not in taken)

    def rename(a: Formula) -> Formula:
        if isinstance(a, Atom):
            name = new if a.name == old and kind in ("prop", "pred") else a.name
            return Atom(name, tuple(new if t == old and kind == "const" else t for t in a.args))
        assert isinstance(a, Equal)
        return Equal(*(new if t == old and kind == "const" else t for t in (a.left, a.right)))

    if rng.random() < 0.5:
        return map_atoms(f, rename)
    sites = [(p, n) for p, n in nodes_of(f, Atom, Equal) if rename(n) != n]
    path, atom = rng.choice(sites)
    return replace(f, path, rename(atom))


def _predicate_atom(f: Formula, rng: random.Random) -> tuple[Path, Atom] | None:
    """One atom with arguments, at random, and its path; None for a formula without one."""
    found = [(p, n) for p, n in nodes_of(f, Atom) if n.args]
    if not found:
        return None
    path, atom = rng.choice(found)
    assert isinstance(atom, Atom)
    return path, atom


def inject_arity(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    if (site := _predicate_atom(f, rng)) is None:
        return None
    path, atom = site
    if len(atom.args) >= 2 and rng.random() < 0.6:
        return replace(f, path, Atom(atom.name, atom.args[:-1]))
    return replace(f, path, Atom(atom.name, atom.args + (rng.choice(vocab.constants),)))


def inject_argument(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    if (site := _predicate_atom(f, rng)) is None:
        return None
    path, atom = site
    args = list(atom.args)
    if len(args) == 2 and args[0] != args[1] and rng.random() < 0.5:
        args.reverse()
    else:
        i = rng.randrange(len(args))
        args[i] = rng.choice([c for c in vocab.constants if c != args[i]])
    return replace(f, path, Atom(atom.name, tuple(args)))


def inject_quantifier(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    quants, matrix = prefix(f)
    if not quants:
        return None
    order = [(q.kind, q.var) for q in quants]
    ways = ["flip", "drop"] + (["swap"] if any(a[0] != b[0] for a, b in zip(order, order[1:])) else [])
    way = rng.choice(ways)
    if way == "swap":
        i = rng.choice([i for i in range(len(order) - 1) if order[i][0] != order[i + 1][0]])
        order[i], order[i + 1] = order[i + 1], order[i]
    elif way == "flip":
        i = rng.randrange(len(order))
        order[i] = (DUAL[order[i][0]], order[i][1])
    else:
        del order[rng.randrange(len(order))]
    return requantify(order, matrix)


def inject_extra_operator(f: Formula, vocab: Vocabulary, rng: random.Random) -> Formula | None:
    """``a ∨ b`` misread as ``a → b`` (¬a ∨ b), or ``a ∧ b`` as ``a ↔ b``."""
    found = nodes_of(f, Junction)
    if not found:
        return None
    ors = [(p, n) for p, n in found if isinstance(n, Junction) and n.op == OR]
    path, node = rng.choice(ors or found)
    assert isinstance(node, Junction)
    rest = junction(node.op, node.parts[1:])
    return replace(f, path, Arrow(IMPLIES if node.op == OR else IFF, node.parts[0], rest))


INJECTORS: dict[str, Injector] = {
    "negation_error": inject_negation,
    "operator_swap": inject_swap,
    "scope_error": inject_scope,
    "omission": inject_omission,
    "extra_subformula": inject_extra,
    "symbol_hallucination": inject_hallucination,
    "arity_error": inject_arity,
    "argument_error": inject_argument,
    "quantifier_error": inject_quantifier,
    "extra_operator": inject_extra_operator,
}


# --------------------------------------------------------------------- text


def write(f: Formula, rng: random.Random) -> str:
    """The formula as a model might write it: some notation, sometimes redundant parentheses."""
    notation = rng.choices([n for n, _ in NOTATIONS], [w for _, w in NOTATIONS])[0]
    if rng.random() < EXTRA_PARENS:
        return render(f, notation, extra=lambda node: rng.random() < 0.15)
    return render(f, notation)


_BEFORE = ("Here is the formula:", "The formula is:", "Sure! Based on the description, the formula is:",
           "Formula:", "Let me translate the description step by step.\nFinal answer:")
_AFTER = ("This formula captures the description.", "Each part corresponds to one sentence of the description.",
          "Hope this helps!")


_SHAPES = ("```\n{text}\n```", "{before}\n```logic\n{text}\n```", "{before}\n\n{text}", "{before}\n{text}\n{after}")


def wrap(text: str, rng: random.Random) -> str:
    """The formula in a fence, after a lead-in, or between prose lines."""
    return wrap_answer(text, rng, _SHAPES[rng.randrange(len(_SHAPES))], _BEFORE, _AFTER)


def garbage(text: str, rng: random.Random) -> str:
    """A reply that is not a formula: cut in half, unbalanced, or prose only."""
    style = rng.randrange(3)
    if style == 0:
        ops = [i for i, ch in enumerate(text) if ch in "∧∨" and 0 < i < len(text) - 1]
        if ops:
            return text[: rng.choice(ops) + 1].rstrip()
    if style == 1 and "(" in text:
        return "(" + text
    return rng.choice(("I cannot determine the formula from this description.",
                       "The description is ambiguous, so I will not guess the formula.",
                       "It says that all the conditions have to hold at the same time."))


# -------------------------------------------------------------- the model


def _codes_for(vocab: Vocabulary) -> tuple[str, ...]:
    return tuple(c for c in SIM_CODES if vocab.is_fol or c not in FOL_ONLY)


def plan(item: Item, vocab: Vocabulary, options: SimOptions) -> str:
    """The error this item gets ("" for none), the same for both steps of the item."""
    if options.error and options.error not in SIM_CODES:
        raise SettingsError(f"sim: unknown error {options.error!r}; known: {', '.join(SIM_CODES)}")
    rng = random.Random(f"logic-sim:{options.seed}:{item.id}")
    if options.error:
        return options.error
    return rng.choice(_codes_for(vocab)) if rng.random() < options.error_rate else ""


def damage(original: Formula, code: str, vocab: Vocabulary, rng: random.Random, fallback: bool) -> Formula:
    """The original with one error of kind ``code`` that changes its meaning.

    With ``fallback``, a code that cannot apply gives way to another one; without it (a
    forced code) the original comes back unchanged.
    """
    reference = None if vocab.is_fol else TableOf(original)

    def changes_meaning(candidate: Formula) -> bool:
        if reference is not None:
            return reference.same(candidate) is False
        return separated(original, candidate, rng) is not None

    others = [c for c in INJECTORS if c != code and (vocab.is_fol or c not in FOL_ONLY)]
    rng.shuffle(others)
    order = ([code] if vocab.is_fol or code not in FOL_ONLY else []) + (others if fallback else [])
    last: Formula | None = None
    for kind in order:
        for _ in range(ATTEMPTS):
            candidate = INJECTORS[kind](original, vocab, rng)
            if candidate is None:
                break
            last = candidate
            if changes_meaning(candidate):
                return candidate
        if last is not None:
            return last
    return original


def simulate(item: Item, step: Step, outputs: tuple[str, ...] | list[str], options: SimOptions, rng_seed: int) -> str:
    vocab = item_vocabulary(item)
    code = plan(item, vocab, options)
    rng = random.Random(f"logic-sim:{rng_seed}:{item.id}:{step.name}")
    original = gold_formula(str(item.gold.get("formula", "")))
    if step.name == FS_TO_NL:
        text = describe(original, vocab)
        if code == "copied_formula":
            given = str(item.inputs.get("formula", ""))
            return rng.choice((f"The formula is {given}. In words:\n{text}", f"{text}\nFormally: {given}"))
        return text
    if code == "unparseable":
        return garbage(write(original, rng), rng)
    formula = damage(original, code, vocab, rng, fallback=not options.error) if code in INJECTORS else original
    text = write(formula, rng)
    if code == "format_violation":
        text = wrap(text, rng)
    elif code not in STEP_ONE_CODES and rng.random() < WRAP_RATE:
        text = f"\n{text}\n"  # blank lines around the formula: a form the authors' reading accepts
    return text


def oracle(item: Item, step: Step) -> str:
    """Step 1: the templated description; step 2: the original formula."""
    if step.name == FS_TO_NL:
        return describe(gold_formula(str(item.gold.get("formula", ""))), item_vocabulary(item))
    return str(item.gold.get("formula", ""))
