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
    IMPLIES,
    Arrow,
    Equal,
    Formula,
    Not,
    Quant,
    symbols,
    walk,
)
from engines.logic.diff import Differ
from engines.logic.normal import SYMBOL, normal_form, quantifier_findings, variable_map
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
            counts[SYMBOL[node.kind]] += 1
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


# ------------------------------------------------------------------ entry


def error_tags(original: Formula, output: Formula, vocab: Vocabulary) -> list[Tag]:
    """Why a (not equivalent) round-trip formula differs from the original, with evidence."""
    found = Findings()
    vocabulary_findings(output, original, vocab, found)
    orig_nf, orig_q = normal_form(original)
    out_nf, out_q = normal_form(output, variable_map(original, output) if vocab.is_fol else None)
    quantifier_findings(orig_q, out_q, found)
    Differ(found).node(orig_nf, out_nf)
    return found.tags()
