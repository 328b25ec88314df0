"""DEDC error taxonomy (paper section 3.3, Table 2) and automatic tagging.

The tagger reads both answers as DAGs (``graph.build_graph``), aligns the output DAG with
the gold DAG (``align.align``: which output step plays which gold step) and names what
differs. Unmatched output steps are ``redundancy``, unmatched gold steps ``omission``, a
step no primitive of the symbolic system can be is ``primitive_fiction``, a known
primitive where the gold has another on the same arguments ``primitive_confusion``.

Edges of matched pairs are compared next. A reference to an undefined variable (or to
one defined only later) is ``variable_misuse``; a single wrong antecedent that leaves a
correct node unused (dangling) is ``variable_misuse`` (Table 2: "incorrect variable name
makes the first expression useless"); other wrong antecedents, changed literals and
replacements are ``incorrect_meaning``. Several tags may apply; each carries evidence
naming the step and what differs. A correct answer gets no error tags.
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.core import Tag, TagType
from engines.dedc.align import CONFUSION, EXACT, PARTIAL, REPLACE, Alignment, align, pattern
from engines.dedc.graph import Arg, Graph, Literal, Node, Ref, Undefined, naming
from engines.dedc.parse import term_text
from engines.dedc.primitives import COMMUTATIVE
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

tag = TAXONOMY.tag


def _slots(o: Node, g: Node, commutative: bool, alignment: Alignment) -> list[tuple[Arg, Arg]]:
    """Output and gold arguments side by side (a commutative call's swapped when that fits better)."""
    pairs = list(zip(o.args, g.args))
    if commutative and len(o.args) == 2 and len(g.args) == 2:
        swapped = list(zip(reversed(o.args), g.args))

        def fits(ps: list[tuple[Arg, Arg]]) -> int:
            return sum(1 for a, b in ps if alignment.matches(a, b))
        if fits(swapped) > fits(pairs):
            pairs = swapped
    return pairs


@dataclass
class _WrongEdge:
    evidence: str
    gold_child: int | None  # the gold node the argument should have named
    variable: bool  # the wrong argument names a node (a variable), not a literal


class _Tagger:
    """The evidence for each error code, gathered by the steps of ``tag_errors`` in order."""

    def __init__(self, out: Graph, gold: Graph):
        self.out, self.gold = out, gold
        self.alignment = align(out, gold)
        self.nodes = self.alignment.nodes
        self.evidence: dict[str, list[str]] = {code: [] for code in ERROR_CODES}
        self.wrong_edges: list[_WrongEdge] = []
        self.changed: list[str] = []  # changed literals and argument counts

    def folded_redundancy(self) -> None:
        symbol = naming(self.out.names).symbol["kth_max"]
        for h, k in self.alignment.folded.items():
            self.evidence["redundancy"].append(
                f"{self.out.nodes[k].text}; {self.out.nodes[h].text} is a two-step equivalent of "
                f"{symbol} ({', '.join(term_text(t) for t in self.nodes[h].call.args)})")

    def undefined_variables(self) -> None:
        folded = set(self.alignment.folded.values())
        for node in self.nodes:
            if node.index in folded:
                continue
            for a in node.args:
                if isinstance(a, Undefined):
                    self.evidence["variable_misuse"].append(f"{node.label} uses {a.name}, which is {a.why}")
        if self.out.result is None:
            self.evidence["omission"].append("the answer has no 'result := ...' statement")
        elif isinstance(self.out.result, Undefined):
            self.evidence["variable_misuse"].append(f"result is {self.out.result.name}, which is {self.out.result.why}")

    def node_differences(self) -> None:
        a = self.alignment
        for o, kind in a.kind.items():
            on, gn = self.nodes[o], self.gold.nodes[a.o2g[o]]
            if kind == CONFUSION:
                same = pattern(on) == pattern(gn) and len(on.args) == len(gn.args)
                self.evidence["primitive_confusion"].append(
                    f"{on.label} uses {on.symbol} where the gold uses {gn.symbol} "
                    f"({on.meaning} instead of {gn.meaning}) on {'the same' if same else 'overlapping'} arguments")
            elif kind == REPLACE:
                self.evidence["incorrect_meaning"].append(f"{on.text} stands where the gold has {gn.text}")
        for o, absorbed in a.fiction.items():
            why = a.fiction_why[o]
            if len(absorbed) > 1:
                why += f" (it merges the gold steps {', '.join(self.gold.nodes[g].label for g in absorbed)})"
            self.evidence["primitive_fiction"].append(why)
        for o in a.extra:
            self.evidence["redundancy"].append(f"extra step {self.nodes[o].text} has no counterpart in the gold")
        for g in a.missing:
            self.evidence["omission"].append(f"the gold step {self.gold.nodes[g].text} is missing")

    def edges(self) -> None:
        a = self.alignment
        for o, kind in a.kind.items():
            if kind == EXACT:
                continue
            on, gn = self.nodes[o], self.gold.nodes[a.o2g[o]]
            for out_arg, gold_arg in _slots(on, gn, gn.meaning in COMMUTATIVE, a):
                self.compare_argument(on.label, out_arg, gold_arg, kind)
            if len(on.args) != len(gn.args) and kind in (PARTIAL, REPLACE):
                self.changed.append(f"{on.label} has {len(on.args)} arguments where the gold has {len(gn.args)}")
        if self.out.result is not None and self.gold.result is not None:
            self.compare_argument("result", self.out.result, self.gold.result, "result")

    def compare_argument(self, label: str, out_arg: Arg, gold_arg: Arg, kind: str) -> None:
        a = self.alignment
        if isinstance(out_arg, Undefined):
            return  # reported by undefined_variables
        uncounted = isinstance(out_arg, Ref) and (out_arg.node in a.extra or out_arg.node in a.fiction)
        if isinstance(gold_arg, Ref):
            if gold_arg.node in a.missing or a.g2o.get(gold_arg.node) in a.fiction:
                return
            if isinstance(out_arg, Ref) and (a.o2g.get(out_arg.node) == gold_arg.node or uncounted):
                return
            self.wrong_edges.append(_WrongEdge(f"{label} takes {self.describe_out(out_arg)} where the gold takes "
                                               f"{self.describe_gold(gold_arg.node)}", gold_arg.node,
                                               isinstance(out_arg, Ref)))
        elif isinstance(gold_arg, Literal):
            if isinstance(out_arg, Ref):
                if not uncounted:
                    self.wrong_edges.append(_WrongEdge(f"{label} takes {self.describe_out(out_arg)} where the gold "
                                                       f"takes {gold_arg.text}", None, True))
            elif out_arg.text != gold_arg.text and kind != CONFUSION:
                self.changed.append(f"{label} has {out_arg.text} where the gold has {gold_arg.text}")

    def describe_out(self, arg: Arg) -> str:
        if not isinstance(arg, Ref):
            return arg.text if isinstance(arg, Literal) else arg.name
        node = self.nodes[arg.node]
        return f"{node.label} ({node.symbol})" if node.var else node.label

    def describe_gold(self, g: int) -> str:
        gn = self.gold.nodes[g]
        o = self.alignment.g2o.get(g)
        where = f"{gn.label} in the gold"
        if o is not None:
            where += " and here" if self.nodes[o].label == gn.label else f", {self.nodes[o].label} here"
        return f"its {gn.symbol} step ({where})"

    def dangling_or_wrong_edges(self) -> None:
        """One wrong variable that leaves a correct step unused is variable misuse; else incorrect meaning."""
        edges = self.wrong_edges
        if len(edges) == 1 and edges[0].variable and edges[0].gold_child is not None:
            o = self.alignment.g2o.get(edges[0].gold_child)
            if o is not None and o not in self.alignment.fiction and o not in self.out.reachable():
                self.evidence["variable_misuse"].append(
                    f"{edges[0].evidence}; {self.nodes[o].label} is computed but never used")
                edges = []
        self.evidence["incorrect_meaning"].extend(e.evidence for e in edges)
        self.evidence["incorrect_meaning"].extend(self.changed)
        if not any(self.evidence.values()):
            self.evidence["incorrect_meaning"].append("the substituted expression differs from the gold's")


def tag_errors(out: Graph, gold: Graph) -> list[Tag]:
    """Error tags for a wrong answer: align the DAGs, then compare nodes and edges."""
    tagger = _Tagger(out, gold)
    tagger.folded_redundancy()
    tagger.undefined_variables()
    tagger.node_differences()
    tagger.edges()
    tagger.dangling_or_wrong_edges()
    return [tag(code, _join(items)) for code, items in tagger.evidence.items() if items]


def _join(items: list[str], limit: int = 3) -> str:
    seen = list(dict.fromkeys(items))
    text = "; ".join(seen[:limit])
    return text + (f" (+{len(seen) - limit} more)" if len(seen) > limit else "")
