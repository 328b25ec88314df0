"""lark's parse of a robogrid program -> the abstract syntax of nodes.py.

One transformer serves the three styles: their rules share the rule names and aliases
(``loop``, ``if_stmt``, ``move``, ``add``, ...), so a tree node means the same in each.
It runs during the LALR reductions (grammars._lalr), so no parse tree is built.
"""

from __future__ import annotations

from lark import Token, Transformer

from engines.robogrid.nodes import (AND, BACKWARD, FORWARD, LEFT, OR, PLUS, RIGHT, TIMES, Arith, Grab, Holding, If,
                                    Logic, Loop, Move, Not, Num, Program, Turn)


def _nodes(children: list) -> list:
    return [c for c in children if not isinstance(c, Token)]


def _token(children: list, *types: str) -> Token | None:
    return next((c for c in children if isinstance(c, Token) and c.type in types), None)


class AstBuilder(Transformer):
    """lark tree -> nodes.Program, applied during LALR reductions (no tree is built)."""

    def start(self, c: list) -> Program:
        return Program(tuple(_nodes(c)))

    def action_stmt(self, c: list):
        return _nodes(c)[0]

    def loop(self, c: list) -> Loop:
        count, *body = _nodes(c)
        return Loop(count, tuple(body))

    def if_stmt(self, c: list) -> If:
        cond = None
        then: list = []
        orelse: list | None = None
        for child in c:
            if isinstance(child, Token):
                if child.type == "ELSE":
                    orelse = []
            elif cond is None:
                cond = child
            elif orelse is None:
                then.append(child)
            else:
                orelse.append(child)
        return If(cond, tuple(then), None if orelse is None else tuple(orelse))

    def move(self, c: list) -> Move:
        return Move(FORWARD if _token(c, "FORWARD") else BACKWARD, _nodes(c)[0])

    def turn(self, c: list) -> Turn:
        return Turn(LEFT if _token(c, "LEFT") else RIGHT)

    def grab(self, c: list) -> Grab:
        return Grab(str(_token(c, "ITEM")))

    def num(self, c: list) -> Num:
        return Num(int(c[0]))

    def add(self, c: list) -> Arith:
        return Arith(PLUS, *_nodes(c))

    def mul(self, c: list) -> Arith:
        return Arith(TIMES, *_nodes(c))

    def holding(self, c: list) -> Holding:
        return Holding(str(_token(c, "ITEM")))

    def negation(self, c: list) -> Not:
        return Not(_nodes(c)[0])

    def conjunction(self, c: list) -> Logic:
        return Logic(AND, *_nodes(c))

    def disjunction(self, c: list) -> Logic:
        return Logic(OR, *_nodes(c))

