"""Run aggregation: Table 1 (macro and compositionality F1 per split), Figure 4, Figure 5, tags.

Compositionality F1 comes two ways (``compositionality.py``): ``compositionality_f1`` and
``compositionality_f1_{split}`` are the authors' scorer, which the paper's Table 1 prints;
``compositionality_f1_def`` and ``compositionality_f1_def_{split}`` are the reading of the
paper's prose. The report prints both and the authors' TP/FP/FN/TN/partial counts per split.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean
from typing import Sequence

from engines.compost.compositionality import SPLITS, authors_classes, authors_counts, prose_classes, prose_f1
from engines.core import Chart, ItemResult, Report, RunResults, Table
from engines.compost.tags import TAXONOMY
from engines.reporting import scored, set_aside, status_counts, tag_table


def split_metrics(run: RunResults) -> dict[str, float]:
    judged = scored(run.results)
    classes = prose_classes(judged)
    counts = authors_counts(judged)
    metrics: dict[str, float] = {"items": float(len(run.results))}
    metrics["macro_f1"] = mean(r.scores.get("f1", 0.0) for r in judged) if judged else 0.0
    metrics["compositionality_f1"] = counts["all"].f1
    metrics["compositionality_f1_def"] = prose_f1(list(classes.values()))
    for split in SPLITS:
        part = [r for r in judged if r.item.meta.get("split") == split]
        if part:
            metrics[f"macro_f1_{split}"] = mean(r.scores.get("f1", 0.0) for r in part)
            metrics[f"compositionality_f1_{split}"] = counts[split].f1
            metrics[f"compositionality_f1_def_{split}"] = prose_f1([classes[r.item.id] for r in part
                                                                   if r.item.id in classes])
    return metrics


def counts_table(run: RunResults, metrics: dict[str, float]) -> Table:
    """The authors' compositionality counts per split, with the F1 each gives and the prose reading's F1
    (``metrics``: the run's ``split_metrics``)."""
    counts = authors_counts(scored(run.results))
    rows = []
    for split in ("all", *SPLITS):
        c = counts[split]
        prose = metrics.get("compositionality_f1_def" + ("" if split == "all" else f"_{split}"))
        rows.append([split, c.tp, c.fp, c.fn, c.tn, c.partial, round(c.f1, 4),
                     "-" if prose is None else round(prose, 4)])
    return Table("Compositionality", "Compositionality F1: the authors' scorer (Table 1) and the prose reading",
                 ["split", "TP", "FP", "FN", "TN", "partial", "comp. F1 (authors, Table 1)", "comp. F1 (prose)"],
                 rows, note="Table 1 of the paper prints the authors' scorer: green F1 > 0.99, red F1 < 0.0001, "
                            "partial answers in neither class, one-edge items FP when green and FN when red, "
                            "micro F1 over the counts; lattice nodes missing from the run count as green train "
                            "items. The prose reading counts correct/wrong statuses, macro over TP/FP/FN.")


def _cell(metrics: dict[str, float], key: str) -> object:
    return round(metrics[key], 2) if key in metrics else "-"


def table1(runs: Sequence[RunResults]) -> Table:
    rows = []
    for run in runs:
        m = split_metrics(run)
        first = run.results[0].item.meta if run.results else {}
        rows.append([run.name, run.model, first.get("level", "?"), first.get("task", "?")]
                    + [_cell(m, f"macro_f1_{s}") for s in SPLITS]
                    + [_cell(m, f"compositionality_f1_{s}") for s in SPLITS])
    return Table("Table 1", "Macro F1 and compositionality F1 per split",
                 ["run", "model", "dataset", "task", "macro F1 train", "macro F1 val", "macro F1 test",
                  "comp. F1 train", "comp. F1 val", "comp. F1 test"], rows)


def figure4(run: RunResults) -> Table:
    cells: dict[tuple[int, int], list[float]] = defaultdict(list)
    for r in scored(run.results):
        cells[(int(r.item.meta.get("depth", 0)), int(r.item.meta.get("breadth", 0)))].append(r.scores.get("f1", 0.0))
    depths = sorted({d for d, _ in cells})
    breadths = sorted({b for _, b in cells})
    rows = [[d] + [f"{mean(cells[(d, b)]):.2f} (n={len(cells[(d, b)])})" if cells.get((d, b)) else "-"
                   for b in breadths] for d in depths]
    return Table("Figure 4", "Macro F1 by depth (rows) and breadth (columns)",
                 ["depth"] + [f"breadth {b}" for b in breadths], rows)


def figure5(run: RunResults) -> Table:
    """The sub-pattern lattice of the largest base pattern in the run, each node with its outcome."""
    classes = prose_classes(scored(run.results))
    authors = authors_classes(scored(run.results))
    bases: dict[str, list[ItemResult]] = defaultdict(list)
    for r in run.results:
        if r.item.meta.get("edges") is not None:
            bases[str(r.item.meta.get("base"))].append(r)
    if not bases:
        return Table("Figure 5", "Sub-pattern lattice", ["gid"], [], note="no item carries edge data")
    base, group = max(bases.items(), key=lambda kv: (len(kv[1]), kv[0]))
    edges = {r.item.id: frozenset(r.item.meta["edges"]) for r in group}
    rows = []
    for r in sorted(group, key=lambda r: (len(edges[r.item.id]), int(r.item.meta.get("gid", 0)))):
        mine = edges[r.item.id]
        parents = [str(s.item.meta.get("gid")) for s in group if len(edges[s.item.id]) == len(mine) - 1
                   and edges[s.item.id] < mine]
        rows.append([r.item.meta.get("gid"), len(mine), r.item.meta.get("split"), " ".join(sorted(mine)),
                     ", ".join(parents) or "-", r.status, round(r.scores.get("f1", 0.0), 2),
                     authors.get(r.item.id, "-"), classes.get(r.item.id, "-")])
    return Table("Figure 5", f"Sub-pattern lattice of base pattern {base}",
                 ["gid", "edges", "split", "edge ids", "contains (one edge less)", "status", "F1",
                  "class by the authors' rule (Table 1)", "class by the paper's prose (4.1)"],
                 rows, note="edge ids are branch.level; each row lists the sub-patterns it directly contains. "
                            "The authors' rule (their scorer, which Table 1 prints) counts every one-edge item "
                            "FP when green and FN when red, and an F1 strictly between 0.0001 and 0.99 as "
                            "partial; the prose reading counts a correct one-edge item TP and a wrong one TN.")


def aggregate(run: RunResults, against: Sequence[RunResults] = ()) -> Report:
    metrics = split_metrics(run)
    metrics.update({f"n_{k}": float(v) for k, v in status_counts(run.results).items()})
    extract = getattr(run.settings, "extract", "strict")
    notes = [f"Replies were read with extract={extract}: " + (
        "the paper's reading (only a leading ```sparql and a trailing ``` removed; prose around the query or an "
        "undeclared prefix the authors did not bind makes a reply unparseable, F1 0)." if extract == "strict" else
        "exploratory, not the paper's (queries inside prose and the usual undeclared DBpedia prefixes accepted; "
        "figures are not comparable with Table 1)."),
             "compositionality_f1[_split] is the authors' scorer, the one the paper's Table 1 prints; "
             "compositionality_f1_def[_split] is the reading of the paper's prose."]
    if any(r.item.meta.get("source") == "official" and len(r.outputs) < 2 for r in run.results):
        notes.append("Official items were scored structurally (no endpoint): an output is correct when its "
                     "basic graph pattern is isomorphic to the gold's up to variable names and same properties, "
                     "with the same projection; F1 is 1 or 0. Run with -s endpoint=URL for result-set F1.")
    aside = set_aside(run.results)
    if aside:
        notes.append(f"{len(aside)} item(s) set aside (tag turned_reading): they state the gold's facts only "
                     "through an inverse or symmetric property read the other way, which DBpedia stores one way "
                     "round only in part; no figure counts them.")
    if any(r.item.meta.get("edges") is None for r in run.results):
        notes.append("Compositionality F1 counts only items with sub-pattern edge data.")
    heat = figure4(run)
    chart = Chart("Figure 4", "Macro F1 by depth x breadth",
                  {f"d{row[0]} " + col: float(cell.split()[0]) for row in heat.rows
                   for col, cell in zip(heat.columns[1:], row[1:]) if cell != "-"}, unit="F1")
    return Report(metrics=metrics,
                  tables=[table1([run, *against]), counts_table(run, metrics), heat, figure5(run),
                          tag_table("Tags", "Items per error tag", run.results, TAXONOMY)],
                  charts=[chart], notes=notes)
