"""How a person's review agrees with the automatic tagger, tag by tag.

For every reviewed item (one with a ``tag_add``, ``tag_remove`` or ``reviewed`` event;
a note alone is not a review) that has a scored result, the automatic tags are the
codes of the stored result and the final tags are ``(auto - removed) | added``. Per
code, the tagger is one rater and the final judgement the other:

    tp  auto and final          fp  auto only (the person removed it)
    fn  final only (added)      tn  neither

Items without a result, or whose result is an infrastructure ``error``, carry no
automatic judgement and are left out (and not counted as reviewed).
"""

from __future__ import annotations

from dataclasses import dataclass

from sessions.api import run_settings
from sessions.store import RunStore

REVIEW_KINDS = ("tag_add", "tag_remove", "reviewed")


@dataclass
class TagAgreement:
    """The 2x2 table of one tag code over the reviewed items, and what follows from it."""

    code: str
    label: str
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None  # tp / (tp + fp): None when the tagger never used the code
    recall: float | None  # tp / (tp + fn): None when the final tags never have the code
    kappa: float | None  # Cohen's kappa; None with no reviewed items
    disagreeing: list[str]  # item ids where the automatic and final tags differ on this code


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of a 2x2 table; None when empty, 1.0 when both raters are constant and agree.

    kappa = (p_o - p_e) / (1 - p_e), computed on integer counts (scaled by n^2) so the
    degenerate case p_e = 1 is detected exactly.
    """
    n = tp + fp + fn + tn
    if n == 0:
        return None
    chance = (tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)  # p_e * n^2
    if chance == n * n:  # p_e = 1: both raters gave one same answer throughout, so p_o = 1
        return 1.0
    return (n * (tp + tn) - chance) / (n * n - chance)


def agreement(store: RunStore) -> tuple[list[TagAgreement], int]:
    """One row per code (the engine's taxonomy in order, then other codes seen, sorted) and the
    number of reviewed items the rows are computed over."""
    engine, _ = run_settings(store)
    annotations = store.annotations()
    try:
        events = annotations.events()
        effective = annotations.effective()
    finally:
        annotations.close()
    touched = {e["item"] for e in events if e["kind"] in REVIEW_KINDS}
    results = store.results()

    taxonomy = {t.code: t.label for t in engine.taxonomy()}
    seen: dict[str, str] = {}  # every code on a reviewed item -> its label
    pairs: list[tuple[str, set[str], set[str]]] = []  # (item id, auto, final) in run order
    for index, item_id in enumerate(store.item_ids()):
        record = results.get(index)
        if item_id not in touched or record is None or record.get("status") == "error":
            continue
        auto = {t["code"] for t in record.get("tags", [])}
        state = effective[item_id]
        for t in record.get("tags", []):
            seen.setdefault(t["code"], t.get("label") or t["code"])
        for code, label in state["added"].items():
            seen.setdefault(code, label)
        pairs.append((item_id, auto, (auto - state["removed"]) | set(state["added"])))

    labels = {**taxonomy, **{code: seen[code] for code in sorted(set(seen) - set(taxonomy))}}
    rows = []
    for code, label in labels.items():
        tp = sum(code in auto and code in final for _, auto, final in pairs)
        fp = sum(code in auto and code not in final for _, auto, final in pairs)
        fn = sum(code not in auto and code in final for _, auto, final in pairs)
        tn = len(pairs) - tp - fp - fn
        rows.append(
            TagAgreement(
                code=code,
                label=label,
                tp=tp,
                fp=fp,
                fn=fn,
                tn=tn,
                precision=_ratio(tp, tp + fp),
                recall=_ratio(tp, tp + fn),
                kappa=cohen_kappa(tp, fp, fn, tn),
                disagreeing=[item_id for item_id, auto, final in pairs if (code in auto) != (code in final)],
            )
        )
    return rows, len(pairs)
