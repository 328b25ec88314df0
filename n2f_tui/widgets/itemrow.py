"""The run screen's item list: one row per item, and the list's title.

A row is the status glyph, the id (``IdColumn``), the list score and the tag chips: as many
whole chips as fit (the first one shortened with "…" when not even it does), the rest
counted as ``+N``.
"""

from __future__ import annotations

from rich.text import Text

from n2f_tui.render import STATUS_STYLE, safe_text
from n2f_tui.state import RunState
from n2f_tui.widgets.idcolumn import IdColumn
from n2f_tui.widgets.style import AUTO_CHIP, GLYPH, MANUAL_CHIP


def item_row(state: RunState, ids: IdColumn, index: int, width: int) -> Text:
    """The row of item ``index`` in ``width`` cells."""
    status = state.status(index)
    text = Text()
    text.append(GLYPH.get(status, "?") + " ", style=STATUS_STYLE.get(status, ""))
    text.append_text(safe_text(ids.text(state.ids[index], ids.width(width))))
    score = state.main_score(index)
    text.append(" " + ("    -" if score is None else f"{score:5.2f}") + " ", style="dim")
    tags = state.tags(index)
    chips = [(tag.code, AUTO_CHIP) for tag in tags.auto] + [(code, MANUAL_CHIP) for code in tags.manual]
    reviewed = 1 if tags.reviewed else 0
    for shown, (code, chip_style) in enumerate(chips):
        left = len(chips) - shown - 1
        more = len(f"+{left}") if left else 0
        room = width - text.cell_len - 3 - reviewed - more
        if len(code) > room:
            if shown == 0 and room >= 4:  # the first tag's name as far as it goes, never only "+1"
                text.append_text(safe_text(f" {code[:room - 1]}… ", style=chip_style))
                text.append(" ")
                shown += 1
            if len(chips) - shown:
                text.append(f"+{len(chips) - shown}", style="bold")
            break
        text.append_text(safe_text(f" {code} ", style=chip_style))
        text.append(" ")
    if tags.reviewed:
        text.append("✔", style="green")
    return text


def list_title(state: RunState) -> Text:
    """The run's state line: what the demo is (on the demo run), how many items are listed, the study's
    progress, whose labels, and the filter, search and sort in force."""
    parts = [f"{len(state.order)} items"]
    meta = state.store.meta
    if meta.get("name") == "demo" and str(meta.get("model", "")).startswith("sim"):  # what a newcomer lands on
        parts.insert(0, "demo: DEDC on a simulated model, no real model called · Escape, then n: your own run")
    if state.study:
        done, total = state.study_progress()
        parts.append(f"study {done}/{total}")
    parts.append(("blind · " if state.blind else "") + f"labels of {state.annotator}")
    if state.filter != "all":
        parts.append(f"filter {state.filter}")
    if state.query:
        parts.append(f"search “{state.query}”")
    parts.append(f"sort {state.sort}")
    return Text(" · ".join(parts))
