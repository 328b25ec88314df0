"""lark's parse of a robogrid program -> the abstract syntax of nodes.py.

One transformer serves the three styles: their rules share the rule names and aliases
(``loop``, ``if_stmt``, ``move``, ``add``, ...), so a tree node means the same in each.
It runs during the LALR reductions (grammars._lalr), so no parse tree is built.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Transformer

from engines.robogrid.nodes import (AND, BACKWARD, FORWARD, LEFT, OR, PLUS, RIGHT, TIMES, Arith, Cond, Grab, Holding,
                                    If, Logic, Loop, Move, Not, Num, Program, Stmt, Turn)

Children = list[Any]  # a rule's children as lark hands them over: its tokens and the nodes already built


def _nodes(children: Children) -> Children:
    return [c for c in children if not isinstance(c, Token)]


def _token(children: Children, *types: str) -> Token | None:
    return next((c for c in children if isinstance(c, Token) and c.type in types), None)


class AstBuilder(Transformer[Token, Program]):
    """lark tree -> nodes.Program, applied during LALR reductions (no tree is built)."""

    def start(self, c: Children) -> Program:
        return Program(tuple(_nodes(c)))

    def action_stmt(self, c: Children) -> Stmt:
        stmt: Stmt = _nodes(c)[0]
        return stmt

    def loop(self, c: Children) -> Loop:
        count, *body = _nodes(c)
        return Loop(count, tuple(body))

    def if_stmt(self, c: Children) -> If:
        cond: Cond | None = None
        then: list[Stmt] = []
        orelse: list[Stmt] | None = None
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
        assert cond is not None, "the grammars give every if a condition"
        return If(cond, tuple(then), None if orelse is None else tuple(orelse))

    def move(self, c: Children) -> Move:
        return Move(FORWARD if _token(c, "FORWARD") else BACKWARD, _nodes(c)[0])

    def turn(self, c: Children) -> Turn:
        return Turn(LEFT if _token(c, "LEFT") else RIGHT)

    def grab(self, c: Children) -> Grab:
        return Grab(str(_token(c, "ITEM")))

    def num(self, c: Children) -> Num:
        return Num(int(c[0]))

    def add(self, c: Children) -> Arith:
        return Arith(PLUS, *_nodes(c))

    def mul(self, c: Children) -> Arith:
        return Arith(TIMES, *_nodes(c))

    def holding(self, c: Children) -> Holding:
        return Holding(str(_token(c, "ITEM")))

    def negation(self, c: Children) -> Not:
        return Not(_nodes(c)[0])

    def conjunction(self, c: Children) -> Logic:
        return Logic(AND, *_nodes(c))

    def disjunction(self, c: Children) -> Logic:
        return Logic(OR, *_nodes(c))

