"""SPARQL 1.1 as every part of n2f reads it: one lark grammar, the structure of a query, the read-only guard.

Shared, not one family's: compost reads model replies with it, and the ``sparql`` tool
(``sessions.tools.sparql``) refuses what a read-only endpoint must not run with the same
grammar, so the two can never disagree on what a query says. ``grammar`` is the parser
and its syntax errors; ``pattern`` a query's form, projection, basic graph pattern and
other constructs; ``guard`` the clauses refused and the cross products counted.
"""
