"""The offline DEDC model: the gold answer, or the gold answer with one injected error.

The gold answer is read as a DAG and rendered again, sometimes in another valid
topological order and with shuffled (but consistent) variable numbers, sometimes one
assignment per line: all of that must still be judged correct, which exercises the
checker. With probability ``error_rate`` (or always, for ``error=CODE``) one error of
the taxonomy is injected, modelled on the paper's Table 2:

* primitive_confusion: a step uses another primitive of the same arity on the same arguments;
* primitive_fiction: two steps merged into one call (too many arguments), an unknown
  primitive name, or one argument too many/few;
* variable_misuse: a step's target renamed while its users keep the old name, a user
  pointed at another existing variable (leaving the right step unused), or a reference to a
  variable that is never defined;
* redundancy: ``kth_max`` written as ``kth_argmax`` + ``hop``, or an extra filter step;
* omission: a step dropped (its users take its input, ``all``, or a constant instead);
* incorrect_meaning: a changed argument, or two chained steps in swapped order;
* unparseable: a reply cut inside a call, or prose without expressions;
* format_violation: the gold answer wrapped in prose (which the authors' checker fails).

Every injected answer is checked to be wrong (another variant is tried otherwise). About
one reply in ten is wrapped in a code fence for realism (the authors' clean-up removes it). Everything is a pure
function of the item, the options and ``rng_seed``.
"""

from __future__ import annotations

import random
from typing import Callable

from engines.core import Item, SettingsError, SimOptions
from engines.dedc.graph import Literal, Ref, distinctive, naming
from engines.dedc.parse import parse_answer
from engines.dedc.primitives import BY_NAME, PRIMITIVES
from engines.dedc.score import check, gold_dag, item_names
from engines.dedc.sim_graph import PREFIX, SGraph, Variable, from_graph, is_view, out_type, render
from engines.dedc.tags import ERROR_CODES
from engines.parsing import ParseFailure
from engines.wrapping import wrap as wrap_answer

SIM_CODES = ERROR_CODES + ("unparseable", "format_violation")
WRAP_RATE = 0.1
_FAKE = ("f10", "f11", "f12", "avg", "min", "mean", "argmin", "filter_eq", "max_k", "lookup")


# ------------------------------------------------------------------ injections

Injector = Callable[[SGraph, random.Random], bool]


def _numbers_literal(rng: random.Random) -> str:
    return str(rng.randint(2, 999))


def _attr(rng: random.Random, avoid: set[str]) -> str:
    while True:
        a = f"attr_{rng.randint(1, 1000)}"
        if a not in avoid:
            return a


def _literals(g: SGraph) -> set[str]:
    return {a.text for n in g.nodes.values() for a in n.args if isinstance(a, Literal)}


def inject_confusion(g: SGraph, rng: random.Random) -> bool:
    symbols = naming(g.names)
    cands = [n for n in g.nodes.values() if n.meaning and len(n.args) >= 2]
    rng.shuffle(cands)
    cands.sort(key=lambda n: -sum(1 for a in n.args if distinctive(a) is not None))
    for n in cands:
        others = [p.name for p in PRIMITIVES if p.name != n.meaning and len(p.inputs) == len(n.args)]
        if not others:
            continue
        new = rng.choice(others)
        n.meaning, n.symbol = new, symbols.symbol[new]
        n.prefix = out_type(new, n.prefix)
        return True
    return False


def inject_fiction(g: SGraph, rng: random.Random) -> bool:
    symbols = naming(g.names)
    ways = ["merge", "unknown", "arity"]
    rng.shuffle(ways)
    for way in ways:
        if way == "merge":
            pairs = []
            for y in g.nodes.values():
                for k, a in enumerate(y.args):
                    if not isinstance(a, Ref):
                        continue
                    x = g.nodes[a.node]
                    if len(x.args) >= 2 and g.consumers(x.id) == [(y.id, k)]:
                        pairs.append((y, k, x))
            if not pairs:
                continue
            y, k, x = rng.choice(pairs)
            y.args = list(x.args) + [a for j, a in enumerate(y.args) if j != k]
            del g.nodes[x.id]
            if y.meaning is None or len(y.args) != len(BY_NAME[y.meaning].inputs):
                return True
            return False
        if way == "unknown":
            fakes = [f for f in _FAKE if f not in symbols.meaning]
            n = rng.choice(list(g.nodes.values()))
            n.symbol, n.meaning = rng.choice(fakes), None
            return True
        n = rng.choice(list(g.nodes.values()))
        if len(n.args) >= 2 and rng.random() < 0.5:
            n.args = n.args[:-1]
        else:
            n.args = n.args + [Literal(_attr(rng, _literals(g)))]
        return True
    return False


def inject_variable_misuse(g: SGraph, rng: random.Random) -> bool:
    ways = ["rename", "wrong", "undefined"]
    rng.shuffle(ways)
    for way in ways:
        if way == "rename":
            cands = [n for n in g.nodes.values() if g.consumers(n.id)]
            if not cands:
                continue
            n = rng.choice(cands)
            prefix = rng.choice([p for p in PREFIX.values() if p != n.prefix])
            n.target = f"{prefix}_{len(g.nodes) + rng.randint(1, 5)}"
            return True
        if way == "wrong":
            options = []
            for x in g.nodes.values():
                uses = g.consumers(x.id)
                if len(uses) != 1:
                    continue
                user, slot = uses[0]
                for w in g.nodes.values():
                    if w.id == x.id or w.prefix != x.prefix:
                        continue
                    if user is not None and (g.depends_on(w.id, user) or w.id == user):
                        continue
                    options.append((user, slot, w.id))
            if not options:
                continue
            user, slot, w_id = rng.choice(options)
            if user is None:
                g.result = Ref(w_id)
            else:
                g.nodes[user].args[slot] = Ref(w_id)
            return True
        refs = [(n, a.node, k) for n in g.nodes.values() for k, a in enumerate(n.args) if isinstance(a, Ref)]
        if not refs:
            continue
        n, target, k = rng.choice(refs)
        n.args[k] = Variable(f"{g.nodes[target].prefix}_{len(g.nodes) + rng.randint(1, 5)}")
        return True
    return False


def inject_redundancy(g: SGraph, rng: random.Random) -> bool:
    symbols = naming(g.names)
    kth = [n for n in g.nodes.values() if n.meaning == "kth_max" and len(n.args) == 3]
    if kth and rng.random() < 0.5:
        n = rng.choice(kth)
        row = g.add(symbols.symbol["kth_argmax"], "kth_argmax", list(n.args), "row")
        n.symbol, n.meaning, n.args = symbols.symbol["hop"], "hop", [Ref(row.id), n.args[1]]
        return True
    slots = []
    for n in g.nodes.values():
        if not n.meaning:
            continue
        for k, (a, want) in enumerate(zip(n.args, BY_NAME[n.meaning].inputs)):
            if want == "view" and is_view(g, a):
                slots.append((n, k))
    if not slots:
        return False
    n, k = rng.choice(slots)
    meaning = rng.choice(["filter_gt", "top_k"])
    extra = g.add(symbols.symbol[meaning], meaning,
                  [n.args[k], Literal(_attr(rng, _literals(g))), Literal(_numbers_literal(rng))], "view")
    n.args[k] = Ref(extra.id)
    return True


def inject_omission(g: SGraph, rng: random.Random) -> bool:
    result_id = g.result.node if isinstance(g.result, Ref) else None
    scoped, chained, leaves = [], [], []
    for x in g.nodes.values():
        uses = g.consumers(x.id)
        if not uses:
            continue
        if x.prefix == "view" and x.args and is_view(g, x.args[0]):
            if x.id != result_id or isinstance(x.args[0], Ref):
                scoped.append(x)
        elif any(isinstance(a, Ref) for a in x.args):
            chained.append(x)
        elif x.id != result_id:
            leaves.append(x)
    for pool in (scoped, chained, leaves):
        if not pool:
            continue
        x = rng.choice(pool)
        if pool is scoped:
            new = x.args[0]
        elif pool is chained:
            new = next(a for a in x.args if isinstance(a, Ref))
        else:
            new = {"view": Literal("all"), "column": Literal(_attr(rng, _literals(g))),
                   "row": Literal(f"item_{rng.randint(1, 1000)}")}.get(x.prefix, Literal(_numbers_literal(rng)))
        del g.nodes[x.id]
        g.replace_refs(x.id, new)
        return True
    return False


def inject_incorrect_meaning(g: SGraph, rng: random.Random) -> bool:
    swaps = []
    for y in g.nodes.values():
        first = y.args[0] if y.args else None
        if y.prefix != "view" or not isinstance(first, Ref):
            continue
        x = g.nodes[first.node]
        if x.prefix == "view" and x.args and g.consumers(x.id) == [(y.id, 0)] and is_view(g, x.args[0]):
            swaps.append((x, y))
    if swaps and rng.random() < 0.5:
        x, y = rng.choice(swaps)
        below = x.args[0]
        users = g.consumers(y.id)
        y.args[0] = below
        x.args[0] = Ref(y.id)
        for user, slot in users:
            if user is None:
                g.result = Ref(x.id)
            else:
                g.nodes[user].args[slot] = Ref(x.id)
        return True
    lits = [(n, k, text) for n in g.nodes.values() for k, a in enumerate(n.args) if (text := distinctive(a))]
    if not lits:
        return False
    n, k, old = rng.choice(lits)
    if old.startswith("attr_"):
        new = _attr(rng, {old})
    elif old.lstrip("-").isdigit():
        new = old
        while new == old:
            new = str(max(1, int(old) + rng.choice([-1, 1]) * rng.randint(1, 50)))
    else:
        new = old + "0"
    n.args[k] = Literal(new)
    return True


INJECTORS: dict[str, Injector] = {
    "primitive_confusion": inject_confusion,
    "primitive_fiction": inject_fiction,
    "variable_misuse": inject_variable_misuse,
    "redundancy": inject_redundancy,
    "omission": inject_omission,
    "incorrect_meaning": inject_incorrect_meaning,
}


# ------------------------------------------------------------------------ text

_PROSE_BEFORE = ("Here is the answer:", "Answer:", "Sure! The reasoning expressions are:",
                 "Let me break the question into steps.")
_PROSE_AFTER = ("This gives the final result.", "Hope this helps!", "Each step applies one primitive.")


_FENCED = ("```\n{text}\n```", "```plaintext\n{text}\n```")  # what the authors' clean-up removes
_IN_PROSE = ("{before}\n{text}", "{before}\n{text}\n{after}")  # what their checker fails


def wrap(text: str, rng: random.Random, prose: bool = False) -> str:
    """A code fence around the answer, or with ``prose`` sentences around it."""
    shape = (_IN_PROSE if prose else _FENCED)[rng.randrange(4) % 2]
    return wrap_answer(text, rng, shape, _PROSE_BEFORE, _PROSE_AFTER)


def unparseable(text: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        cut = text.rfind("(")
        if cut > 0:
            return text[: cut + 1 + rng.randint(0, 4)].rstrip(",; ")
    return rng.choice(("I cannot determine the expressions for this question.",
                       "The answer is the filtered view of the items.",
                       "view_1 = the items that satisfy the condition"))


def gold_sgraph(item: Item, names: str) -> SGraph:
    """The gold DAG, from the scorer's cached parse of the gold answer (one parse per item)."""
    return from_graph(gold_dag(item, names))


def _is_wrong(item: Item, text: str, names: str) -> bool:
    parsed = parse_answer(text)
    return isinstance(parsed, ParseFailure) or not check(parsed, item, names).correct


def _injected(gold: SGraph, code: str, item: Item, names: str, rng: random.Random, style: dict[str, bool]) -> str:
    """The gold with one error of type ``code`` injected, or "" if it did not make the answer wrong."""
    g = gold.copy()
    if not INJECTORS[code](g, rng):
        return ""
    candidate = render(g, rng, **style)
    return candidate if _is_wrong(item, candidate, names) else ""


def simulate(item: Item, options: SimOptions, rng_seed: int) -> str:
    code = options.error
    if code and code not in SIM_CODES:
        raise SettingsError(f"sim: unknown error {code!r}; known: {', '.join(SIM_CODES)}")
    rng = random.Random(f"dedc-sim:{options.seed}:{rng_seed}:{item.id}")
    names = item_names(item)
    gold = gold_sgraph(item, names)
    if not code and rng.random() < options.error_rate:
        code = rng.choice(ERROR_CODES + ("unparseable",))
    style = dict(shuffle_order=rng.random() < 0.3, shuffle_numbers=rng.random() < 0.2, newline=rng.random() < 0.2)
    wrapped = code == "format_violation" or rng.random() < WRAP_RATE
    if not code or code == "format_violation":
        text = render(gold, rng, **style)
    elif code == "unparseable":
        return unparseable(render(gold, rng, **style), rng)
    else:
        # Try the asked-for error a few times; when no variant of it applies to this item
        # (e.g. nothing to omit), any other error will do.
        tries = [code] * 12 + [c for c in ERROR_CODES if c != code]
        text = next((t for t in (_injected(gold, c, item, names, rng, style) for c in tries) if t), "")
        if not text:
            return unparseable(render(gold, rng, **style), rng)
    return wrap(text, rng, prose=code == "format_violation") if wrapped else text


def oracle(item: Item) -> str:
    return str(item.gold.get("answer", ""))
