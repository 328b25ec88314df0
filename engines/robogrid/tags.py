"""The failure taxonomy of appendix A.4 and automatic tagging, each tag with its evidence.

Syntactic fragility is read from the tokens of a program that does not parse
(``syntax_tags``): the grammar's scanner marks every word and character it does not
know, so the rules below are about *which* unknown token sits *where*:

* lexical_mapping_failure: a terminal or rule name (``DO``, ``HOLDING``, ``if_stmt``)
  written as a keyword, a keyword of a natural lexicon this grammar does not use
  (``loop`` under Alien, ``repeat`` where this grammar says ``loop``), a keyword in the
  wrong case, or an opaque ``v_xxxx`` token this grammar does not define;
* operator_confusion: an arithmetic word (``plus``, ``times``) between or before
  operands, an operator symbol the grammar does not define (``+`` under Alien, ``&&``),
  or an operator in another style's position (prefix in Block/C, infix in S-expr);
* scoping_failure: a control statement wrapped as an action (``do loop ... end``,
  ``] end``, ``};``, ``((repeat ...))``);
* premature_scope_termination: brackets that do not balance: a closer with nothing
  open, a closer of the wrong kind, or blocks still open where the program ends.

Behavioural and semantic failures are read from a parseable output against the gold
tree (``drift_tags``, using compare.py): a block that ends in the wrong place
(premature_scope_termination), the gold cut short (planning_horizon_collapse), a count or
distance with the same value but another form (arithmetic_flattening) or another value
(arithmetic_collapse), a condition that is equivalent but shaped differently
(boolean_flattening) or over the same items but not equivalent (predicate_inversion), a
statement repeated right after itself (autoregressive_echoing). Anything else that makes
the trees differ is ``ast_mismatch``, and an execution stopped at the step cap is
``step_limit``; both are this engine's additions to the paper's list.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from engines.core import Tag, TagType
from engines.parsing import Positions
from engines.robogrid import compare
from engines.robogrid.grammars import (
    CODE_SHARE,
    SYMBOL_NAMES,
    UNKNOWN_CHAR,
    UNKNOWN_WORD,
    Grammar,
    Lexeme,
    code_share,
)
from engines.robogrid.lexicon import NATURAL_WORDS
from engines.robogrid.nodes import (
    Path,
    Program,
    atoms,
    block_of,
    equivalent,
    fmt_int,
    get,
    head,
    operator_count,
    path_text,
    show_cond,
    show_expr,
    value,
)
from engines.robogrid.world import MAX_STEPS, Execution, State
from engines.taxonomy import Taxonomy, format_violation, unparseable

At = Callable[[Lexeme], str]  # where a token of the reply is, as text ("line 2, column 5")
Add = Callable[[str, str], None]  # records one piece of evidence for a tag code

TAXONOMY = Taxonomy((
    TagType("lexical_mapping_failure", "Lexical mapping failure",
            "Keywords left as terminal/rule names, or taken from a natural lexicon (or another lexicon) instead of "
            "this grammar's spellings (A.4.1 case 1).", "syntax"),
    TagType("operator_confusion", "Operator confusion",
            "Arithmetic words or foreign operator symbols instead of the grammar's operators, or operators in "
            "another style's position (A.4.1 case 3).", "syntax"),
    TagType("scoping_failure", "Hierarchical scoping failure",
            "An action wrapper put around a control block (A.4.1 case 2).", "syntax"),
    TagType("premature_scope_termination", "Premature scope termination",
            "A block closed early or left open: unbalanced delimiters, or statements moved out of (or into) a "
            "block (A.4.1 case 4).", "syntax"),
    TagType("predicate_inversion", "Logical predicate inversion",
            "A condition over the right items with a negation or connective changed (A.4.2 case 1).", "behaviour"),
    TagType("arithmetic_collapse", "Arithmetic simulation collapse",
            "A count or distance expression with another value than the gold's (A.4.2 case 2).", "behaviour"),
    TagType("planning_horizon_collapse", "Planning horizon collapse",
            "The program stops before the end: the gold cut short, or the robot left on the gold's way "
            "(A.4.2 case 3).", "behaviour"),
    TagType("step_limit", "Step limit reached",
            f"Execution stopped at the interpreter's cap of {MAX_STEPS} steps (counted as not reaching the "
            "state).", "behaviour"),
    TagType("arithmetic_flattening", "Arithmetic AST flattening",
            "An expression replaced by its value (or re-shaped) keeping the value (A.4.3 case 1).", "semantics"),
    TagType("boolean_flattening", "Boolean AST flattening",
            "A condition re-nested into an equivalent shape (A.4.3 case 2).", "semantics"),
    TagType("autoregressive_echoing", "Autoregressive echoing",
            "A statement or block repeated right after itself (A.4.3 case 3).", "semantics"),
    TagType("ast_mismatch", "Other structural difference",
            "The tree differs from the gold in a way no other tag names (another action, item, branch...).",
            "semantics"),
    unparseable("The output does not parse under the item's grammar (or has no "
            "VALID/INVALID).", "format"),
    format_violation("Extra prose, fences or markers around the answer.", "format"),
))
LABELS = TAXONOMY.labels
CODES = tuple(t.code for t in TAXONOMY)

ARITH_WORDS = frozenset({"plus", "add", "added", "sum", "times", "multiplied", "multiplied_by", "multiply", "mul",
                         "product", "minus", "x"})
OPERATOR_CHARS = frozenset("+*-/×&|!%")
_ALIEN_SHAPE = re.compile(r"v_[a-z]{2,}\Z")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
NEAR_COPY_EDITS = 3
SCAN_CHARS = 20_000  # the head of a failed reply that is read for tags (generated programs are < 10 KB)  # goal task: a reply this close to the reference solution is compared with it


tag = TAXONOMY.tag


def _join(items: Sequence[str], limit: int = 3) -> str:
    seen = list(dict.fromkeys(items))
    text = "; ".join(seen[:limit])
    return text + (f" (+{len(seen) - limit} more)" if len(seen) > limit else "")


def _tags(found: dict[str, list[str]]) -> list[Tag]:
    return [tag(code, _join(items)) for code in CODES if (items := found.get(code))]


# ------------------------------------------------------------------ syntax


def syntax_tags(source: str, grammar: Grammar, base: str = "", offset: int = 0) -> list[Tag]:
    """Tags for a program that does not parse; positions are given in ``base`` (the whole reply)."""
    toks = list(grammar.scan(source[:SCAN_CHARS]))
    found: dict[str, list[str]] = {}
    if code_share(toks) < CODE_SHARE:  # prose, not a program: its words say nothing about the grammar
        return []
    positions = Positions(base or source)

    def at(token: Lexeme) -> str:
        return positions.at(offset + token.offset)

    def add(code: str, text: str) -> None:
        found.setdefault(code, []).append(text)

    lowered = {k.lower(): k for k in grammar.keywords}
    operator_at: set[int] = set()
    for i, t in enumerate(toks):
        prev = toks[i - 1].kind if i else ""
        nxt = toks[i + 1].kind if i + 1 < len(toks) else ""
        word = t.text
        if t.kind not in ("PLUS", "STAR") and word.lower() in ARITH_WORDS and (
                prev in ("INT", "PAR_R") and nxt in ("INT", "PAR_L") or prev == "PAR_L" and nxt in ("INT", "PAR_L")):
            operator_at.add(i)
            add("operator_confusion", f"{word!r} at {at(t)} is used as an operator; this grammar writes "
                                      f"{grammar.spelling('PLUS')!r} and {grammar.spelling('STAR')!r}")
        elif t.kind == UNKNOWN_CHAR and word in OPERATOR_CHARS:
            add("operator_confusion", f"{word!r} at {at(t)} is not an operator of this grammar (it writes "
                                      f"{grammar.spelling('PLUS')!r} and {grammar.spelling('STAR')!r})")
        elif t.kind in ("PLUS", "STAR"):
            if grammar.style == "sexpr" and prev in ("INT", "PAR_R"):
                add("operator_confusion", f"{word!r} at {at(t)} is written infix; this grammar puts operators first")
            elif grammar.style != "sexpr" and prev == "PAR_L":
                add("operator_confusion", f"{word!r} at {at(t)} is written prefix; this grammar puts operators "
                                          "between operands")
    for i, t in enumerate(toks):
        if t.kind != UNKNOWN_WORD or i in operator_at:
            continue
        word = t.text
        if word in SYMBOL_NAMES:
            spelled = grammar.terminals.get(word)
            add("lexical_mapping_failure", f"{word!r} at {at(t)} is a grammar symbol's name" +
                (f"; this grammar spells {word} as {spelled!r}" if spelled else ", not a terminal"))
        elif word.lower() in NATURAL_WORDS:
            meant = sorted(NATURAL_WORDS[word.lower()])
            spelled = ", ".join(f"{m} as {grammar.terminals[m]!r}" for m in meant if m in grammar.terminals)
            add("lexical_mapping_failure", f"{word!r} at {at(t)} is a natural-lexicon keyword ({'/'.join(meant)})"
                + (f"; this grammar spells {spelled}" if spelled else "; this grammar has no such terminal"))
        elif word.lower() in lowered:
            add("lexical_mapping_failure", f"{word!r} at {at(t)} is the keyword {lowered[word.lower()]!r} in the "
                                           "wrong case")
        elif _ALIEN_SHAPE.match(word):
            add("lexical_mapping_failure", f"{word!r} at {at(t)} is an opaque token this grammar does not define")
    _scoping(toks, grammar, at, add)
    _balance(toks, at, add)
    return _tags(found)


def _scoping(toks: list[Lexeme], grammar: Grammar, at: At, add: Add) -> None:
    kinds = [t.kind for t in toks]
    for i in range(len(toks) - 1):
        pair = (kinds[i], kinds[i + 1])
        if grammar.style == "block" and (pair in (("DO", "LOOP"), ("DO", "IF"))):
            add("scoping_failure", f"{toks[i].text!r} at {at(toks[i])} wraps a control statement like an action")
        elif grammar.style == "block" and pair == ("RBR", "END"):
            add("scoping_failure", f"{toks[i + 1].text!r} at {at(toks[i + 1])} closes a control block like an action")
        elif grammar.style == "c" and pair == ("RBR", "SEMI"):
            add("scoping_failure", f"';' at {at(toks[i + 1])} ends a control block like an action")
        elif grammar.style == "sexpr" and pair == ("PAR_L", "PAR_L") and i + 2 < len(toks) and \
                kinds[i + 2] in ("LOOP", "IF"):
            add("scoping_failure", f"'(' at {at(toks[i])} wraps a control statement in an extra list")


def _balance(toks: list[Lexeme], at: At, add: Add) -> None:
    stack: list[Lexeme] = []
    unopened: list[Lexeme] = []
    for t in toks:
        word = t.text
        if word in _OPENERS:
            stack.append(t)
        elif word in _CLOSERS:
            if not stack:
                unopened.append(t)
            elif stack[-1].text != _CLOSERS[word]:
                add("premature_scope_termination", f"{word!r} at {at(t)} closes the {stack[-1].text!r} opened at "
                                                   f"{at(stack[-1])}")
                stack.pop()
            else:
                stack.pop()
    if unopened:
        more = f" ({len(unopened)} such closers)" if len(unopened) > 1 else ""
        add("premature_scope_termination", f"{unopened[0].text!r} at {at(unopened[0])} closes a block that is not "
                                           f"open (a block was closed early){more}")
    if stack:
        add("premature_scope_termination", f"{len(stack)} block{'s' if len(stack) > 1 else ''} left open: the "
                                           f"{stack[-1].text!r} at {at(stack[-1])} is never closed")


# ------------------------------------------------------------------ drift


def drift_tags(out: Program, gold: Program, out_run: Execution, gold_run: Execution, start: State,
               near_copy_only: bool) -> list[Tag]:
    """Tags for a parseable output that differs from the gold (task 3; task 2 when it is a near copy)."""
    found: dict[str, list[str]] = {}

    def add(code: str, text: str) -> None:
        found.setdefault(code, []).append(text)

    if out_run.capped:
        add("step_limit", f"execution stopped at the cap of {MAX_STEPS} steps")
    if out == gold:
        return _tags(found)
    rescoped = compare.rescoping(out, gold)
    cut = compare.truncation(out, gold) if not rescoped else None
    if rescoped:
        add("premature_scope_termination", rescoped)
    elif cut:
        kept, total = cut
        add("planning_horizon_collapse", f"the program stops after {kept} of the gold's {total} statements")
    else:
        edits = compare.diff(out, gold)
        if not near_copy_only or len(edits) <= NEAR_COPY_EDITS:
            _edit_tags(edits, out, add)
    if near_copy_only and "planning_horizon_collapse" not in found and not out_run.capped:
        stop = _stranded(out_run.final, gold_run, start)
        if stop:
            add("planning_horizon_collapse", stop)
    return _tags(found)


def _stranded(final: State, gold_run: Execution, start: State) -> str | None:
    """Where on the gold's way the robot stopped, if its final state is one the gold passes through.

    Needs the gold executed with its trace; the start state does not count (a reply that
    does nothing has not set out at all).
    """
    if final in (start, gold_run.final):
        return None
    for step in gold_run.trace:
        if step.state == final:
            return f"the robot stops in the state the reference solution reaches at step {step.step} of {gold_run.steps}"
    return None


def _edit_tags(edits: list[compare.Edit], out: Program, add: Add) -> None:
    for e in edits:
        where = e.describe()
        if e.kind == "field" and e.field in ("count", "steps"):
            if value(e.output) == value(e.gold):
                kind = "as a literal" if operator_count(e.output) == 0 else "re-shaped"
                add("arithmetic_flattening", f"{where} ({kind}, same value {fmt_int(value(e.gold))})")
            else:
                add("arithmetic_collapse", f"{e.where}: {e.field} {show_expr(e.output)} = {fmt_int(value(e.output))} "
                                           f"where the gold has {show_expr(e.gold)} = {fmt_int(value(e.gold))}")
        elif e.kind == "field" and e.field == "cond":
            if equivalent(e.output, e.gold):
                add("boolean_flattening", f"{where} (equivalent)")
            elif sorted(set(atoms(e.output))) == sorted(set(atoms(e.gold))):
                add("predicate_inversion", f"{e.where}: {show_cond(e.output)} is not equivalent to the gold's "
                                           f"{show_cond(e.gold)} over the same items")
            else:
                add("ast_mismatch", f"{where} (other items)")
        elif e.kind == "insert" and e.out_path is not None and _echoes(out, e.out_path):
            add("autoregressive_echoing", f"{path_text(e.out_path)}: `{head(e.output)}` is written twice in a row")
        else:
            add("ast_mismatch", where)


def _echoes(out: Program, path: Path) -> bool:
    """Is the statement at ``path`` equal to its neighbour in the same block?"""
    (name, index), parent = path[-1], path[:-1]
    block = get(out, parent) if parent else None
    stmts = out.body if block is None else block_of(block, name)
    here = stmts[index]
    return any(0 <= k < len(stmts) and stmts[k] == here for k in (index - 1, index + 1))


# ------------------------------------------------------------------ judge


def judge_tags(answer: str, gold: dict[str, Any]) -> list[Tag]:
    """A VALID verdict on a perturbed program carries the perturbation's tag; a false INVALID none."""
    if answer == "VALID" and gold.get("answer") == "INVALID" and gold.get("perturbation") in LABELS:
        return [tag(str(gold["perturbation"]), f"judged VALID, but {gold.get('note', 'the program is invalid')}")]
    return []
