"""Equivalence by Z3: the judge of the round trip (no human labels anywhere).

``f ≡ g`` is checked as two implications, each its own bounded solver call:
``f ∧ ¬g`` unsatisfiable means f ⊨ g (forward), ``g ∧ ¬f`` unsatisfiable means g ⊨ f
(backward). Verdicts:

* ``equivalent``: both unsatisfiable; or, without a solver call, the round trip parsed to
  exactly the original formula (same tree: ∧/∨ flattened, nothing reordered) - a formula
  is equivalent to itself, so Z3 is asked only when the two differ in any way;
* ``not_equivalent``: a satisfying assignment (a countermodel) of either; the model is
  read back into a ``models.Structure`` and both formulas are evaluated on it in Python,
  so the view shows two different truth values computed independently of Z3;
* ``unknown``: a call spent its resource budget (``rlimit``, or Z3 gave up on quantifiers),
  or a formula was larger than ``MAX_SOLVER_NODES`` and never reached the solver. Never
  counted correct.

The budget is Z3's resource limit, a count of solver steps, not wall-clock time: the same
pair gets the same verdict on any machine and under any load. Each pair is checked in a
fresh Z3 context, so what was checked before (another item, another thread) cannot change
the search either.

Z3's quantifier instantiation can loop on small first-order problems it cannot prove
(``∀x∃y p(x,y)`` against ``∃y∀x p(x,y)``). A first-order implication is therefore first
asked with the domain bounded to 1, 2, then 3 elements (each its own bounded call, a few
milliseconds): a model there is a genuine countermodel (a finite structure is a
structure). "Unsat under a bound" proves nothing, so only then is the unbounded question
asked, whose "unsat" is the proof of the implication.

Translation: each check is one SMT-LIB text parsed by Z3 (``parse_smt2_string``), which
is an order of magnitude cheaper than building terms through the Python API. Propositions
are Booleans; first-order formulas live over one uninterpreted sort ``Obj``: constants
are ``Obj`` constants, a predicate is a function ``Obj^k -> Bool`` per (name, arity) (so
``p(a)`` and ``p(a, b)`` are different predicates, as an arity error makes them), ``=`` is
equality on ``Obj``. A bound variable is named by its quantifier's nesting depth, so
shadowing cannot capture.

One solver with push/pop serves the calls of one pair (a new one after a call that gave up).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import z3

from engines.logic.formula import (
    AND,
    FORALL,
    IMPLIES,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
)
from engines.logic.models import Structure, evaluate
from engines.logic.settings import DEFAULT_RLIMIT

EQUIVALENT, NOT_EQUIVALENT, UNKNOWN = "equivalent", "not_equivalent", "unknown"
IDENTICAL = "identical"  # both implications hold trivially: the round trip parsed to the original formula
MAX_SOLVER_NODES = 2_000  # larger formulas are never handed to Z3 (verdict unknown)
MAX_TABLE_CELLS = 4_096  # predicate tuples read back from a countermodel
FINITE_DOMAINS = 3  # first-order checks look for countermodels of 1..3 elements first


@dataclass(frozen=True)
class Outcome:
    verdict: str  # EQUIVALENT | NOT_EQUIVALENT | UNKNOWN
    forward: str  # original ⊨ round trip: "holds" | "fails" | "unknown" | "identical" | "not checked"
    backward: str  # round trip ⊨ original
    countermodel: Structure | None = None
    values: tuple[bool, bool] | None = None  # (original, round trip) in the countermodel
    reason: str = ""  # why unknown
    seconds: float = 0.0


class _State:
    """The Z3 context and solver of one pair's checks (Z3 contexts are not thread-safe)."""

    def __init__(self, rlimit: int) -> None:
        self.ctx = z3.Context()
        self.rlimit = rlimit
        self.reset_solver()

    def reset_solver(self) -> None:
        self.solver = z3.Solver(ctx=self.ctx)
        self.solver.set("rlimit", self.rlimit)


def _quote(kind: str, name: str) -> str:
    """An SMT-LIB symbol per role (names are ``\\w+``, so ``|...|`` quoting is always valid)."""
    return f"|{kind}:{name}|"


class SmtText:
    """Formulas as SMT-LIB terms, collecting the declarations they need on the way."""

    def __init__(self) -> None:
        self.props: set[str] = set()
        self.consts: set[str] = set()
        self.preds: set[tuple[str, int]] = set()
        self.nodes = 0  # formula nodes written so far (the size cap is checked on this)

    def term(self, t: str, scope: dict[str, str]) -> str:
        bound = scope.get(t)
        if bound is not None:
            return bound
        self.consts.add(t)
        return _quote("const", t)

    def formula(self, f: Formula, level: int = 0, scope: dict[str, str] | None = None) -> str:
        """``f`` as a term; ``level`` counts enclosing quantifiers (one bound symbol per level)."""
        scope = scope or {}
        self.nodes += 1
        if isinstance(f, Atom):
            if not f.args:
                self.props.add(f.name)
                return _quote("prop", f.name)
            self.preds.add((f.name, len(f.args)))
            args = " ".join(self.term(a, scope) for a in f.args)
            return f"({_quote('pred', f'{f.name}/{len(f.args)}')} {args})"
        if isinstance(f, Equal):
            return f"(= {self.term(f.left, scope)} {self.term(f.right, scope)})"
        if isinstance(f, Not):
            return f"(not {self.formula(f.body, level, scope)})"
        if isinstance(f, Junction):
            return f"({'and' if f.op == AND else 'or'} {' '.join([self.formula(p, level, scope) for p in f.parts])})"
        if isinstance(f, Arrow):
            op = "=>" if f.op == IMPLIES else "="
            return f"({op} {self.formula(f.left, level, scope)} {self.formula(f.right, level, scope)})"
        assert isinstance(f, Quant)
        var = _quote("bound", str(level + 1))
        body = self.formula(f.body, level + 1, {**scope, f.var: var})
        return f"({'forall' if f.kind == FORALL else 'exists'} (({var} Obj)) {body})"

    def declarations(self) -> str:
        lines = ["(declare-sort Obj 0)"]
        lines += [f"(declare-const {_quote('prop', p)} Bool)" for p in sorted(self.props)]
        lines += [f"(declare-const {_quote('const', c)} Obj)" for c in sorted(self.consts)]
        for name, arity in sorted(self.preds):
            lines.append(f"(declare-fun {_quote('pred', f'{name}/{arity}')} ({' '.join(['Obj'] * arity)}) Bool)")
        return "\n".join(lines)


def check_equivalence(original: Formula, output: Formula, rlimit: int = DEFAULT_RLIMIT,
                      explain: bool = True) -> Outcome:
    """Decide ``original ≡ output`` with two bounded implication checks (none for the same formula).

    ``explain=False`` (the runner, which stores no views) stops at the first implication that
    fails (the verdict is then settled; the other direction is "not checked") and does not
    read the countermodel back.
    """
    started = time.perf_counter()
    if output == original:
        return Outcome(EQUIVALENT, IDENTICAL, IDENTICAL, seconds=time.perf_counter() - started)
    text = SmtText()
    f = text.formula(original)
    first = text.nodes
    g = text.formula(output)
    biggest = max(first, text.nodes - first)
    if biggest > MAX_SOLVER_NODES:
        return Outcome(UNKNOWN, "not checked", "not checked",
                       reason=f"formula too large for the solver ({biggest} nodes; limit {MAX_SOLVER_NODES})")
    header = text.declarations()
    quantified = any(q in t for q in ("(forall", "(exists") for t in (f, g))
    state = _State(rlimit)
    results: list[str] = []
    found: z3.ModelRef | None = None
    reason = ""
    for premise, conclusion in ((f, g), (g, f)):
        if "fails" in results and not explain:
            results.append("not checked")
            continue
        verdict, model, why = _decide(state, header, f"(assert (and {premise} (not {conclusion})))",
                                      quantified, explain)
        results.append(verdict)
        if found is None:
            found = model
        reason = reason or why
    forward, backward = results
    seconds = time.perf_counter() - started
    if "fails" in results:
        if found is None:
            return Outcome(NOT_EQUIVALENT, forward, backward, seconds=seconds)
        structure = _structure(found)
        values = (evaluate(original, structure), evaluate(output, structure))
        return Outcome(NOT_EQUIVALENT, forward, backward, structure, values, seconds=seconds)
    if "unknown" in results:
        return Outcome(UNKNOWN, forward, backward, reason=reason, seconds=seconds)
    return Outcome(EQUIVALENT, forward, backward, seconds=seconds)


def _decide(state: _State, header: str, goal: str, quantified: bool,
            want_model: bool) -> tuple[str, z3.ModelRef | None, str]:
    """One implication. First-order goals are first tried on domains of 1..3 elements (cheap, and
    Z3's unbounded search may loop on exactly these), then asked of the solver unbounded."""
    for bound in range(1, FINITE_DOMAINS + 1) if quantified else ():
        verdict, model, _ = _implies(state, f"{header}\n{_domain_bound(bound)}\n{goal}", want_model)
        if verdict == "fails":
            return verdict, model, ""
    return _implies(state, f"{header}\n{goal}", want_model)


def _domain_bound(k: int) -> str:
    """SMT-LIB asserting that ``Obj`` has at most ``k`` elements (finite model finding)."""
    names = [_quote("dom", str(i)) for i in range(k)]
    members = " ".join(f"(= {_quote('bound', '0')} {n})" for n in names)
    decls = "".join(f"(declare-const {n} Obj)" for n in names)
    return f"{decls}(assert (forall (({_quote('bound', '0')} Obj)) (or {members} false)))"


def _implies(state: _State, problem: str, want_model: bool) -> tuple[str, z3.ModelRef | None, str]:
    """("holds" | "fails" | "unknown", countermodel if it fails and is wanted, why unknown)."""
    solver = state.solver
    solver.push()
    try:
        solver.add(z3.parse_smt2_string(problem, ctx=state.ctx))
        result = solver.check()
        if result == z3.unsat:
            return "holds", None, ""
        if result == z3.sat:
            return "fails", solver.model() if want_model else None, ""
        why = solver.reason_unknown() or "unknown"
    finally:
        solver.pop()
    state.reset_solver()  # a solver that gave up is not reused
    return "unknown", None, f"resource limit ({state.rlimit} units)" if "limit" in why or "canceled" in why else why


def _structure(model: z3.ModelRef) -> Structure:
    """The countermodel as a plain structure (symbols the model leaves out get the defaults)."""
    props: dict[str, bool] = {}
    consts: dict[str, z3.ExprRef] = {}
    preds: list[tuple[str, int, z3.FuncDeclRef]] = []
    sort = None
    for decl in model.decls():
        kind, _, name = decl.name().partition(":")
        if kind == "prop":
            props[name] = z3.is_true(model[decl])
        elif kind == "const":
            consts[name] = model[decl]
            sort = decl.range()
        elif kind == "pred":
            base, _, arity = name.rpartition("/")
            preds.append((base, int(arity), decl))
            sort = decl.domain(0)
    universe = list(model.get_universe(sort) or []) if sort is not None else []
    if not consts and not preds and not universe:
        return Structure(domain=("e0",), propositions=props)
    names = {str(e): f"e{i}" for i, e in enumerate(universe)} or {"?": "e0"}
    domain = tuple(names.values())
    constants = {c: names.get(str(v), domain[0]) for c, v in sorted(consts.items())}
    extensions: dict[tuple[str, int], frozenset[tuple[str, ...]]] = {}
    for name, arity, decl in sorted(preds, key=lambda p: (p[0], p[1])):
        if len(universe) ** arity > MAX_TABLE_CELLS:
            continue
        extensions[(name, arity)] = frozenset(
            tuple(names[str(e)] for e in args) for args in itertools.product(universe, repeat=arity)
            if z3.is_true(model.eval(decl(*args), model_completion=True)))
    return Structure(domain=domain, constants=constants, predicates=extensions, propositions=props)
