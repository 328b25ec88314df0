"""DEDC error taxonomy (paper section 3.3, Table 2) and automatic tagging.

The tagger reads both answers as DAGs (``build_graph``): one node per primitive call,
edges from a node to the nodes its arguments name, plus the ``result`` pointer. It then
aligns the output DAG with the gold DAG and names what differs. Alignment stages, each
only over nodes not matched yet (output nodes in topological order):

A. exact: the same expanded sub-expression (by meaning, commutative arguments unordered);
B. content: same meaning and the same literal arguments at the same positions (``all``
   and variables are wildcards) -> differences are in the antecedents (edges);
C. confusion: a different known primitive on exactly the gold step's literal arguments
   (even where they do not fit its own signature: the inputs are right, the name is wrong,
   as with an intuitive name under the cross naming), or, without distinctive literals, a
   primitive of fitting arity on aligned antecedents;
E. same meaning and arity with partly different literals (changed argument);
F. confusion on overlapping arguments (one literal set contains the other);
D. fiction: an unknown symbol, or arguments that fit no signature (arity or types); it
   accounts for the unmatched gold nodes sharing a distinctive literal or all antecedents
   with it (the steps it merged or mangled);
G. left-overs: output and gold left-overs of the same type pair up as replacements
   (incorrect meaning); further output nodes are redundant, further gold nodes omitted.

Before aligning, ``kth_argmax`` followed by ``hop`` on the same column is folded into the
``kth_max`` it is equivalent to (paper Table 2, redundancy "equivalent but redundant").

Edges of matched pairs are compared next. A reference to an undefined variable (or to
one defined only later) is ``variable_misuse``; a single wrong antecedent that leaves a
correct node unused (dangling) is ``variable_misuse`` (Table 2: "incorrect variable name
makes the first expression useless"); other wrong antecedents, changed literals and
replacements are ``incorrect_meaning``. Several tags may apply; each carries evidence
naming the step and what differs. A correct answer gets no error tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

from engines.core import Tag, TagType
from engines.dedc.parse import Assignment, Call, Term, term_text
from engines.dedc.primitives import BY_NAME, COMMUTATIVE, NAME_MAPPINGS
from engines.taxonomy import Taxonomy, format_violation, unparseable

TAXONOMY = Taxonomy((
    TagType("primitive_confusion", "Primitive confusion",
            "The correct input parameters but an incorrect primitive name in an expression.",
            "symbolic system"),
    TagType("primitive_fiction", "Primitive fiction",
            "A non-existent primitive under the name of an existing one (or an unknown name): an argument "
            "list that matches no signature, combining several primitives' meanings or an independent new one.",
            "symbolic system"),
    TagType("variable_misuse", "Variable misuse",
            "Non-existent or incorrect intermediate variable names, making expressions invalid or useless.",
            "both"),
    TagType("redundancy", "Redundancy",
            "Redundant expressions: the output is incorrect or does not have the minimum steps.",
            "both"),
    TagType("omission", "Omission",
            "A part of the question is ignored, so necessary expressions are missing.",
            "understanding"),
    TagType("incorrect_meaning", "Incorrect meaning",
            "The expressions do not mean what the question means: the output graph differs from the gold "
            "graph (incorrect antecedents, confused ordering, changed arguments).",
            "understanding"),
    unparseable("No assignment expressions could be read from the reply.", "format"),
    format_violation("Text beyond the bare answer (code fences, prose, an 'Answer:' prefix) had to be removed.", "format"),
))
LABELS = TAXONOMY.labels
ERROR_CODES = tuple(t.code for t in TAXONOMY[:6])

LITERAL = re.compile(r"(?:all|attr_\d+|item_\d+|-?\d+(?:\.\d+)?)\Z")
_VAR_TYPE = re.compile(r"(view|value|row|column|col)(?:_?\d+)?\Z")
_SLOT_TYPES = {"view": "view", "value": "value", "row": "row", "column": "column", "col": "column"}


tag = TAXONOMY.tag


# --------------------------------------------------------------------- naming


@dataclass(frozen=True)
class Naming:
    names: str
    meaning: dict[str, str]  # symbol -> meaning
    symbol: dict[str, str]  # meaning -> symbol
    commutative: frozenset[str]  # symbols whose two arguments may be swapped


@lru_cache(maxsize=None)
def naming(names: str | None) -> Naming:
    names = names if names in NAME_MAPPINGS else "opaque"
    display = NAME_MAPPINGS[names]
    return Naming(names, {s: m for m, s in display.items()}, dict(display),
                  frozenset(display[m] for m in COMMUTATIVE))


# ---------------------------------------------------------------------- graph

# An argument: ("lit", text) | ("ref", node index) | ("undef", name, why)
Arg = tuple


@dataclass
class Node:
    index: int
    var: str  # target variable; "" for a call nested inside another call
    symbol: str
    meaning: str | None  # None: unknown symbol under this naming
    args: list[Arg]
    line: int
    call: Call

    @property
    def label(self) -> str:
        return self.var or self.call.text()

    @property
    def text(self) -> str:
        body = self.call.text()
        return f"{self.var} := {body}" if self.var else body


@dataclass
class Graph:
    nodes: list[Node]
    result: Arg | None  # what `result` names; None when the answer never assigns result
    names: str
    _consumers: list[list[int]] | None = field(default=None, repr=False)
    _reachable: set[int] | None = field(default=None, repr=False)

    def consumers(self) -> list[list[int]]:
        if self._consumers is None:
            cons: list[list[int]] = [[] for _ in self.nodes]
            for node in self.nodes:
                for a in node.args:
                    if a[0] == "ref":
                        cons[a[1]].append(node.index)
            self._consumers = cons
        return self._consumers

    def reachable(self) -> set[int]:
        """Nodes the result depends on."""
        if self._reachable is None:
            seen: set[int] = set()
            stack = [self.result[1]] if self.result and self.result[0] == "ref" else []
            while stack:
                i = stack.pop()
                if i in seen:
                    continue
                seen.add(i)
                stack.extend(a[1] for a in self.nodes[i].args if a[0] == "ref")
            self._reachable = seen
        return self._reachable


def build_graph(assignments: Sequence[Assignment], names: str | None) -> Graph:
    """The DAG of an answer, resolving each variable to its latest earlier definition."""
    nm = naming(names)
    first_def: dict[str, int] = {}
    for k, a in enumerate(assignments):
        first_def.setdefault(a.target, k)
    env: dict[str, Arg] = {}
    nodes: list[Node] = []

    def resolve(term: Term, k: int, line: int) -> Arg:
        if isinstance(term, Call):
            return ("ref", add(term, "", line, k))
        hit = env.get(term)
        if hit is not None:
            return hit
        if LITERAL.match(term):
            return ("lit", term)
        later = first_def.get(term)
        return ("undef", term, "never defined" if later is None else
                f"used before its definition (line {assignments[later].line})")

    def add(call: Call, var: str, line: int, k: int) -> int:
        args = [resolve(t, k, line) for t in call.args]
        node = Node(len(nodes), var, call.symbol, nm.meaning.get(call.symbol), args, line, call)
        nodes.append(node)
        return node.index

    for k, a in enumerate(assignments):
        if isinstance(a.value, Call):
            env[a.target] = ("ref", add(a.value, a.target, a.line, k))
        else:
            env[a.target] = resolve(a.value, k, a.line)
    return Graph(nodes, env.get("result"), nm.names)


def arg_type(graph: Graph, a: Arg) -> str | None:
    kind = a[0]
    if kind == "ref":
        m = graph.nodes[a[1]].meaning
        return BY_NAME[m].output if m else None
    text = a[1]
    if kind == "undef":
        v = _VAR_TYPE.match(text)
        return _SLOT_TYPES[v.group(1)] if v else None
    if text == "all":
        return "view"
    if text.startswith("attr_"):
        return "column"
    if text.startswith("item_"):
        return "row"
    return "value"


def describe_arg(graph: Graph, a: Arg) -> str:
    return graph.nodes[a[1]].label if a[0] == "ref" else a[1]


def signature_text(meaning: str, symbol: str) -> str:
    return f"{symbol} ({', '.join(BY_NAME[meaning].inputs)})"


# --------------------------------------------------------------- fingerprints


class _Interner:
    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}

    def sigs(self, graph: Graph, nodes: Sequence[Node]) -> list[int]:
        """Hash-consed id of each node's expanded sub-expression (by meaning)."""
        out: list[int] = [0] * len(graph.nodes)
        for node in nodes:
            keys = []
            for a in node.args:
                keys.append(("r", out[a[1]]) if a[0] == "ref" else (a[0], a[1]))
            if node.meaning in COMMUTATIVE:
                keys.sort()
            key = (node.meaning or "?" + node.symbol, tuple(keys))
            out[node.index] = self.ids.setdefault(key, len(self.ids))
        return out


def _pattern(node: Node) -> tuple:
    pat = ["*" if a[0] != "lit" or a[1] == "all" else a[1] for a in node.args]
    if node.meaning in COMMUTATIVE:
        pat.sort()
    return tuple(pat)


def _literals(node: Node) -> list[str]:
    return [a[1] for a in node.args if a[0] == "lit" and a[1] != "all"]


def _multiset_le(small: list[str], big: list[str]) -> bool:
    pool = list(big)
    for x in small:
        if x in pool:
            pool.remove(x)
        else:
            return False
    return True


# ------------------------------------------------------------------ alignment


@dataclass
class Alignment:
    o2g: dict[int, int] = field(default_factory=dict)
    g2o: dict[int, int] = field(default_factory=dict)
    kind: dict[int, str] = field(default_factory=dict)  # output node -> exact|content|confusion|partial|replace
    fiction: dict[int, list[int]] = field(default_factory=dict)  # output node -> gold nodes it absorbed
    fiction_why: dict[int, str] = field(default_factory=dict)
    extra: list[int] = field(default_factory=list)  # output nodes with no gold counterpart
    missing: list[int] = field(default_factory=list)  # gold nodes with no output counterpart
    folded: dict[int, int] = field(default_factory=dict)  # hop node -> the kth_argmax folded into it
    nodes: list[Node] = field(default_factory=list)  # output nodes after folding (index-aligned)

    def pair(self, o: int, g: int, kind: str) -> None:
        self.o2g[o] = g
        self.g2o[g] = o
        self.kind[o] = kind


def _fold(out: Graph, gold: Graph) -> tuple[list[Node], dict[int, int]]:
    """Fold kth_argmax + hop on the same column into the kth_max it equals."""
    def chains(graph: Graph) -> list[tuple[int, int]]:
        found = []
        cons = graph.consumers()
        for node in graph.nodes:
            if node.meaning != "hop" or len(node.args) != 2 or node.args[0][0] != "ref":
                continue
            k = graph.nodes[node.args[0][1]]
            if (k.meaning == "kth_argmax" and len(k.args) == 3 and k.args[1] == node.args[1]
                    and cons[k.index] == [node.index]):
                found.append((node.index, k.index))
        return found

    nodes = list(out.nodes)
    folded: dict[int, int] = {}
    found = chains(out)
    if not found or chains(gold):
        return nodes, folded
    nm = naming(out.names)
    for h, k in found:
        hop, arg = out.nodes[h], out.nodes[k]
        sym = nm.symbol["kth_max"]
        nodes[h] = Node(h, hop.var, sym, "kth_max", [arg.args[0], hop.args[1], arg.args[2]], hop.line,
                        Call(sym, (arg.call.args[0], hop.call.args[1], arg.call.args[2])))
        folded[h] = k
    return nodes, folded


def _fiction_reason(graph: Graph, node: Node) -> str | None:
    if node.meaning is None:
        return f"{node.label} uses {node.symbol!r}, which is not a primitive of this symbolic system"
    prim = BY_NAME[node.meaning]
    sig = signature_text(node.meaning, node.symbol)
    if len(node.args) != len(prim.inputs):
        return (f"{node.label} calls {node.symbol} with {len(node.args)} arguments, but its signature is {sig}")
    got = [arg_type(graph, a) for a in node.args]
    if any(t is not None and t != want for t, want in zip(got, prim.inputs)):
        shown = ", ".join(t or "?" for t in got)
        return f"{node.label} calls {node.symbol} with ({shown}), which fits no signature ({sig})"
    return None


def align(out: Graph, gold: Graph) -> Alignment:
    al = Alignment()
    nodes, al.folded = _fold(out, gold)
    al.nodes = nodes
    skip = set(al.folded.values())
    onodes = [n for n in nodes if n.index not in skip]
    interner = _Interner()
    osig = interner.sigs(out, onodes)
    gsig = interner.sigs(gold, gold.nodes)
    gnodes = gold.nodes

    def free_gold() -> list[Node]:
        return [g for g in gnodes if g.index not in al.g2o]

    def free_out() -> list[Node]:
        return [o for o in onodes if o.index not in al.o2g and o.index not in al.fiction]

    def aligned_children(o: Node, g: Node) -> int:
        return sum(1 for a, b in zip(o.args, g.args)
                   if a[0] == "ref" and b[0] == "ref" and al.o2g.get(a[1]) == b[1])

    def best(o: Node, cands: list[Node]) -> Node | None:
        if not cands:
            return None
        return max(cands, key=lambda g: (aligned_children(o, g), -g.index))

    # A: exact sub-expression
    by_sig: dict[int, list[int]] = {}
    for g in gnodes:
        by_sig.setdefault(gsig[g.index], []).append(g.index)
    for o in onodes:
        for g in by_sig.get(osig[o.index], ()):
            if g not in al.g2o:
                al.pair(o.index, g, "exact")
                break
    # B: same meaning, same literal pattern
    for o in free_out():
        if o.meaning is None:
            continue
        pat = _pattern(o)
        g = best(o, [g for g in free_gold() if g.meaning == o.meaning and _pattern(g) == pat])
        if g is not None:
            al.pair(o.index, g.index, "content")

    def valid_arity(o: Node) -> bool:
        return o.meaning is not None and len(o.args) == len(BY_NAME[o.meaning].inputs)

    # C: another primitive on the same arguments
    for with_literals in (True, False):
        for o in free_out():
            if o.meaning is None or (not with_literals and not valid_arity(o)):
                continue
            pat = _pattern(o)
            has_lit = any(p != "*" for p in pat)
            if has_lit != with_literals:
                continue
            cands = [g for g in free_gold() if g.meaning != o.meaning and len(g.args) == len(o.args)
                     and tuple("*" if a[0] != "lit" or a[1] == "all" else a[1] for a in o.args) ==
                     tuple("*" if a[0] != "lit" or a[1] == "all" else a[1] for a in g.args)]
            if not with_literals:
                cands = [g for g in cands if aligned_children(o, g) == sum(1 for a in g.args if a[0] == "ref")]
            g = best(o, cands)
            if g is not None:
                al.pair(o.index, g.index, "confusion")
    # E: same primitive, partly changed literals
    for need_overlap in (True, False):
        for o in free_out():
            if o.meaning is None:
                continue
            lits = set(_literals(o))
            cands = [g for g in free_gold() if g.meaning == o.meaning and len(g.args) == len(o.args)]
            if need_overlap:
                cands = [g for g in cands if lits & set(_literals(g)) or (not lits and not _literals(g))]
            g = best(o, cands)
            if g is not None:
                al.pair(o.index, g.index, "partial")
    # F: another primitive on overlapping arguments
    for o in free_out():
        if not valid_arity(o) or _fiction_reason(out, o):
            continue
        lo = _literals(o)
        cands = []
        for g in free_gold():
            lg = _literals(g)
            if g.meaning != o.meaning and lo and lg and (_multiset_le(lo, lg) or _multiset_le(lg, lo)):
                cands.append(g)
        g = best(o, cands)
        if g is not None:
            al.pair(o.index, g.index, "confusion")
    # D: fiction
    for o in free_out():
        why = _fiction_reason(out, o)
        if why is None:
            continue
        al.fiction_why[o.index] = why
        lo = set(_literals(o))
        below = {al.o2g.get(a[1]) for a in o.args if a[0] == "ref"}
        absorbed = []
        for g in free_gold():
            lg = set(_literals(g))
            gbelow = {a[1] for a in g.args if a[0] == "ref"}
            if (lg & lo) or (not lg and g.meaning == o.meaning) or (gbelow and gbelow <= below):
                absorbed.append(g.index)
        for g in absorbed:
            al.g2o[g] = o.index
        al.fiction[o.index] = absorbed
    # G: left-overs
    rest_o, rest_g = free_out(), free_gold()
    for same_type in (True, False):
        for o in list(rest_o):
            ot = BY_NAME[o.meaning].output if o.meaning else None
            for g in rest_g:
                if not same_type or (g.meaning and BY_NAME[g.meaning].output == ot):
                    al.pair(o.index, g.index, "replace")
                    rest_o.remove(o)
                    rest_g.remove(g)
                    break
    al.extra = [o.index for o in rest_o]
    al.missing = [g.index for g in rest_g]
    return al


# -------------------------------------------------------------------- tagging


def _slots(o: Node, g: Node, commutative: bool, al: Alignment) -> list[tuple[Arg, Arg]]:
    pairs = list(zip(o.args, g.args))
    if commutative and len(o.args) == 2 and len(g.args) == 2:
        swapped = list(zip(reversed(o.args), g.args))

        def fits(ps: list[tuple[Arg, Arg]]) -> int:
            return sum(1 for a, b in ps if a == b or (a[0] == b[0] == "ref" and al.o2g.get(a[1]) == b[1]))
        if fits(swapped) > fits(pairs):
            pairs = swapped
    return pairs


def tag_errors(out: Graph, gold: Graph) -> list[Tag]:
    """Error tags for a wrong answer: align the DAGs, then compare nodes and edges."""
    al = align(out, gold)
    nodes = al.nodes
    ev: dict[str, list[str]] = {code: [] for code in ERROR_CODES}
    nm = naming(out.names)

    def glabel(i: int) -> str:
        return gold.nodes[i].label

    def olabel(i: int) -> str:
        return nodes[i].label

    # redundancy by folding
    for h, k in al.folded.items():
        sym = nm.symbol["kth_max"]
        ev["redundancy"].append(
            f"{out.nodes[k].text}; {out.nodes[h].text} is a two-step equivalent of "
            f"{sym} ({', '.join(term_text(t) for t in nodes[h].call.args)})")
    # undefined variables anywhere (variable misuse)
    for node in nodes:
        if node.index in al.folded.values():
            continue
        for a in node.args:
            if a[0] == "undef":
                ev["variable_misuse"].append(f"{node.label} uses {a[1]}, which is {a[2]}")
    if out.result is None:
        ev["omission"].append("the answer has no 'result := ...' statement")
    elif out.result[0] == "undef":
        ev["variable_misuse"].append(f"result is {out.result[1]}, which is {out.result[2]}")

    # node-level differences
    for o, kind in al.kind.items():
        g = al.o2g[o]
        on, gn = nodes[o], gold.nodes[g]
        if kind == "confusion":
            same = _pattern(on) == _pattern(gn) and len(on.args) == len(gn.args)
            ev["primitive_confusion"].append(
                f"{on.label} uses {on.symbol} where the gold uses {gn.symbol} "
                f"({on.meaning} instead of {gn.meaning}) on {'the same' if same else 'overlapping'} arguments")
        elif kind == "replace":
            ev["incorrect_meaning"].append(f"{on.text} stands where the gold has {gn.text}")
    for o, absorbed in al.fiction.items():
        why = al.fiction_why[o]
        if len(absorbed) > 1:
            why += f" (it merges the gold steps {', '.join(glabel(g) for g in absorbed)})"
        ev["primitive_fiction"].append(why)
    for o in al.extra:
        ev["redundancy"].append(f"extra step {nodes[o].text} has no counterpart in the gold")
    for g in al.missing:
        ev["omission"].append(f"the gold step {gold.nodes[g].text} is missing")

    # edges of matched pairs
    extra, fiction = set(al.extra), set(al.fiction)
    missing = set(al.missing)
    edge: list[tuple[str, int | None, bool]] = []  # (evidence, expected gold child, wrong arg is a variable)
    lit_diffs: list[str] = []

    def odesc(a: Arg) -> str:
        if a[0] != "ref":
            return a[1]
        return f"{nodes[a[1]].label} ({nodes[a[1]].symbol})" if nodes[a[1]].var else nodes[a[1]].label

    def gdesc(gx: int) -> str:
        gn = gold.nodes[gx]
        ox = al.g2o.get(gx)
        where = f"{gn.label} in the gold"
        if ox is not None:
            where += " and here" if nodes[ox].label == gn.label else f", {olabel(ox)} here"
        return f"its {gn.symbol} step ({where})"

    def check(label: str, oa: Arg | None, ga: Arg, kind: str) -> None:
        if oa is None or oa[0] == "undef":
            return  # reported above
        if ga[0] == "ref":
            gx = ga[1]
            if gx in missing or al.g2o.get(gx) in fiction:
                return
            if oa[0] == "ref":
                if al.o2g.get(oa[1]) == gx or oa[1] in extra or oa[1] in fiction:
                    return
            edge.append((f"{label} takes {odesc(oa)} where the gold takes {gdesc(gx)}", gx, oa[0] == "ref"))
        elif ga[0] == "lit":
            if oa[0] == "ref":
                if oa[1] in extra or oa[1] in fiction:
                    return
                edge.append((f"{label} takes {odesc(oa)} where the gold takes {ga[1]}", None, True))
            elif oa[1] != ga[1] and kind != "confusion":
                lit_diffs.append(f"{label} has {oa[1]} where the gold has {ga[1]}")

    for o, kind in al.kind.items():
        if kind == "exact":
            continue
        on, gn = nodes[o], gold.nodes[al.o2g[o]]
        for oa, ga in _slots(on, gn, gn.meaning in COMMUTATIVE, al):
            check(on.label, oa, ga, kind)
        if len(on.args) != len(gn.args) and kind in ("partial", "replace"):
            lit_diffs.append(f"{on.label} has {len(on.args)} arguments where the gold has {len(gn.args)}")
    if out.result is not None and gold.result is not None:
        check("result", out.result, gold.result, "result")

    if edge:
        reach = out.reachable()
        if len(edge) == 1 and edge[0][2] and edge[0][1] is not None:
            ox = al.g2o.get(edge[0][1])
            if ox is not None and ox not in fiction and ox not in reach:
                ev["variable_misuse"].append(
                    f"{edge[0][0]}; {olabel(ox)} is computed but never used")
                edge = []
        ev["incorrect_meaning"].extend(e[0] for e in edge)
    ev["incorrect_meaning"].extend(lit_diffs)
    if not any(ev.values()):
        ev["incorrect_meaning"].append("the substituted expression differs from the gold's")
    return [tag(code, _join(items)) for code, items in ev.items() if items]


def _join(items: list[str], limit: int = 3) -> str:
    seen = list(dict.fromkeys(items))
    text = "; ".join(seen[:limit])
    return text + (f" (+{len(seen) - limit} more)" if len(seen) > limit else "")
