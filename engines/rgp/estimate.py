"""The paper's program-length estimator: a program -> its mapping table P+ and L(P+).

A faithful re-implementation of ``calculate_estimate`` in the released
``parsing_test_5.py``, by static analysis only (``ast`` and regular expressions; the
program is never executed). Its quirks are kept on purpose, since C(P) must be
comparable with the paper's figures:

1. Comments are stripped with ``#.*`` (inside strings too), then ``'''...'''`` and
   ``\"\"\"...\"\"\"`` blocks, then blank lines. Everything below works on this text.
2. Dicts: every ``ast.Dict`` (nested ones too; dict comprehensions are not visited).
   Keys are ``literal_eval``-ed, all or none (else each key's source text), values
   likewise. A key's *space* is, per component, the letters A..H in ``str(key)``;
   ``else`` in the key adds ``*`` to each non-empty component. An entry costs
   n = |space| the first time that space is seen (0 after), and m = 1 for an atomic
   value (a 1-char string, a pair of ints, a non-iterable), else the number of atoms
   left after flattening it repeatedly (strings become characters, ``\\n`` included;
   atoms mixed with non-atoms are dropped at each flattening step, as in the original).
3. The lines of dict assignments (``x = {...}``) and of dict comprehensions are deleted.
4. Assignments (``ast.walk`` order; tuple-to-tuple unpacked pairwise): a variable's
   space is the letters in the unparsed right-hand side (identifiers too), plus the
   spaces of the assigned variables it mentions as whole words.
5. Lines form a tree by indentation. A line's space: the letters inside its string
   literals plus the spaces of the variables it mentions. ``if`` pushes its space,
   ``elif`` joins the top one; an ``else`` line gets ``*`` for every component the
   if/elif chain tests (the complement); any line containing ``else`` adds ``*`` to its
   non-empty components. A line's output count is the number of ``*``/``.`` characters
   in its string literals.
6. Walking the tree: every line adds its output count to M; a leaf with outputs adds
   the size of its path's joined space to N, once per distinct space.

``program_eval_5.py`` then clips N to [8, 64] and M to [32, 256]; L(P+) = N + M.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from engines.parsing import shorten
from engines.rgp import program_tree
from engines.rgp.grids import K, LETTERS, component_of

N_MIN, N_MAX = 2 * K, 16 * K  # u*k, d*k
M_MIN, M_MAX = 2 * K * K, 16 * K * K  # u*k^2, d*k^2

Space = tuple[frozenset[str], ...]
EMPTY: Space = tuple(frozenset() for _ in range(K))

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')


# ------------------------------------------------------------------- spaces


def _letters(text: str) -> list[set[str]]:
    space: list[set[str]] = [set() for _ in range(K)]
    for ch in text:
        if ch in LETTERS:
            space[component_of(ch)].add(ch)
    return space


def _freeze(space: list[set[str]]) -> Space:
    return tuple(frozenset(s) for s in space)


def key_space(value: Any) -> Space:
    """Letters in ``str(value)``; ``else`` in it adds ``*`` to each non-empty component."""
    text = str(value)
    space = _letters(text)
    if "else" in text:
        for s in space:
            if s:
                s.add("*")
    return _freeze(space)


def union(a: Space, b: Space) -> Space:
    return tuple(x | y for x, y in zip(a, b))


def size(space: Space) -> int:
    return sum(len(s) for s in space)


def show(space: Space) -> str:
    """``A  C|D  *  -``: per component its values (``*`` = the else-complement), ``-`` if absent."""
    return "  ".join("|".join(sorted(s)) if s else "-" for s in space)


# ------------------------------------------------------------------- values


def is_atom(value: Any) -> bool:
    if type(value) is tuple and len(value) == 2 and type(value[0]) is int and type(value[1]) is int:
        return True
    if type(value) is str and len(value) == 1:
        return True
    return not (hasattr(value, "__iter__") or hasattr(value, "__getitem__"))


def value_cost(value: Any) -> int:
    """Atoms in a dict value after the original's repeated flattening."""
    if is_atom(value):
        return 1
    items = list(value)
    while not all(is_atom(v) for v in items):
        items = [x for v in items if not is_atom(v) for x in v]
    return len(items)


# -------------------------------------------------------------------- steps


def strip_comments(code: str) -> str:
    code = re.sub(r"#.*", "", code)
    code = re.sub(r"'''.*?'''", "", code, flags=re.DOTALL)
    code = re.sub(r'""".*?"""', "", code, flags=re.DOTALL)
    return "\n".join(line for line in code.splitlines() if line.strip())


def string_literals(line: str) -> list[str]:
    return [m[1:-1] for m in _STRING.findall(line)]


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _all_or_source(nodes: list[ast.expr | None]) -> list[Any]:
    """The literal values, or every node's source when one is not a literal (``**`` unpacking included)."""
    present = [n for n in nodes if n is not None]
    if len(present) == len(nodes):
        try:
            return [ast.literal_eval(n) for n in present]
        except Exception:  # noqa: BLE001 - any failure means "not all literals", as in the original
            pass
    return ["**" if n is None else ast.unparse(n).strip() for n in nodes]


def dict_entries(dicts: Iterable[ast.Dict]) -> list[list[tuple[Any, Any]]]:
    """Each ``ast.Dict``'s (key, value) pairs, duplicate keys merged as a dict would."""
    found = []
    for node in sorted(dicts, key=lambda n: (n.lineno, n.col_offset)):  # in reading order (the sums do not depend on it)
        pairs = list(zip(_all_or_source(list(node.keys)), _all_or_source(list(node.values))))
        try:
            pairs = list(dict(pairs).items())
        except TypeError:  # an unhashable literal key: the original crashes; keep every pair
            pass
        found.append(pairs)
    return found


def assignments(nodes: Iterable[ast.Assign]) -> list[tuple[str, str]]:
    """(target, value) source pairs, tuple-to-tuple assignments unpacked pairwise."""
    pairs: list[tuple[str, str]] = []
    for node in nodes:
        tuples = [t for t in node.targets if isinstance(t, ast.Tuple)]
        if isinstance(node.value, ast.Tuple) and len(tuples) == len(node.targets):
            left = [ast.unparse(e) for t in tuples for e in t.elts]
            right = [ast.unparse(e) for e in node.value.elts]
            if len(left) == len(right):
                pairs.extend(zip(left, right))
        else:
            pairs.extend((ast.unparse(t), ast.unparse(node.value)) for t in node.targets)
    return pairs


def _mentions(text: str, name: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text) is not None


WORD = re.compile(r"\w+")


def variable_spaces(pairs: Iterable[tuple[str, str]]) -> dict[str, Space]:
    """Each assigned name's key space: its own value's, joined with that of every name its value mentions.
    A plain identifier is mentioned exactly when it is one of the value's maximal word runs, so those are
    looked up in a set (linear in the program: a 20,000-assignment reply took minutes with a regex per
    name and assignment); only names that are not identifiers (``g[0]``, ``self.x``) are searched for."""
    store: dict[str, Space] = {}
    compound: list[str] = []  # assigned names that are not plain identifiers
    for left, right in pairs:
        own = key_space(right)
        if left not in store and not left.isidentifier():
            compound.append(left)
        store[left] = union(store[left], own) if left in store else own
        for name in _mentioned(right, store, compound):
            store[left] = union(store[left], store[name])
    return store


def _mentioned(text: str, store: Mapping[str, Space], compound: Sequence[str]) -> set[str]:
    """The names of ``store`` that ``text`` mentions, as ``_mentions`` would find them: plain identifiers
    through the text's word runs (a set lookup), only ``compound`` names by search."""
    found = {w for w in WORD.findall(text) if w in store}
    found.update(name for name in compound if _mentions(text, name))
    return found


# --------------------------------------------------------------------- result


@dataclass(frozen=True)
class Entry:
    """One row of P+: where it comes from, the input component values, the outputs, its n_z and m_z."""

    kind: str  # dict | line | inner line
    inputs: str
    output: str
    n: int
    m: int


@dataclass(frozen=True)
class Estimate:
    n_dict: int
    m_dict: int
    n_block: int
    m_block: int
    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def n_raw(self) -> int:
        return self.n_dict + self.n_block

    @property
    def m_raw(self) -> int:
        return self.m_dict + self.m_block

    @property
    def n(self) -> int:
        return min(max(self.n_raw, N_MIN), N_MAX)

    @property
    def m(self) -> int:
        return min(max(self.m_raw, M_MIN), M_MAX)

    @property
    def table_length(self) -> int:
        """L(P+): the clipped N + M."""
        return self.n + self.m


@dataclass
class _Line:
    text: str
    indent: int
    space: Space
    outputs: int
    children: list["_Line"] = field(default_factory=list)


def estimate(program: str) -> Estimate:
    """The mapping table P+ of ``program`` and its size, as the paper computes them."""
    code = strip_comments(program)
    notes: list[str] = []
    entries: list[Entry] = []

    n_dict = m_dict = 0
    tree = _parse(code)
    if tree is None:
        notes.append("the program without comments does not parse: dicts and assignments are not analysed")
    parts = program_tree.walk(tree) if tree else None
    seen: set[Space] = set()
    for pairs in dict_entries(parts.dicts) if parts else []:
        for key, value in pairs:
            space = key_space(key)
            n = 0 if space in seen else size(space)
            seen.add(space)
            m = value_cost(value)
            n_dict += n
            m_dict += m
            entries.append(Entry("dict", show(space), f"{key!r}: {shorten(repr(value), 80)}", n, m))

    lines = code.split("\n")
    removed = parts.dict_lines if parts else set()
    code = "\n".join(line for i, line in enumerate(lines) if i not in removed)
    rest = _rest_assignments(parts, lines, code)
    if tree is not None and rest is None:
        notes.append("the program without its dict lines does not parse: assignments are not analysed")
    store = variable_spaces(assignments(rest)) if rest else {}

    root = _line_tree(code, store)
    n_block, m_block = _walk(root, entries)
    return Estimate(n_dict, m_dict, n_block, m_block, tuple(entries), tuple(notes))


def _rest_assignments(parts: program_tree.TreeParts | None, lines: list[str], rest: str) -> list[ast.Assign] | None:
    """The assignments of the program without its dict lines (``rest``): from the one walk when it can tell,
    else from parsing ``rest``; None when there is no tree or ``rest`` does not parse."""
    if parts is None:
        return None
    found = program_tree.rest_assignments(parts, lines)
    if found is not None:
        return found
    tree = _parse(rest)
    return program_tree.walk(tree).assigns if tree else None


def _line_tree(code: str, store: dict[str, Space]) -> _Line:
    root = _Line("", -1, EMPTY, 0)
    nodes = [root]
    compound = [name for name in store if not name.isidentifier()]
    ifs: list[tuple[int, Space]] = [(-1, EMPTY)]
    for raw in code.split("\n"):
        raw = raw.rstrip()
        if not raw:
            continue
        indent = len(raw) - len(raw.lstrip())
        text = raw.lstrip()
        literals = string_literals(text)
        space = _freeze(_letters("".join(literals)))
        for name in _mentioned(text, store, compound):
            space = union(space, store[name])
        while indent < ifs[-1][0]:
            ifs.pop()
        if text.startswith("if"):
            ifs.append((indent, space))
        elif text.startswith("elif"):
            ifs[-1] = (indent, union(ifs[-1][1], space))
        elif text.startswith("else"):
            space = tuple(frozenset({"*"}) if tested else frozenset() for tested in ifs[-1][1])
        if "else" in text:
            space = tuple(s | {"*"} if s else s for s in space)
        line = _Line(text, indent, space, sum(ch in "*." for lit in literals for ch in lit))
        while indent <= nodes[-1].indent:
            nodes.pop()
        nodes[-1].children.append(line)
        nodes.append(line)
    return root


def _walk(root: _Line, entries: list[Entry]) -> tuple[int, int]:
    """Depth-first over the line tree (iteratively: nesting is the program's to choose)."""
    n_total = m_total = 0
    seen: set[Space] = set()
    stack = [(root, root.space)]
    while stack:
        line, space = stack.pop()
        if line.outputs:
            m_total += line.outputs
            n = 0
            if not line.children:
                n = 0 if space in seen else size(space)
                seen.add(space)
                n_total += n
            entries.append(Entry("line" if not line.children else "inner line", show(space), line.text, n,
                                 line.outputs))
        stack.extend((child, union(space, child.space)) for child in reversed(line.children))
    return n_total, m_total
