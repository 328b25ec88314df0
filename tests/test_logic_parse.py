"""The logic parser: notations models write, the whole reply as the formula, positions, garbage, round trips."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.logic import parse
from engines.logic.formula import AND, EXISTS, FORALL, OR, Atom, Equal, Formula, Not, Quant, junction
from engines.logic.parse import FormulaSyntaxError, parse_formula
from engines.logic.reading import Reading, read_formula
from engines.logic.render import NOTATIONS, show, render
from engines.parsing import ParseFailure

KNOWN = frozenset({"x1", "x2", "x3"})


def shown(text: str) -> str:
    reading = read_formula(text, KNOWN)
    assert isinstance(reading, Reading), reading
    return show(reading.formula)


@pytest.mark.parametrize("text, expected", [
    ("x1 & ~x2 | x3", "(x1 ∧ ¬x2) ∨ x3"),
    ("x1 && !x2 || x3", "(x1 ∧ ¬x2) ∨ x3"),
    ("x1 and not x2 or x3", "(x1 ∧ ¬x2) ∨ x3"),
    ("x1 AND NOT x2 OR x3", "(x1 ∧ ¬x2) ∨ x3"),
    ("x1 ∧ ¬x2 ∨ x3", "(x1 ∧ ¬x2) ∨ x3"),
    ("x1 /\\ x2 \\/ x3", "(x1 ∧ x2) ∨ x3"),
    ("x1 ^ x2", "x1 ∧ x2"),
    ("\\neg x1 \\land x2 \\lor x3", "(¬x1 ∧ x2) ∨ x3"),
    ("x1 -> x2 -> x3", "x1 → (x2 → x3)"),
    ("x1 → x2", "x1 → x2"),
    ("x1 => x2", "x1 → x2"),
    ("x1 <-> x2", "x1 ↔ x2"),
    ("x1 <=> x2", "x1 ↔ x2"),
    ("x1 iff x2", "x1 ↔ x2"),
    ("((x1)) ∧ (((x2 ∨ x3)))", "x1 ∧ (x2 ∨ x3)"),
    ("[x1 ∨ x2] ∧ x3", "(x1 ∨ x2) ∧ x3"),
    ("(x1 ∧ x2) ∧ (x3 ∧ x1)", "x1 ∧ x2 ∧ x3 ∧ x1"),
    ("x₁ ∧ ¬x₂", "x1 ∧ ¬x2"),
    ("∀x ∃y p(x, y)", "∀x ∃y p(x, y)"),
    ("forall x. exists y: p(x,y)", "∀x ∃y p(x, y)"),
    ("∀x,y p(x, y)", "∀x ∀y p(x, y)"),
    ("(∀x)(p(x)) ∧ q", "(∀x p(x)) ∧ q"),
    ("∀x p(x) ∧ q(x)", "∀x (p(x) ∧ q(x))"),
    ("\\forall x \\exists y L(x, y)", "∀x ∃y L(x, y)"),
    ("a = b", "a = b"),
    ("a == b", "a = b"),
    ("a != b", "a ≠ b"),
    ("a ≠ b", "a ≠ b"),
    ("Loves(John, Mary)", "Loves(John, Mary)"),
])
def test_notations(text, expected):
    assert shown(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("x1 v x2", "x1 ∨ x2"),
    ("x1 v ¬x2 v x3", "x1 ∨ ¬x2 ∨ x3"),
    ("(x1 ∧ x2) v x3", "(x1 ∧ x2) ∨ x3"),
    ("v ∧ x1", "v ∧ x1"),  # where a name must stand, v is a name
    ("x1 v v", "x1 ∨ v"),
    ("vx ∨ x1", "vx ∨ x1"),  # part of a longer name
    ("∀v p(v)", "∀v p(v)"),  # a quantified variable
    ("p(v, o1) v q", "p(v, o1) ∨ q"),
    ("android ∧ x1", "android ∧ x1"),  # keywords are whole words
    ("order ∨ x1", "order ∨ x1"),
])
def test_letter_v_is_or_only_where_a_name_cannot_stand(text, expected):
    assert shown(text) == expected


@pytest.mark.parametrize("reply", ["x1 ∧ ¬x2", "  x1 ∧ ¬x2\n", "\n(x1 ∨ x2)\n"])
def test_the_whole_reply_is_the_formula(reply):
    reading = read_formula(reply, KNOWN)
    assert isinstance(reading, Reading) and not reading.removed


@pytest.mark.parametrize("reply, formula", [
    ("Here is the formula:\n```\n(x1 ∨ x2) ∧ ¬x3\n```\nDone.", "(x1 ∨ x2) ∧ ¬x3"),
    ("```logic\nx1 ∨ x2\n```", "x1 ∨ x2"),
    ("**Answer:** `x1 v x2`", "x1 ∨ x2"),
    ("Let me think.\nFirst clause...\nFinal answer:\nx1 ∧ (x2 ∨ x3)\nHope this helps!", "x1 ∧ (x2 ∨ x3)"),
    ("$x_1 \\land \\neg x_2$", "x_1 ∧ ¬x_2"),
    ("The formula is:\n**x1 ∧ ¬x2**.", "x1 ∧ ¬x2"),
])
def test_a_formula_set_off_from_prose_is_read_only_leniently(reply, formula):
    assert isinstance(read_formula(reply, KNOWN), ParseFailure)  # the authors parse the whole reply
    reading = read_formula(reply, KNOWN, lenient=True)
    assert isinstance(reading, Reading), reading
    assert show(reading.formula) == formula and reading.removed


@pytest.mark.parametrize("reply", [
    "The formula is x1 and not x2 or x3.",
    "x1 ∧ x2 is the answer",
    "Sure! x1 ∧ x2",
    "I think: x1",
    "It is x1 ∧ x2 ∧ x3, so yes",
    "[TASK] Your task is to convert the formula.\nPropositions: x1, x2, x3\n(x1 ∨ x2) ∧ x3 vertreten тельномmodel",
])
def test_no_formula_is_cut_out_of_a_line_of_prose(reply):
    for lenient in (False, True):
        assert isinstance(read_formula(reply, KNOWN, lenient=lenient), ParseFailure), (reply, lenient)


def test_the_echoed_prompt_of_the_issue_fails_where_the_prose_starts():
    reply = "[TASK] Your task is to convert ...\nPropositions: x1, x2, x3\n(x1 ∨ x2)"
    error = read_formula(reply, KNOWN)
    assert isinstance(error, ParseFailure)
    assert (error.line, error.column) == (1, 8) and "unexpected 'Your'" in error.message  # [TASK] reads as a name


@pytest.mark.parametrize("reply, line, column", [
    ("", 1, 1),
    ("   ", 1, 1),
    ("I cannot determine the formula from this description.", 1, 3),
    ("The description is ambiguous, so I will not guess the formula.", 1, 5),
    ("It says that all the conditions have to hold at the same time.", 1, 4),
    ("x1 ∧ (x2 ∨", 1, 11),
    ("(((x1", 1, 6),
    ("x1 ∧ x2 )", 1, 9),
    ("x1 ∧\nx2 ∧ # x3", 2, 6),
    ("hello", 1, 1),
    ("∀x1 ∀x2 (p8(o3, o3) ∨ p2(x2, o1)", 1, 33),
    ("(∀x1 ∀x2 (p8(o3, o3) ∨ p2(x2, o1))", 1, 35),
])
def test_garbage_is_unparseable_with_a_position(reply, line, column):
    result = read_formula(reply, KNOWN)
    assert isinstance(result, ParseFailure), result
    assert (result.line, result.column) == (line, column), result.describe()
    assert result.context.endswith("^")


def test_error_context_points_at_the_column():
    result = read_formula("x1 ∧\nx2 ∧ # x3", KNOWN)
    assert isinstance(result, ParseFailure)
    shown_line, caret = result.context.split("\n")
    assert shown_line == "x2 ∧ # x3"
    assert caret.index("^") == result.column - 1
    assert "unexpected character '#'" in result.message


@pytest.mark.parametrize("reply, what", [
    ("(" * 100_000, "too long"),
    ("(" * 150 + "x1" + ")" * 150, "nested deeper"),
    ("¬" * 5_000 + "x1", "nested deeper"),
    ("x1 ∧ " * 5_000 + "x1", "too long"),
])
def test_huge_or_deep_replies_are_refused_quickly(reply, what):
    cpu = time.process_time()  # CPU, not wall time: at most 0.12 s here
    result = read_formula(reply, KNOWN)
    assert isinstance(result, ParseFailure)
    assert what in result.message
    assert time.process_time() - cpu < 2.0


def test_deep_but_allowed_nesting_parses():
    text = "(" * 90 + "x1" + ")" * 90
    assert shown(text) == "x1"
    assert shown("¬" * 90 + "x1").endswith("x1")


def test_parse_formula_raises_with_the_position():
    with pytest.raises(FormulaSyntaxError) as exc:
        parse_formula("x1 ∧ ∧ x2")
    assert (exc.value.error.line, exc.value.error.column) == (1, 6)


def test_the_parser_is_built_once():
    assert parse._parser() is parse._parser()


# ------------------------------------------------------------------ fuzzing

FORMULA_ALPHABET = "x12 v()[]¬~!∧∨&|^→↔-<>=∀∃.:,pqo\n\\andortvfs"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.text(alphabet=FORMULA_ALPHABET, max_size=300)))
def test_read_formula_never_raises(reply):
    result = read_formula(reply, KNOWN)
    if isinstance(result, ParseFailure):
        assert result.line >= 1 and result.column >= 1
        assert result.message
    else:
        assert isinstance(result, Reading)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from("()[]¬∧∨x1 "), st.integers(min_value=1_000, max_value=30_000))
def test_long_runs_of_one_symbol_never_crash(symbol, n):
    result = read_formula(symbol * n, KNOWN)
    assert isinstance(result, (ParseFailure, Reading))


# --------------------------------------------------------- render / parse


def formulas(fol: bool) -> st.SearchStrategy[Formula]:
    names = st.sampled_from(["x1", "x2", "x3", "v", "p1"])
    terms = st.sampled_from(["o1", "o2", "x", "y"])
    atom = names.map(Atom) if not fol else st.one_of(
        names.map(Atom),
        st.tuples(st.sampled_from(["p", "Loves"]), st.lists(terms, min_size=1, max_size=2)).map(
            lambda t: Atom(t[0], tuple(t[1]))),
        st.tuples(terms, terms).map(lambda t: Equal(*t)))

    def extend(children: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
        options = [
            children.map(Not),
            st.tuples(st.sampled_from([AND, OR]), st.lists(children, min_size=2, max_size=4)).map(
                lambda t: junction(t[0], t[1])),
        ]
        if fol:
            options.append(st.tuples(st.sampled_from([FORALL, EXISTS]), st.sampled_from(["x", "y"]), children).map(
                lambda t: Quant(*t)))
        return st.one_of(*options)

    return st.recursive(atom, extend, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(formulas(fol=True), st.sampled_from(sorted(NOTATIONS)), st.booleans())
def test_render_then_parse_gives_the_same_formula(formula, notation, extra):
    parse.clear_memo()
    text = render(formula, NOTATIONS[notation], extra=(lambda node: True) if extra else None)
    assert parse_formula(text) == formula, text
