"""Per-item scoring: result-set P/R/F1, or a structural verdict for official items.

Execution mode. The ``sparql`` tool's JSON holds both result sets. Each side is the
set of values bound in its rows (the released ``compare_results`` intersects answer
sets; its older sanitiser flattened every bound value the same way), so an extra
projected variable adds false positives. A failed output query counts as no answers
(F1 0). Precision, recall and F1 are computed per item and averaged per split (macro
F1, the paper's Table 1). An item is correct when its F1 is 1.

Reading (``parse.py``): by default as the authors read it, so prose around the query or an
unbound prefix makes the reply unparseable (F1 0, as it was for them); the tags then say
why (``format_violation``, ``undeclared_prefix``) and the views show what the query would
have meant. ``-s extract=lenient`` accepts such replies instead.

Structural mode (official items without an endpoint: their gold answers need the full
DBpedia dump). The output is correct iff its basic graph pattern is isomorphic to the
gold's up to variable names and ``same`` properties, with the same projection; F1 is then
1 or 0. A pattern that states the gold's facts only from their other end (an inverse or
symmetric property) is set aside (``compare.structural_match`` says why).

Macro F1 and the compositionality F1 are computed over a run in ``report.py``.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from engines.compost.compare import SAME, TURNED, align, structural_match
from engines.compost.parse import Parsed, QueryError, parse_reply
from engines.compost.settings import CompostSettings
from engines.compost.tags import tag, triple_tags
from engines.core import Item, Status, Verdict
from engines.reporting import SET_ASIDE

DEFAULT_SETTINGS = CompostSettings()
KEPT_WHEN_CORRECT = {"format_violation", "undeclared_prefix"}
TURNED_WHY = ("set aside: the gold's facts, stated through an inverse or symmetric property read the other way "
              "(ontology_facts.tsv); DBpedia stores such a fact one way round only in part, so only an endpoint can "
              "judge it (-s endpoint=URL); counted apart from every figure")


def gold_triples(item: Item) -> list[tuple[str, str, str]]:
    return [(s, p, o) for s, p, o in item.gold["triples"]]


def read_output(reply: str, extract: str = "strict") -> tuple[Parsed | None, QueryError | None]:
    """The parsed query of a reply, or None and why it is unreadable."""
    try:
        return parse_reply(reply, extract), None
    except QueryError as exc:
        return None, exc


def values(side: dict[str, Any]) -> set[str]:
    return {v for row in side.get("rows", []) for v in row if v is not None}


def prf(gold: set[str], output: set[str]) -> tuple[float, float, float]:
    tp = len(gold & output)
    p = tp / len(output) if output else 0.0
    r = tp / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score_item(item: Item, outputs: Sequence[str], settings: CompostSettings = DEFAULT_SETTINGS,
               with_views: bool = True) -> Verdict:
    reply = outputs[0] if outputs else ""
    parsed, error = read_output(reply, settings.extract)
    gold = gold_triples(item)
    if parsed is None:
        assert error is not None
        tags = [tag("unparseable", str(error))] + [tag(code, evidence) for code, evidence in error.reasons]
        verdict = Verdict("unparseable", {"precision": 0.0, "recall": 0.0, "f1": 0.0}, tags)
        return _with_views(verdict, item, error.diagnosis, None, outputs, with_views, diagnosis=True)
    alignment = align(parsed.triples, gold, parsed.projection)
    tags = triple_tags(parsed, gold, alignment)
    match = structural_match(parsed, gold)
    structural = match == SAME
    execution: dict[str, Any] | None = None
    aside = False  # without an endpoint, facts read from their other end cannot be judged
    if len(outputs) > 1:
        execution = json.loads(outputs[1])
        side = execution["output"]
        if "error" in side:
            tags.append(tag("query_failed", side["error"]))
            p = r = f1 = 0.0
        else:
            p, r, f1 = prf(values(execution["gold"]), values(side))
            if not side.get("rows"):
                tags.append(tag("empty_result", "the query returned no rows"))
    else:
        p = r = f1 = float(structural)
        aside = match == TURNED
        if aside:
            tags.append(tag("turned_reading", TURNED_WHY))
    if parsed.forbidden and not any(t.code == "query_failed" for t in tags):
        tags.append(tag("query_failed", "refused: " + ", ".join(parsed.forbidden)))
    status: Status = "correct" if f1 == 1.0 else "wrong"
    if status == "correct":
        tags = [t for t in tags if t.code in KEPT_WHEN_CORRECT]
    scores = {"precision": p, "recall": r, "f1": f1, "structural": float(structural)}
    if aside:
        scores[SET_ASIDE] = 1.0
    return _with_views(Verdict(status, scores, tags), item, parsed, execution, outputs, with_views)


def _with_views(verdict: Verdict, item: Item, parsed: Parsed | None, execution: dict[str, Any] | None,
                outputs: Sequence[str], with_views: bool, diagnosis: bool = False) -> Verdict:
    if with_views:
        from engines.compost.views import build_views

        verdict.views = build_views(item, parsed, execution, outputs, diagnosis)
    return verdict

