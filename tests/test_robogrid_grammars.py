"""Grammar synthesis (appendix A.1), lexicons, and parsing generated programs with lark."""

from __future__ import annotations

import random
import re

import pytest
from lark import Lark

from engines.parsing import ParseFailure
from engines.robogrid import ENGINE
from engines.robogrid.generate import perturb
from engines.robogrid.grammars import MAX_NESTING, STYLES, AstBuilder, Grammar, SyntaxProblem, grammar_for
from engines.robogrid.lexicon import KEYWORDS, NATURAL_SETS, Lexicon, alien_lexicon, natural_lexicon
from engines.robogrid.linearise import linearise, render
from engines.robogrid.nodes import ITEM_BASES, Arith, Loop, Move, Num, Program, Turn
from engines.robogrid.parse import parse_code
from engines.robogrid.programs import Shape, sample_program
from engines.robogrid.score import item_gold, item_grammar
from engines.robogrid.settings import RobogridSettings

LEXICONS = [natural_lexicon(name) for name in sorted(NATURAL_SETS)] + [alien_lexicon(random.Random(k)) for k in range(3)]


def lexicon_like(style_words: dict[str, str], brackets=("[", "]")) -> Lexicon:
    """A natural lexicon spelled like an appendix example (missing words from the 'exec' set)."""
    words = {**NATURAL_SETS["exec"], **style_words}
    return Lexicon("natural", "appendix", tuple((t, words[t]) for t in KEYWORDS), brackets)


# --------------------------------------------------------------- the whole space


@pytest.mark.slow
def test_every_generated_program_parses_back_to_its_tree_and_the_oracle_scores_100():
    """Every style x lexicon x depth 2..20 x 60 seeds: lark parses each program back to the tree
    it was linearised from, and the oracle reply scores SVR = BER = SCR = 1."""
    for depth in range(2, 21):
        settings = RobogridSettings(count=60, depth=str(depth), style="block,c,sexpr", lexicon="natural,alien")
        items = ENGINE.items(settings, 0)
        assert len(items) == 3 * 2 * 60
        for item in items:
            source = item_gold(item)  # the tree the generator linearised (remembered, not parsed)
            assert item_grammar(item).parse(item.gold["program"]) == source, item.id  # a real lark parse
            verdict = ENGINE.score(item, [ENGINE.oracle(item, None, [])], settings, with_views=False)
            assert verdict.scores == {"svr": 1.0, "ber": 1.0, "scr": 1.0}, item.id
            assert verdict.status == "correct" and not verdict.tags, item.id


def test_stock_lark_on_the_lark_source_agrees_with_the_fast_parser():
    """Grammar.lark_source is a complete lark grammar: stock Lark accepts and rejects exactly what
    the per-style parser does, with the same trees."""
    for style in STYLES:
        for lexicon in LEXICONS:
            grammar = grammar_for(style, lexicon)
            stock = Lark(grammar.lark_source, parser="lalr", transformer=AstBuilder())
            for k in range(8):
                rng = random.Random(f"{style}:{lexicon.name}:{k}")
                program = sample_program(Shape(rng.randint(2, 8), 3, 0.5, rng.randint(1, 3)), rng)
                code = linearise(program, grammar)
                assert stock.parse(code.text) == program == grammar.parse(code.text)
                _, broken = perturb(code, grammar, rng)
                with pytest.raises(SyntaxProblem):
                    grammar.parse(broken.text)
                with pytest.raises(Exception):
                    stock.parse(broken.text)


# ----------------------------------------------------------------- grammar text


def test_the_ebnf_has_the_appendix_shapes_per_style():
    lexicon = natural_lexicon("exec")
    block = grammar_for("block", lexicon).ebnf
    assert "action_stmt: DO action END" in block
    assert "loop: LOOP expr TIMES LBR stmt+ RBR" in block
    assert "if_stmt: IF cond THEN LBR stmt+ RBR (ELSE LBR stmt+ RBR)?" in block
    c = grammar_for("c", lexicon).ebnf
    assert c.startswith("start: stmt*")
    assert "action_stmt: action SEMI" in c
    assert "loop: LOOP PAR_L expr PAR_R LBR stmt* RBR" in c
    assert "if_stmt: IF PAR_L cond PAR_R LBR stmt* RBR (ELSE LBR stmt* RBR)?" in c
    sexpr = grammar_for("sexpr", lexicon).ebnf
    assert "loop: PAR_L LOOP expr stmt+ PAR_R" in sexpr
    assert "if_stmt: PAR_L IF cond THEN stmt+ (ELSE stmt+)? PAR_R" in sexpr
    for text in (block, c, sexpr):
        assert "->" not in text and not re.search(r"^\?", text, re.M)  # no lark-only syntax shown


def test_every_terminal_is_defined_once_and_shows_its_spelling():
    for style in STYLES:
        for lexicon in LEXICONS:
            grammar = grammar_for(style, lexicon)
            defined = re.findall(r"^([A-Z_]+): ", grammar.ebnf, re.M)
            used = set(re.findall(r"\b[A-Z][A-Z_]*\b", grammar.ebnf.split("\n\n")[0]))
            assert sorted(defined) == sorted(set(defined)) and set(defined) == used
            for name, spelling in grammar.terminals.items():
                assert f'{name}: "{spelling}"' in grammar.ebnf


def test_alien_lexicons_are_opaque_distinct_and_seeded():
    a, b = alien_lexicon(random.Random(5)), alien_lexicon(random.Random(5))
    assert a == b and a != alien_lexicon(random.Random(6))
    words = [w for _, w in a.words]
    assert len(set(words)) == len(KEYWORDS) and all(re.fullmatch(r"v_[a-z]{4}", w) for w in words)
    block = grammar_for("block", a).ebnf
    assert '"+"' not in block and '"*"' not in block  # the operators are opaque too (appendix A.3.4)


def test_natural_lexicons_follow_the_appendix_and_are_prefix_free():
    assert {NATURAL_SETS["do"][t] for t in ("DO", "END", "LOOP", "TIMES", "IF", "THEN")} == \
        {"do", "stop", "repeat", "times", "when", "next"}  # A.1.2
    assert [NATURAL_SETS["exec"][t] for t in ("DO", "END", "LOOP", "TIMES", "IF", "THEN")] == \
        ["exec", "end", "loop", "times", "when", "after"]  # section 2.2
    for lexicon in LEXICONS:
        words = [w for _, w in lexicon.words] + ["forward", "backward", "left", "right", *ITEM_BASES]
        for w in set(words):
            assert not any(o != w and o.startswith(w) for o in set(words)), (lexicon.name, w)


def test_lexicons_round_trip_through_json_and_reject_garbage():
    for lexicon in LEXICONS:
        assert Lexicon.from_json(lexicon.to_json()) == lexicon
    with pytest.raises(Exception, match="lexicon"):
        Lexicon.from_json({"kind": "alien", "name": "x", "words": {"DO": "v_aaaa"}})


# ------------------------------------------------------- the appendix's programs


def test_the_appendix_examples_parse_under_lexicons_spelled_like_them():
    c_grammar = grammar_for("c", lexicon_like({"LOOP": "run", "MOVE": "go", "IF": "if", "OR": "alt"}))
    c_code = ("run(((0 + 1) * 4)){\n  if(((holding(cube) and holding(key_1)) and (holding(box_4) alt "
              "holding(key_1)))){\n    go(forward,2);\n  }\n}")
    sexpr_grammar = grammar_for("sexpr", lexicon_like({"LOOP": "repeat", "IF": "if", "THEN": "next", "MOVE": "go",
                                                       "HOLDING": "has"}))
    sexpr_code = ("(repeat (* (+ 0 1) 4)\n(if (and (and (has cube) (has key_1)) (or (has box_4) (has key_1))) next\n"
                  "(go forward 2)\n)\n)")
    block_grammar = grammar_for("block", lexicon_like({"LOOP": "loop", "TIMES": "x", "DO": "exec", "END": "stop",
                                                       "MOVE": "go", "IF": "if", "THEN": "then"}))
    block_code = "loop ((1 * 1) + (0 + 0)) x [\nexec go forward 5 stop\n]\nexec go forward 5 stop"
    trees = [parse_code(code, g) for code, g in ((c_code, c_grammar), (sexpr_code, sexpr_grammar),
                                                 (block_code, block_grammar))]
    assert all(isinstance(t, Program) for t in trees)
    assert trees[0] == trees[1]  # A.3.3: the same AST in two surface styles
    five_forward = Move("forward", Num(5))  # the block program's tree, read off its text by hand
    assert trees[2] == Program((Loop(Arith("+", Arith("*", Num(1), Num(1)), Arith("+", Num(0), Num(0))), (five_forward,)),
                                five_forward))
    tokens = re.compile(r"[()]|[^\s()]+").findall
    assert tokens(render(trees[0], sexpr_grammar)) == tokens(sexpr_code)


def test_parse_errors_name_the_position_and_the_expected_terminals():
    grammar = grammar_for("block", natural_lexicon("exec"))
    text = "loop 3 times [\n  exec turn left end\n  loop 2 times [\n    exec turn left end\n  ]\n"
    with pytest.raises(SyntaxProblem) as info:
        grammar.parse(text)
    assert info.value.offset == len(text)
    assert "ends too early" in info.value.message and "RBR" in info.value.expected and 'RBR "]"' in info.value.message
    failure = parse_code("exec turn sideways end", grammar)
    assert isinstance(failure, ParseFailure)
    assert (failure.line, failure.column) == (1, 11)
    assert "unknown word 'sideways'" in failure.message and 'LEFT "left"' in failure.message
    assert failure.context == "exec turn sideways end\n          ^"


def test_nesting_and_number_guards_refuse_with_a_position():
    grammar = grammar_for("sexpr", natural_lexicon("act"))
    deep = "(go forward " + "(+ " * (MAX_NESTING + 5) + "1 1" + ")" * (MAX_NESTING + 5) + ")"
    failure = parse_code(deep, grammar)
    assert isinstance(failure, ParseFailure) and "nested more than" in failure.message
    assert failure.column == len("(go forward ") + 3 * (MAX_NESTING - 1) + 1
    huge = parse_code("(go forward 12345678901234567890)", grammar)
    assert isinstance(huge, ParseFailure) and "longer than" in huge.message and huge.column == 13


def test_words_are_read_whole():
    grammar = grammar_for("block", natural_lexicon("exec"))
    assert grammar.parse("exec turn left end") == Program((Turn("left"),))
    assert isinstance(parse_code("exec turnleft end", grammar), ParseFailure)
    assert isinstance(parse_code("exec turn left end2", grammar), ParseFailure)


def test_a_new_grammar_needs_no_new_lalr_tables():
    lexicons = [alien_lexicon(random.Random(100 + k)) for k in range(20)]
    program = sample_program(Shape(5, 3, 0.5, 2), random.Random(1))
    for lexicon in lexicons:
        grammar = Grammar("block", lexicon)
        assert grammar.parse(render(program, grammar)) == program
    from engines.robogrid.grammars import _lalr

    assert _lalr.cache_info().currsize <= len(STYLES)
