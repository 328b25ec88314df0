"""Aligning an output DAG with the gold DAG: which output step plays which gold step.

``align`` runs these steps in order, each only over the nodes not matched yet (output
nodes in topological order):

1. exact: the same expanded sub-expression (by meaning, commutative arguments unordered);
2. same content: same meaning and the same literal arguments at the same positions
   (``all`` and variables are wildcards) -> differences are in the antecedents (edges);
3. confusion on the same arguments: a different known primitive on exactly the gold
   step's literal arguments (even where they do not fit its own signature: the inputs are
   right, the name is wrong, as with an intuitive name under the cross naming), or,
   without distinctive literals, a known primitive on exactly the gold step's antecedents,
   whether or not they fit its own signature (Table 2: "the correct input parameters but
   the incorrect primitive name"; ``add (value_1, value_2)`` where the cross naming calls
   add ``top_k``);
4. changed literals: same meaning and arity with partly different literals;
5. confusion on overlapping arguments (one literal multiset contains the other);
6. fiction: an unknown symbol, or arguments that fit no signature (arity or types); it
   accounts for the unmatched gold nodes sharing a distinctive literal or all antecedents
   with it (the steps it merged or mangled);
7. left-overs: output and gold left-overs of the same type pair up as replacements
   (incorrect meaning); further output nodes are redundant, further gold nodes omitted.

Before aligning, ``kth_argmax`` followed by ``hop`` on the same column is folded into the
``kth_max`` it is equivalent to (paper Table 2, redundancy "equivalent but redundant").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from engines.dedc.graph import Arg, Graph, Literal, Node, Ref, arg_type, distinctive, naming, signature_text
from engines.dedc.parse import Call
from engines.dedc.primitives import BY_NAME, COMMUTATIVE

EXACT, CONTENT, CONFUSION, PARTIAL, REPLACE = "exact", "content", "confusion", "partial", "replace"


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

    def matches(self, out_arg: Arg, gold_arg: Arg) -> bool:
        """The same argument, or references to nodes aligned with each other."""
        return out_arg == gold_arg or (isinstance(out_arg, Ref) and isinstance(gold_arg, Ref)
                                       and self.o2g.get(out_arg.node) == gold_arg.node)


# --------------------------------------------------------------- fingerprints


class _Interner:
    def __init__(self) -> None:
        self.ids: dict[tuple[object, ...], int] = {}

    def sigs(self, graph: Graph, nodes: Sequence[Node]) -> list[int]:
        """Hash-consed id of each node's expanded sub-expression (by meaning)."""
        out: list[int] = [0] * len(graph.nodes)
        for node in nodes:
            keys = [("r", out[a.node]) if isinstance(a, Ref) else a.key for a in node.args]
            if node.meaning in COMMUTATIVE:
                keys.sort()
            key = (node.meaning or "?" + node.symbol, tuple(keys))
            out[node.index] = self.ids.setdefault(key, len(self.ids))
        return out


def pattern(node: Node) -> tuple[str, ...]:
    """The node's distinctive literals by position, ``*`` elsewhere (sorted when commutative)."""
    found = ["*" if (text := distinctive(a)) is None else text for a in node.args]
    if node.meaning in COMMUTATIVE:
        found.sort()
    return tuple(found)


def literals(node: Node) -> list[str]:
    return [text for a in node.args if (text := distinctive(a)) is not None]


def _contains(big: list[str], small: list[str]) -> bool:
    """Every literal of ``small`` is in ``big``, counted with multiplicity."""
    return not Counter(small) - Counter(big)


def _fold(out: Graph, gold: Graph) -> tuple[list[Node], dict[int, int]]:
    """Fold kth_argmax + hop on the same column into the kth_max it equals."""
    def chains(graph: Graph) -> list[tuple[int, int]]:
        found = []
        consumers = graph.consumers()
        for node in graph.nodes:
            if node.meaning != "hop" or len(node.args) != 2 or not isinstance(node.args[0], Ref):
                continue
            k = graph.nodes[node.args[0].node]
            if (k.meaning == "kth_argmax" and len(k.args) == 3 and k.args[1] == node.args[1]
                    and consumers[k.index] == [node.index]):
                found.append((node.index, k.index))
        return found

    nodes = list(out.nodes)
    folded: dict[int, int] = {}
    found = chains(out)
    if not found or chains(gold):
        return nodes, folded
    symbol = naming(out.names).symbol["kth_max"]
    for h, k in found:
        hop, argmax = out.nodes[h], out.nodes[k]
        nodes[h] = Node(h, hop.var, symbol, "kth_max", [argmax.args[0], hop.args[1], argmax.args[2]], hop.line,
                        Call(symbol, (argmax.call.args[0], hop.call.args[1], argmax.call.args[2])))
        folded[h] = k
    return nodes, folded


def fiction_reason(graph: Graph, node: Node) -> str | None:
    """Why the node is no primitive of the symbolic system (unknown, wrong arity, wrong types), or None."""
    if node.meaning is None:
        return f"{node.label} uses {node.symbol!r}, which is not a primitive of this symbolic system"
    primitive = BY_NAME[node.meaning]
    signature = signature_text(node.meaning, node.symbol)
    if len(node.args) != len(primitive.inputs):
        return f"{node.label} calls {node.symbol} with {len(node.args)} arguments, but its signature is {signature}"
    got = [arg_type(graph, a) for a in node.args]
    if any(t is not None and t != want for t, want in zip(got, primitive.inputs)):
        shown = ", ".join(t or "?" for t in got)
        return f"{node.label} calls {node.symbol} with ({shown}), which fits no signature ({signature})"
    return None


# ------------------------------------------------------------------ the steps


class _Aligner:
    """The state the alignment steps share: both graphs, the folded output nodes, the pairs so far."""

    def __init__(self, out: Graph, gold: Graph):
        self.out, self.gold = out, gold
        self.result = Alignment()
        nodes, self.result.folded = _fold(out, gold)
        self.result.nodes = nodes
        skipped = set(self.result.folded.values())
        self.out_nodes = [n for n in nodes if n.index not in skipped]
        interner = _Interner()
        self.out_sig = interner.sigs(out, self.out_nodes)
        self.gold_sig = interner.sigs(gold, gold.nodes)

    def free_gold(self) -> list[Node]:
        return [g for g in self.gold.nodes if g.index not in self.result.g2o]

    def free_out(self) -> list[Node]:
        return [o for o in self.out_nodes if o.index not in self.result.o2g and o.index not in self.result.fiction]

    def aligned_children(self, o: Node, g: Node) -> int:
        return sum(1 for a, b in zip(o.args, g.args)
                   if isinstance(a, Ref) and isinstance(b, Ref) and self.result.o2g.get(a.node) == b.node)

    def pair_best(self, o: Node, candidates: list[Node], kind: str) -> None:
        """Pair ``o`` with the candidate sharing most aligned antecedents (the earliest on ties)."""
        if candidates:
            g = max(candidates, key=lambda g: (self.aligned_children(o, g), -g.index))
            self.result.pair(o.index, g.index, kind)

    def exact(self) -> None:
        by_sig: dict[int, list[int]] = {}
        for g in self.gold.nodes:
            by_sig.setdefault(self.gold_sig[g.index], []).append(g.index)
        for o in self.out_nodes:
            for g_index in by_sig.get(self.out_sig[o.index], ()):
                if g_index not in self.result.g2o:
                    self.result.pair(o.index, g_index, EXACT)
                    break

    def same_content(self) -> None:
        for o in self.free_out():
            if o.meaning is not None:
                shape = pattern(o)
                self.pair_best(o, [g for g in self.free_gold() if g.meaning == o.meaning and pattern(g) == shape],
                               CONTENT)

    def confusion_on_same_arguments(self) -> None:
        for with_literals in (True, False):
            for o in self.free_out():
                if o.meaning is None:
                    continue
                if any(p != "*" for p in pattern(o)) != with_literals:
                    continue
                positions = _positions(o)
                candidates = [g for g in self.free_gold() if g.meaning != o.meaning and len(g.args) == len(o.args)
                              and _positions(g) == positions]
                if not with_literals:
                    candidates = [g for g in candidates if self.aligned_children(o, g) == len(g.children())]
                self.pair_best(o, candidates, CONFUSION)

    def changed_literals(self) -> None:
        for need_overlap in (True, False):
            for o in self.free_out():
                if o.meaning is None:
                    continue
                mine = set(literals(o))
                candidates = [g for g in self.free_gold() if g.meaning == o.meaning and len(g.args) == len(o.args)]
                if need_overlap:
                    candidates = [g for g in candidates if mine & set(literals(g)) or (not mine and not literals(g))]
                self.pair_best(o, candidates, PARTIAL)

    def confusion_on_overlapping_arguments(self) -> None:
        for o in self.free_out():
            if not _valid_arity(o) or fiction_reason(self.out, o):
                continue
            mine = literals(o)
            candidates = [g for g in self.free_gold() if g.meaning != o.meaning and mine and (theirs := literals(g))
                          and (_contains(theirs, mine) or _contains(mine, theirs))]
            self.pair_best(o, candidates, CONFUSION)

    def fiction(self) -> None:
        for o in self.free_out():
            why = fiction_reason(self.out, o)
            if why is None:
                continue
            self.result.fiction_why[o.index] = why
            mine = set(literals(o))
            below = {self.result.o2g.get(child) for child in o.children()}
            absorbed = []
            for g in self.free_gold():
                theirs = set(literals(g))
                gold_below = set(g.children())
                if (theirs & mine) or (not theirs and g.meaning == o.meaning) or (gold_below and gold_below <= below):
                    absorbed.append(g.index)
            for g_index in absorbed:
                self.result.g2o[g_index] = o.index
            self.result.fiction[o.index] = absorbed

    def leftovers(self) -> None:
        rest_out, rest_gold = self.free_out(), self.free_gold()
        for same_type in (True, False):
            for o in list(rest_out):
                out_type = BY_NAME[o.meaning].output if o.meaning else None
                for g in rest_gold:
                    if not same_type or (g.meaning and BY_NAME[g.meaning].output == out_type):
                        self.result.pair(o.index, g.index, REPLACE)
                        rest_out.remove(o)
                        rest_gold.remove(g)
                        break
        self.result.extra = [o.index for o in rest_out]
        self.result.missing = [g.index for g in rest_gold]


def _valid_arity(o: Node) -> bool:
    return o.meaning is not None and len(o.args) == len(BY_NAME[o.meaning].inputs)


def _positions(node: Node) -> tuple[str, ...]:
    """Distinctive literals by position, unsorted (what "the same arguments" compares)."""
    return tuple("*" if (text := distinctive(a)) is None else text for a in node.args)


def align(out: Graph, gold: Graph) -> Alignment:
    """The alignment of ``out`` with ``gold``, built by the steps of the module docstring in order."""
    aligner = _Aligner(out, gold)
    aligner.exact()
    aligner.same_content()
    aligner.confusion_on_same_arguments()
    aligner.changed_literals()
    aligner.confusion_on_overlapping_arguments()
    aligner.fiction()
    aligner.leftovers()
    return aligner.result
