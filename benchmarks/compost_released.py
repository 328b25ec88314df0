"""The compost reader and scorer on the authors' 8,409 released outputs: speed, agreement, replay.

Usage: python benchmarks/compost_released.py

Prints
- parsing: ms per query text for the grammar alone, and ms per reply for the whole reading
  (extraction, prefixes, structure, the diagnosis of rejected replies), medians of three
  passes over all 8,409 outputs in this process (caches cleared per pass);
- acceptance against pyoxigraph's SPARQL parser given the authors' prefixes: agreement and
  each disagreement class with one example;
- per level, a replay through the real entry point (``n2f run compost -m replay:CSV -s
  dataset=...``, then ``n2f export``): the confusion matrix of our verdict against the
  authors' F1 (1, partial, 0 with answers, no answers), and the share of items we judge
  correct whose authors' F1 is 1;
- the authors' compositionality counts from their own F1 column.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import pyoxigraph

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from compost_released import disagreement_class, level_rows, official_file, released_csv  # noqa: E402
from engines.compost import grammar, parse  # noqa: E402
from engines.compost.compositionality import authors_counts  # noqa: E402
from engines.compost.prefixes import BOUND  # noqa: E402
from engines.core import ItemResult  # noqa: E402

LEVELS = ("easy", "medium", "hard")
THEIRS = ("F1=1", "0<F1<1", "F1=0, rows", "no rows")
OURS = ("correct", "wrong", "unparseable")


def theirs(row) -> str:
    return THEIRS[0] if row.f1 == 1 else THEIRS[1] if row.f1 > 0 else THEIRS[2] if row.answered else THEIRS[3]


def median_ms(texts: list[str], read: Callable[[str], object], rejected: type[Exception],
              fresh: Callable[[], None] = lambda: None) -> float:
    """ms per text of ``read`` over all ``texts`` (a text it rejects counts as read), median of
    three passes, ``fresh`` called before each."""
    passes = []
    for _ in range(3):
        fresh()
        start = time.perf_counter()
        for text in texts:
            try:
                read(text)
            except rejected:
                pass
        passes.append((time.perf_counter() - start) / len(texts))
    return 1000 * statistics.median(passes)


def grammar_speed(replies: list[str]) -> float:
    """ms per query text for the SPARQL grammar alone (lark LALR: lexing, parsing, the tree)."""
    return median_ms([parse.authors_text(r) for r in replies], grammar.parse_tree, grammar.SparqlSyntaxError)


def clear_caches() -> None:
    parse._reply.cache_clear()
    parse._query.cache_clear()


def parsing_speed(replies: list[str]) -> float:
    return median_ms(replies, parse.parse_reply, parse.QueryError, clear_caches)


def agreement(replies: list[str]) -> None:
    store = pyoxigraph.Store()
    classes: dict[str, list[str]] = {}
    agree = 0
    for reply in replies:
        try:
            parse.parse_reply(reply)
            ours = True
        except parse.QueryError:
            ours = False
        try:
            store.query(parse.authors_text(reply), prefixes=BOUND)
            oxigraph = True
        except SyntaxError:
            oxigraph = False
        except (OSError, RuntimeError, ValueError):
            oxigraph = True
        if ours == oxigraph:
            agree += 1
        else:
            name = disagreement_class(parse.authors_text(reply), ours) or "UNEXPLAINED"
            classes.setdefault(f"{name} (ours {'accepts' if ours else 'rejects'})", []).append(reply)
    print(f"acceptance vs pyoxigraph: {agree}/{len(replies)} agree ({100 * agree / len(replies):.2f}%)")
    for name, examples in classes.items():
        print(f"  {name}: {len(examples)}; e.g. {examples[0][:160]!r}")


def n2f(home: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "n2f_tui", *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "N2F_HOME": home})
    return done.stdout


def replay(level: str, rows) -> None:
    with tempfile.TemporaryDirectory() as home:
        name = f"replay-{level}"
        n2f(home, "run", "compost", "-m", f"replay:{released_csv(level)}", "-s", f"dataset={official_file(level)}",
            "--name", name, "--json", "-q")
        records = {r["id"]: r for r in map(json.loads, n2f(home, "export", name, "--format", "jsonl").splitlines())}
    matrix = Counter((records[r.item.id]["status"], theirs(r)) for r in rows)
    print(f"{level}: our verdict (rows) x the authors' F1 (columns), -m replay, extract=strict")
    print("  " + " " * 12 + "".join(f"{c:>12}" for c in THEIRS))
    for ours in OURS:
        print(f"  {ours:>12}" + "".join(f"{matrix[(ours, c)]:>12}" for c in THEIRS))
    correct = sum(matrix[("correct", c)] for c in THEIRS)
    if correct:
        print(f"  judged correct: {correct}, of which authors' F1 = 1: {matrix[('correct', THEIRS[0])]} "
              f"({100 * matrix[('correct', THEIRS[0])] / correct:.1f}%)")


def main() -> None:
    rows = {level: level_rows(level) for level in LEVELS}
    replies = [r.generated for level in LEVELS for r in rows[level]]
    print(f"grammar alone: {grammar_speed(replies):.3f} ms per query text; whole reading (extraction, prefixes, "
          f"structure, the lenient diagnosis of rejected replies): {parsing_speed(replies):.3f} ms per reply "
          f"(medians of 3 passes over {len(replies)} replies)")
    agreement(replies)
    for level in LEVELS:
        replay(level, rows[level])
    for level in LEVELS:
        counts = authors_counts([ItemResult(r.item, "correct", {"f1": r.f1}, []) for r in rows[level]])
        print(f"{level}, authors' F1 column -> " + "; ".join(
            f"{s} {c.tp}/{c.fp}/{c.fn} F1 {c.f1:.4f}" for s, c in counts.items()))


if __name__ == "__main__":
    main()
