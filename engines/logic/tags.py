"""The logic error taxonomy (paper section 3) and automatic tagging with evidence.

Three kinds of checks, each giving tags whose evidence names the symbols or subformulas:

1. Facts about the replies, tagged whatever the verdict: ``copied_formula`` (the step-1
   description contains the formula verbatim), ``format_violation`` (prose or a code
   fence around the step-2 formula), ``extra_operator`` (→ ↔ = ≠, or a quantifier in a
   propositional item: outside the dataset's grammar).
2. Vocabulary checks on a wrong round trip: symbols outside the vocabulary
   (``symbol_hallucination``), predicates with the wrong number of arguments
   (``arity_error``), bound variables left free (``quantifier_error``).
3. A structural diff of a wrong round trip against the original. Both formulas are
   brought to negation normal form (→ and ↔ expanded, negations pushed to the atoms,
   n-ary ∧/∨ flattened, quantifiers pulled out into a prefix list and bound variables
   renamed to the original's by name, then by where they are used, then by position);
   each node remembers whether its operator was flipped by a pushed negation, and its
   written form for the evidence. Then, top-down:

   - identical subformulas (order-free keys) match and are skipped;
   - at an ∧/∨ node, unmatched parts are compared as groups: the same literals and
     operators in the same order but grouped differently is a ``scope_error``
     (misplaced parentheses); a part whose own parts reappear one level up, or a part
     covering several original parts, is an ``operator_swap`` (or a ``negation_error``
     when the flipped operator came from a negation distributed without De Morgan's
     flip); a part whose negation's parts reappear is a ``negation_error``; the rest are
     paired by similarity and compared recursively, and what stays unpaired is an
     ``omission`` (original side) or an ``extra_subformula`` (round-trip side);
   - at literals: a flipped sign is a ``negation_error``, another name a
     ``symbol_hallucination``, another argument count an ``arity_error``, other
     arguments an ``argument_error``;
   - a node that is the exact negation of the original's is a ``negation_error``;
     different operators otherwise an ``operator_swap``.

   The quantifier prefixes are compared separately: a changed kind, a dropped or extra
   quantifier, or two quantifiers of different kinds in swapped order are a
   ``quantifier_error``.

Codes ``extra_subformula`` and ``argument_error`` are this engine's additions to the
stable codes (the paper names "hallucinating new expressions" and "changing predicate
arguments" among the common mistakes).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field

from engines.core import Tag, TagType
from engines.logic.formula import (
    AND,
    DUAL,
    EXISTS,
    FORALL,
    IMPLIES,
    OR,
    Arrow,
    Atom,
    Equal,
    Formula,
    Junction,
    Not,
    Quant,
    children,
    symbols,
    walk,
)
from engines.logic.render import show
from engines.logic.vocabulary import Vocabulary
from engines.taxonomy import Taxonomy, format_violation, unparseable

TAXONOMY = Taxonomy((
    TagType("symbol_hallucination", "Symbol hallucination",
            "A symbol that is not in the vocabulary, or another vocabulary symbol in place of the original one.",
            "symbols"),
    TagType("negation_error", "Negation error",
            "A literal or subformula negated where the original is not (or the reverse), or a negation "
            "distributed without De Morgan's flip of ∧ and ∨.", "structure"),
    TagType("operator_swap", "Operator swap", "∧ written as ∨, or ∨ as ∧.", "structure"),
    TagType("scope_error", "Scope error",
            "The same literals and operators in the same order, grouped differently (misplaced parentheses).",
            "structure"),
    TagType("omission", "Omission", "A clause or subformula of the original is missing.", "structure"),
    TagType("extra_subformula", "Extra subformula", "A clause or subformula the original does not have.",
            "structure"),
    TagType("arity_error", "Arity error",
            "A predicate applied to another number of arguments than the vocabulary gives it.", "symbols"),
    TagType("argument_error", "Argument error",
            "A predicate applied to other arguments (swapped, another object or another variable).", "symbols"),
    TagType("extra_operator", "Operator outside the grammar",
            "→, ↔, = or ≠ (or a quantifier in propositional logic) although the grammar has only ¬, ∧, ∨ "
            "(and ∀, ∃).", "grammar"),
    TagType("quantifier_error", "Quantifier error",
            "A quantifier changed (∀/∃), dropped, added, or moved past one of the other kind; or a bound "
            "variable left free.", "quantifiers"),
    TagType("copied_formula", "Copied formula",
            "The description (step 1) copies the formula verbatim instead of describing it.", "description"),
    unparseable("No formula could be read from the step-2 reply.", "format"),
    format_violation("Text around the formula (prose, a code fence, markup) had to be removed.", "format"),
))
LABELS = TAXONOMY.labels
ORDER = {t.code: i for i, t in enumerate(TAXONOMY)}
ERROR_CODES = tuple(t.code for t in TAXONOMY[:11])
MAX_EVIDENCE = 3
MAX_DESCRIPTION = 50_000  # characters of a description searched for a copied formula
_SYMBOL = {AND: "∧", OR: "∨", FORALL: "∀", EXISTS: "∃"}


tag = TAXONOMY.tag


@dataclass
class Findings:
    """Evidence per code, deduplicated, in taxonomy order when turned into tags."""

    evidence: dict[str, list[str]] = field(default_factory=dict)

    def add(self, code: str, text: str) -> None:
        found = self.evidence.setdefault(code, [])
        if text not in found:
            found.append(text)

    def tags(self) -> list[Tag]:
        out = []
        for code in sorted(self.evidence, key=lambda c: ORDER.get(c, len(ORDER))):
            items = self.evidence[code]
            more = f" (+{len(items) - MAX_EVIDENCE} more)" if len(items) > MAX_EVIDENCE else ""
            out.append(tag(code, "; ".join(items[:MAX_EVIDENCE]) + more))
        return out


# ------------------------------------------------------------- reply facts


def extra_operators(f: Formula, vocab: Vocabulary) -> Tag | None:
    """Operators outside the dataset's grammar (¬ ∧ ∨, plus ∀ ∃ in first-order items)."""
    counts: Counter[str] = Counter()
    for node in walk(f):
        if isinstance(node, Arrow):
            counts["→" if node.op == IMPLIES else "↔"] += 1
        elif isinstance(node, Not) and isinstance(node.body, Equal):
            counts["≠"] += 1
            counts["="] -= 1
        elif isinstance(node, Equal):
            counts["="] += 1
        elif isinstance(node, Quant) and not vocab.is_fol:
            counts[_SYMBOL[node.kind]] += 1
    used = [f"{op} ({n}×)" if n > 1 else op for op, n in counts.items() if n > 0]
    return tag("extra_operator", "uses " + ", ".join(used)) if used else None


_COPY_TOKEN = re.compile(r"[^\W\d]\w*|¬|~|!|∧|&|\^|∨|\||→|->|↔|<->|∀|∃|[()\[\],=≠]")
_CANON = {"~": "¬", "!": "¬", "&": "∧", "^": "∧", "|": "∨", "->": "→", "<->": "↔", "[": "(", "]": ")"}
_OPERATORS = frozenset("¬∧∨→↔∀∃=≠")


def _copy_tokens(text: str) -> list[str]:
    return [_CANON.get(t, t) for t in _COPY_TOKEN.findall(text.translate(_SUBSCRIPT_DIGITS))]


_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def copied_formula(description: str, formula_text: str) -> Tag | None:
    """The description contains (most of) the formula in symbols, verbatim.

    Token-wise (operator spellings unified, whitespace ignored): the longest stretch of
    the formula's tokens found contiguously in the description must hold an operator
    symbol and cover the whole formula, or at least 60% of it and 5 tokens. Operators
    written as words ("x1 or x2") are a description, not a copy. Only the first
    ``MAX_DESCRIPTION`` characters are searched (the comparison is quadratic).
    """
    description = description[:MAX_DESCRIPTION]
    if not description or not any(ch in description for ch in "¬~!∧&^∨|→↔∀∃-"):
        return None
    formula = _copy_tokens(formula_text)
    said = _copy_tokens(description)
    match = difflib.SequenceMatcher(None, said, formula, autojunk=False).find_longest_match(
        0, len(said), 0, len(formula))
    run = formula[match.b:match.b + match.size]
    need = len(formula) if len(formula) < 8 else max(5, int(0.6 * len(formula) + 0.999))
    if match.size < need or not any(t in _OPERATORS for t in run):
        return None
    shown = " ".join(run)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return tag("copied_formula", f"the description contains {match.size} of the formula's {len(formula)} "
                                 f"symbols verbatim: {shown!r}")


# -------------------------------------------------------------- vocabulary


def vocabulary_findings(output: Formula, original: Formula, vocab: Vocabulary, found: Findings) -> None:
    """Symbols outside the vocabulary, wrong arities, bound variables left free."""
    syms = symbols(output)
    for name in sorted(syms.propositions):
        if vocab.is_fol and vocab.arity(name) is not None:
            found.add("arity_error", f"{name} used without arguments; it takes {vocab.arity(name)}")
        elif name not in vocab.propositions:
            found.add("symbol_hallucination", f"{name} is not in the vocabulary")
    for name, arity in sorted(syms.predicates):
        want = vocab.arity(name)
        if want is None and name in vocab.propositions:
            found.add("arity_error", f"proposition {name} applied to {arity} argument(s)")
        elif want is None:
            found.add("symbol_hallucination", f"predicate {name} is not in the vocabulary")
        elif want != arity:
            found.add("arity_error", f"{name} takes {want} argument(s), used with {arity}")
    if not vocab.is_fol:
        return
    was_bound = symbols(original).bound
    for name in sorted(syms.constants):
        if name in vocab.constants:
            continue
        if name in vocab.variables or name in was_bound:
            found.add("quantifier_error", f"{name} occurs free: its quantifier is missing")
        else:
            found.add("symbol_hallucination", f"object {name} is not in the vocabulary")


# ------------------------------------------------------- normal form for diffs


@dataclass
class _Node:
    kind: str  # "lit" | AND | OR
    parts: tuple["_Node", ...]
    atom: tuple[str, tuple[str, ...]] | None  # (name, args) of a literal; "=" for equality
    positive: bool
    dual: bool  # the operator was flipped by a negation pushed through it
    source: Formula  # as written (for evidence)
    key: str  # order-free identity
    seq: tuple[str, ...]  # literals and operators in reading order (grouping dropped)
    leaves: tuple["_Node", ...] = ()  # the parts with same-operator parts merged in (what the key is of)
    context: str = ""  # the operator (as written) of the ∧/∨ this node was written in
    _dual_key: str | None = None
    _names: Counter[str] | None = None

    @property
    def names(self) -> Counter[str]:
        """Atom names below (with repeats), for pairing similar parts; computed when first asked."""
        if self._names is None:
            if self.kind == "lit":
                assert self.atom is not None
                self._names = Counter((self.atom[0],))
            else:
                self._names = Counter()
                for p in self.parts:
                    self._names.update(p.names)
        return self._names

    def dual_key(self) -> str:
        """The key of this node's negation in negation normal form."""
        if self._dual_key is None:
            if self.kind == "lit":
                self._dual_key = ("+" if not self.positive else "-") + self.key[1:]
            else:
                self._dual_key = DUAL[self.kind] + "(" + ",".join(sorted(p.dual_key() for p in self.leaves)) + ")"
        return self._dual_key


@dataclass(frozen=True)
class _Quantifier:
    kind: str  # after pushing negations through (¬∀ is ∃¬)
    var: str  # renamed to the original's variable where one corresponds


def _lit(atom: Atom | Equal, positive: bool, rename: dict[str, str], source: Formula) -> _Node:
    if isinstance(atom, Equal):
        name, args = "=", tuple(sorted((rename.get(atom.left, atom.left), rename.get(atom.right, atom.right))))
    else:
        name, args = atom.name, tuple(rename.get(a, a) for a in atom.args)
    key = ("+" if positive else "-") + name + "(" + ",".join(args) + ")"
    return _Node("lit", (), (name, args), positive, False, source, key, (key,))


def _junction(op: str, parts: list[_Node], dual: bool, source: Formula) -> _Node:
    """An ∧/∨ node. A part of the same operator written the same way is merged in; one that got
    this operator from a pushed negation (``¬(a ∨ b)`` inside a ∧) stays a group of its own, so the
    diff still sees how it was written. The key merges everything: equal meaning, equal key."""
    flat: list[_Node] = []
    for p in parts:
        if p.kind == op and p.dual == dual:
            flat.extend(p.parts)
        else:
            p.context = _surface(op, dual)
            flat.append(p)
    if len(flat) == 1:
        return flat[0]
    leaves = tuple(q for p in flat for q in (p.leaves if p.kind == op else (p,)))
    key = op + "(" + ",".join(sorted(p.key for p in leaves)) + ")"
    return _Node(op, tuple(flat), None, True, dual, source, key, _joined_seq(flat, op), leaves)


def normal_form(f: Formula, rename: dict[str, str] | None = None) -> tuple[_Node, list[_Quantifier]]:
    """(negation normal form without quantifiers, the quantifiers met in reading order)."""
    rename = rename or {}
    quants: list[_Quantifier] = []

    def go(g: Formula, positive: bool) -> _Node:
        written = g if positive else Not(g)
        if isinstance(g, (Atom, Equal)):
            return _lit(g, positive, rename, written)
        if isinstance(g, Not):
            return go(g.body, not positive)
        if isinstance(g, Junction):
            op = g.op if positive else DUAL[g.op]
            return _junction(op, [go(p, positive) for p in g.parts], not positive, written)
        if isinstance(g, Arrow):
            if g.op == IMPLIES:  # a → b  =  ¬a ∨ b
                left, right = go(g.left, not positive), go(g.right, positive)
                return _junction(OR if positive else AND, [left, right], False, written)
            # a ↔ b  =  (¬a ∨ b) ∧ (a ∨ ¬b);   ¬(a ↔ b)  =  (a ∧ ¬b) ∨ (¬a ∧ b)
            inner, outer = (OR, AND) if positive else (AND, OR)
            return _junction(outer, [_junction(inner, [go(g.left, False), go(g.right, True)], False, written),
                                     _junction(inner, [go(g.left, True), go(g.right, False)], False, written)],
                             False, written)
        assert isinstance(g, Quant)
        quants.append(_Quantifier(g.kind if positive else DUAL[g.kind], rename.get(g.var, g.var)))
        return go(g.body, positive)

    return go(f, True), quants


# --------------------------------------------------------- bound variables


def _bound_slots(f: Formula) -> tuple[list[str], dict[str, set[tuple[str, int]]]]:
    """Bound variables in reading order and where each is used (predicate, argument position)."""
    order: list[str] = []
    slots: dict[str, set[tuple[str, int]]] = {}
    stack: list[tuple[Formula, frozenset[str]]] = [(f, frozenset())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, Quant):
            if node.var not in order:
                order.append(node.var)
            stack.append((node.body, scope | {node.var}))
        elif isinstance(node, Atom):
            for i, a in enumerate(node.args):
                if a in scope:
                    slots.setdefault(a, set()).add((node.name, i))
        else:
            stack.extend((c, scope) for c in reversed(children(node)))
    return order, slots


def variable_map(original: Formula, output: Formula) -> dict[str, str]:
    """Output bound variable -> original bound variable: same name, then same use, then position."""
    o_order, o_slots = _bound_slots(original)
    r_order, r_slots = _bound_slots(output)
    mapping: dict[str, str] = {}
    for v in r_order:
        if v in o_order:
            mapping[v] = v
    for v in r_order:
        if v in mapping:
            continue
        free = [o for o in o_order if o not in mapping.values()]
        scored = [(len(r_slots.get(v, set()) & o_slots.get(o, set())), -o_order.index(o), o) for o in free]
        best = max(scored, default=None)
        if best and best[0] > 0:
            mapping[v] = best[2]
    for i, v in enumerate(r_order):
        if v not in mapping and i < len(o_order) and o_order[i] not in mapping.values():
            mapping[v] = o_order[i]
    return mapping


def quantifier_findings(orig: list[_Quantifier], out: list[_Quantifier], found: Findings) -> None:
    o_kind = {q.var: q.kind for q in orig}
    r_kind = {q.var: q.kind for q in out}
    for q in orig:
        if q.var not in r_kind:
            found.add("quantifier_error", f"{_SYMBOL[q.kind]}{q.var} dropped")
        elif r_kind[q.var] != q.kind:
            found.add("quantifier_error", f"{_SYMBOL[q.kind]}{q.var} written as {_SYMBOL[r_kind[q.var]]}{q.var}")
    for q in out:
        if q.var not in o_kind:
            found.add("quantifier_error", f"extra quantifier {_SYMBOL[q.kind]}{q.var}")
    o_pos = {q.var: i for i, q in reversed(list(enumerate(orig)))}
    r_pos = {q.var: i for i, q in reversed(list(enumerate(out)))}
    common = [q.var for q in orig if q.var in r_pos]
    for i, u in enumerate(common):
        for v in common[i + 1:]:
            if o_kind[u] != o_kind[v] and o_pos[u] < o_pos[v] and r_pos[u] > r_pos[v]:
                found.add("quantifier_error", f"{_SYMBOL[o_kind[u]]}{u} {_SYMBOL[o_kind[v]]}{v} reordered as "
                                              f"{_SYMBOL[r_kind[v]]}{v} {_SYMBOL[r_kind[u]]}{u}")


# -------------------------------------------------------------------- diff


def _text(n: _Node) -> str:
    return show(n.source)


def _group(nodes: list[_Node], op: str) -> str:
    return f" {_SYMBOL[op]} ".join(_text(n) if n.kind == "lit" else f"({_text(n)})" for n in nodes)


def _keys(nodes: list[_Node]) -> Counter[str]:
    return Counter(n.key for n in nodes)


def _surface(kind: str, dual: bool) -> str:
    """The operator as written: a node flipped by a pushed negation was written with the other one."""
    return DUAL[kind] if dual else kind


class _Differ:
    def __init__(self, found: Findings):
        self.found = found

    def node(self, a: _Node, b: _Node) -> None:
        if a.key == b.key:
            return
        if a.kind == "lit" and b.kind == "lit":
            self.literal(a, b)
        elif a.kind == "lit" or b.kind == "lit":
            op = b.kind if a.kind == "lit" else a.kind
            self.parts(op, list(a.parts) or [a], list(b.parts) or [b])
        elif a.kind == b.kind:
            self.parts(a.kind, list(a.parts), list(b.parts))
        elif a.dual_key() == b.key:
            self.found.add("negation_error", f"{_text(a)} written as its negation {_text(b)}")
        elif a.seq == b.seq:
            self.found.add("scope_error", f"{_text(a)} regrouped as {_text(b)}")
        else:
            evidence = f"{_text(a)} written as {_text(b)}"
            self.changed_operator(_surface(a.kind, a.dual), _surface(b.kind, b.dual), evidence)
            self.parts(b.kind, list(a.parts), list(b.parts))

    def changed_operator(self, written_a: str, written_b: str, evidence: str) -> None:
        """∧/∨ differ in negation normal form: a swap if they were written differently, else a
        negation that moved without De Morgan's exchange of ∧ and ∨ (or was added or dropped)."""
        if written_a == written_b:
            self.found.add("negation_error", f"{evidence}: the {_SYMBOL[written_a]} kept where a negation "
                                             "changed (De Morgan)")
        else:
            self.found.add("operator_swap", f"{_SYMBOL[written_a]} written as {_SYMBOL[written_b]}: {evidence}")

    def literal(self, a: _Node, b: _Node) -> None:
        assert a.atom is not None and b.atom is not None
        (name_a, args_a), (name_b, args_b) = a.atom, b.atom
        if name_a != name_b:
            self.found.add("symbol_hallucination", f"{_text(a)} written as {_text(b)}")
        elif len(args_a) != len(args_b):
            self.found.add("arity_error", f"{_text(a)} written as {_text(b)}")
        elif args_a != args_b:
            self.found.add("argument_error", f"{_text(a)} written as {_text(b)}")
        if a.positive != b.positive:
            self.found.add("negation_error", f"{_text(a)} written as {_text(b)}")

    def parts(self, op: str, A: list[_Node], B: list[_Node]) -> None:
        """Align the parts of two ∧ (or ∨) nodes: exact matches, then groups, then pairs."""
        rest_a, rest_b = _unmatched(A, B), _unmatched(B, A)
        _drop_regrouped_equals(op, rest_a, rest_b)
        _drop_regrouped_equals(op, rest_b, rest_a)
        if not rest_a and not rest_b:
            return
        regrouped = _regrouping(op, A, B, rest_a, rest_b)
        if regrouped is not None:
            self.found.add("scope_error", f"{_group(regrouped[0], op)} regrouped as {_group(regrouped[1], op)}")
            return
        for mine, theirs, original in ((rest_a, rest_b, True), (rest_b, rest_a, False)):
            self.covering(op, mine, theirs, original)
            self.negated(op, mine, theirs, original)
        for a, b in _pair(rest_a, rest_b):
            self.node(a, b)
        for a in rest_a:
            self.found.add("omission", f"{_text(a)} is missing")
        for b in rest_b:
            self.found.add("extra_subformula", f"{_text(b)} is not in the original")

    def covering(self, op: str, mine: list[_Node], theirs: list[_Node], original: bool) -> None:
        """A part (of the other operator) whose own parts are spread over several parts of the other side.

        ``(x1 ∨ x2 ∨ x3)`` against ``x1, x2, x3`` (or ``(x1 ∨ x2), x3``) at a ∧ level: the ∨ were
        written as ∧ and the pieces merged into the level above.
        """
        for n in list(mine):
            if n.kind != DUAL[op]:
                continue
            chosen = _cover(_keys([q for p in n.parts for q in (p.leaves if p.kind == op else (p,))]), n.kind, theirs)
            if chosen is None:
                continue
            written = (_surface(n.kind, n.dual), chosen[0].context)
            shown = (_text(n), _group(chosen, op))
            if not original:
                written, shown = written[::-1], shown[::-1]
            self.changed_operator(*written, f"{shown[0]} written as {shown[1]}")
            for t in chosen:
                theirs.remove(t)
            mine.remove(n)

    def negated(self, op: str, mine: list[_Node], theirs: list[_Node], original: bool) -> None:
        """A part whose negation (pushed inside, so merged one level up) is on the other side."""
        for n in list(mine):
            if n.kind != DUAL[op]:
                continue
            negation = Counter(p.dual_key() for p in n.parts)
            if not negation <= _keys(theirs):
                continue
            self.found.add("negation_error", f"{_text(n)} negated in the round trip" if original
                           else f"{_text(n)} is the negation of what the original has")
            _take(theirs, negation)
            mine.remove(n)


def _cover(need: Counter[str], kind: str, theirs: list[_Node]) -> list[_Node] | None:
    """Two or more of ``theirs`` whose keys (or, for a ``kind`` node, whose parts' keys) make up ``need``."""
    if not any(need[t.key] or (t.kind == kind and any(need[p.key] for p in t.parts)) for t in theirs):
        return None
    left = Counter(need)
    chosen: list[_Node] = []
    for t in theirs:
        if left[t.key] > 0:
            left[t.key] -= 1
            chosen.append(t)
        elif t.kind == kind:
            pieces = _keys(list(t.parts))
            if all(left[k] >= c for k, c in pieces.items()):
                left.subtract(pieces)
                chosen.append(t)
    return chosen if len(chosen) >= 2 and not any(left.values()) else None


def _drop_regrouped_equals(op: str, mine: list[_Node], theirs: list[_Node]) -> None:
    """Drop a group of the level's own operator whose leaves the other side has as separate parts.

    ``¬(x1 ∨ x2) ∧ x3`` against ``¬x1 ∧ ¬x2 ∧ x3``: a negation pushed through correctly, no error.
    """
    for n in list(mine):
        if n.kind != op:
            continue
        leaves = _keys(list(n.leaves))
        if leaves <= _keys(theirs):
            _take(theirs, leaves)
            mine.remove(n)


def _regrouping(op: str, A: list[_Node], B: list[_Node], rest_a: list[_Node],
                rest_b: list[_Node]) -> tuple[list[_Node], list[_Node]] | None:
    """Neighbouring parts of one side written, in the same order, as differently grouped parts of the other.

    The unmatched parts are tried first; with repeated parts (CNF clauses repeat) the group
    may include a part that matched a twin elsewhere, so every run of neighbours of one side
    is tried against the other side's unmatched parts.
    """
    if not rest_a or not rest_b:
        return None
    if _joined_seq(rest_a, op) == _joined_seq(rest_b, op):
        return rest_a, rest_b
    for mine, theirs_all, rest in ((A, B, rest_b), (B, A, rest_a)):
        target = _joined_seq(rest, op)
        lengths = [len(n.seq) for n in mine]
        for i in range(len(mine)):
            total = -1
            for j in range(i, len(mine)):
                total += lengths[j] + 1
                if total > len(target):
                    break
                window = mine[i:j + 1]
                if total == len(target) and _joined_seq(window, op) == target and \
                        _keys([n for k, n in enumerate(mine) if not i <= k <= j]) == \
                        _keys([n for n in theirs_all if n not in rest]):
                    return (window, rest) if mine is A else (rest, window)
    return None


def _unmatched(mine: list[_Node], theirs: list[_Node]) -> list[_Node]:
    """The nodes of ``mine`` without an identical node in ``theirs`` (as multisets)."""
    left = _keys(theirs)
    rest = []
    for n in mine:
        if left[n.key] > 0:
            left[n.key] -= 1
        else:
            rest.append(n)
    return rest


def _take(nodes: list[_Node], keys: Counter[str]) -> None:
    want = Counter(keys)
    for n in list(nodes):
        if want[n.key] > 0:
            want[n.key] -= 1
            nodes.remove(n)


def _joined_seq(nodes: list[_Node], op: str) -> tuple[str, ...]:
    """The reading-order tokens of ``nodes`` joined by ``op`` (grouping dropped)."""
    seq: list[str] = []
    for i, n in enumerate(nodes):
        if i:
            seq.append(op)
        seq.extend(n.seq)
    return tuple(seq)


def _similarity(a: _Node, b: _Node) -> float:
    if a.kind == "lit" and b.kind == "lit":
        assert a.atom is not None and b.atom is not None
        return 3.0 if a.atom == b.atom else 2.0 if a.atom[0] == b.atom[0] else 1.0
    names_a, names_b = a.names, b.names
    overlap = sum((names_a & names_b).values()) / max(1, sum((names_a | names_b).values()))
    if a.kind == "lit" or b.kind == "lit":
        return 0.1 + overlap
    exact = len(set(p.key for p in a.parts) & set(p.key for p in b.parts))
    return 0.5 + overlap + exact + (0.5 if a.kind == b.kind else 0.0)


def _pair(A: list[_Node], B: list[_Node]) -> list[tuple[_Node, _Node]]:
    """Greedy best pairs between the leftovers; the paired nodes are removed from both lists."""
    scored = sorted(((-_similarity(a, b), i, j) for i, a in enumerate(A) for j, b in enumerate(B)))
    used_a: set[int] = set()
    used_b: set[int] = set()
    pairs = []
    for _, i, j in scored:
        if i in used_a or j in used_b:
            continue
        used_a.add(i)
        used_b.add(j)
        pairs.append((A[i], B[j]))
    A[:] = [a for i, a in enumerate(A) if i not in used_a]
    B[:] = [b for j, b in enumerate(B) if j not in used_b]
    return pairs


# ------------------------------------------------------------------ entry


def error_tags(original: Formula, output: Formula, vocab: Vocabulary) -> list[Tag]:
    """Why a (not equivalent) round-trip formula differs from the original, with evidence."""
    found = Findings()
    vocabulary_findings(output, original, vocab, found)
    orig_nf, orig_q = normal_form(original)
    out_nf, out_q = normal_form(output, variable_map(original, output) if vocab.is_fol else None)
    quantifier_findings(orig_q, out_q, found)
    _Differ(found).node(orig_nf, out_nf)
    return found.tags()
