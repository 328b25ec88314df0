"""The estimator's one walk over a program's tree, and the rest of the program without re-parsing it.

``estimate.py`` reads three things from the tree of the comment-stripped program: its dicts,
the lines of its dict assignments and dict comprehensions (which it deletes from the text),
and the assignments of what is left. The original re-parses the text left after deleting
those lines; here one walk gathers all three, and the assignments of the rest are the
walk's minus those inside the deleted statements, whenever that is what the parse of the
rest would give (``rest_assignments``; otherwise it says None and the caller parses).

Deleting lines gives exactly the tree minus some statements when the deleted lines are
whole statements: each deleted line lies in a deleted statement, a deleted statement
starts its line (or follows a deleted sibling on it) and no kept sibling shares its
lines, no block is left empty, no decorator is left behind, and indentation has no tabs
(whose consistency checks might see the lines differently). Then the rest's tree has the
same statements in the same order, so ``ast.walk`` meets the same assignments in the same
order; only line numbers differ, which the assignments' unparsed text does not carry.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

Body = tuple[int, str]  # (id of the node holding a statement list, the list's field name)


@dataclass
class TreeParts:
    """What one walk gathers: the walk's order is ``ast.walk``'s."""

    dicts: list[ast.Dict] = field(default_factory=list)
    assigns: list[ast.Assign] = field(default_factory=list)
    dict_lines: set[int] = field(default_factory=set)  # 0-based lines of dict assignments and comprehensions
    nodes: list[ast.AST] = field(default_factory=list)  # every node, parents before children
    parent: dict[int, ast.AST] = field(default_factory=dict)  # id(node) -> its parent
    bodies: dict[Body, list[ast.stmt]] = field(default_factory=dict)
    body_of: dict[int, tuple[Body, int]] = field(default_factory=dict)  # id(statement) -> its list and index


def walk(tree: ast.Module) -> TreeParts:
    """One breadth-first walk, in ``ast.walk``'s order (children in field order)."""
    parts = TreeParts()
    todo: list[ast.AST] = [tree]
    for node in todo:  # the list grows as the walk goes: a queue read once
        parts.nodes.append(node)
        if isinstance(node, ast.Dict):
            parts.dicts.append(node)
        if isinstance(node, ast.Assign):
            parts.assigns.append(node)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) or isinstance(node, ast.DictComp):
            parts.dict_lines.update(range(node.lineno - 1, node.end_lineno or node.lineno))
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for index, child in enumerate(children):
                if isinstance(child, ast.AST):
                    parts.parent[id(child)] = node
                    todo.append(child)
                    if isinstance(child, ast.stmt):
                        parts.bodies.setdefault((id(node), name), []).append(child)
                        parts.body_of[id(child)] = ((id(node), name), index)
    return parts


def rest_assignments(parts: TreeParts, lines: list[str]) -> list[ast.Assign] | None:
    """The assignments ``ast.walk`` finds in the parse of ``lines`` without ``parts.dict_lines``, in its order;
    None when only that parse can tell (the module docstring says when)."""
    removed = parts.dict_lines
    if not removed:
        return parts.assigns
    if any("\t" in line[:len(line) - len(line.lstrip())] or "\f" in line for line in lines):
        return None
    deleted = _deleted_statements(parts, removed)
    covered = {i for s in deleted for i in range(s.lineno - 1, s.end_lineno or s.lineno)}
    if covered != removed or not all(_whole(s, parts, deleted, lines) for s in deleted):
        return None
    gone = {id(s) for s in deleted}
    if any(all(id(s) in gone for s in body) for body in parts.bodies.values() if any(id(s) in gone for s in body)):
        return None  # a block left empty (or the whole module): a syntax error, or at least another tree
    inside = _within(parts, gone)
    return [a for a in parts.assigns if id(a) not in inside]


def _within(parts: TreeParts, tops: set[int]) -> set[int]:
    """The ids of the nodes in ``tops`` and of everything under them."""
    inside: set[int] = set()
    for node in parts.nodes:  # parents before children
        parent = parts.parent.get(id(node))
        if id(node) in tops or parent is not None and id(parent) in inside:
            inside.add(id(node))
    return inside


def _deleted_statements(parts: TreeParts, removed: set[int]) -> list[ast.stmt]:
    """The outermost statements all of whose lines are deleted."""
    found: list[ast.stmt] = []
    within: set[int] = set()
    for node in parts.nodes:  # parents before children
        parent = parts.parent.get(id(node))
        if parent is not None and id(parent) in within:
            within.add(id(node))
        elif isinstance(node, ast.stmt) and removed.issuperset(range(node.lineno - 1, node.end_lineno or node.lineno)):
            found.append(node)
            within.add(id(node))
    return found


def _whole(statement: ast.stmt, parts: TreeParts, deleted: list[ast.stmt], lines: list[str]) -> bool:
    """Deleting the statement's lines deletes it and only what else is deleted: nothing of a kept statement shares
    its lines, and a decorated definition is not deleted without its decorators."""
    if getattr(statement, "decorator_list", None):
        return False
    gone = {id(s) for s in deleted}
    body, index = parts.body_of[id(statement)]
    siblings = parts.bodies[body]
    before = siblings[index - 1] if index else None
    after = siblings[index + 1] if index + 1 < len(siblings) else None
    if before is not None and before.end_lineno == statement.lineno:
        starts_line = id(before) in gone
    else:
        starts_line = not lines[statement.lineno - 1].encode("utf-8")[:statement.col_offset].strip()
    return starts_line and (after is None or after.lineno != statement.end_lineno or id(after) in gone)
