"""The item list's id column: as much of each id as the row has room for, the part that tells ids apart kept.

A robogrid id (``robogrid-instruct-block-alien-d10-e2-p0.5-0008``) is wider than the list
at 160 columns; cut at the end it loses its number, the one part that differs. Without
the prefix all the run's ids share it reads ``…0008``; the detail's head has it whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ROW_FIXED = 9  # columns of a list row besides the id and the chips: glyph, score
MIN_ID = 12
CHIP_ROOM = 16  # a row keeps this much room for chips before it shortens the ids


@dataclass(frozen=True)
class IdColumn:
    """How the list shows ids: whole when they fit beside the score and the widest chip; else without the
    prefix every id of the run shares (``…0008`` for ``robogrid-instruct-block-alien-d10-e2-p0.5-0008``);
    else that tail with its middle elided. The detail's head always has the whole id."""

    full: int  # the longest id
    prefix: int  # characters every id shares, up to a separator
    short: int  # the longest id without that prefix, plus its "…"
    chip: int  # columns kept for chips: the widest chip of the engine's taxonomy, at most CHIP_ROOM

    @staticmethod
    def of(ids: list[str], codes: list[str]) -> "IdColumn":
        shared = os.path.commonprefix(ids) if len(ids) > 1 else ""
        cut = max(shared.rfind(sep) for sep in "-_/.:") + 1
        full = max(map(len, ids), default=4)
        return IdColumn(full, cut, max((len(i) - cut for i in ids), default=4) + (1 if cut else 0),
                        min(CHIP_ROOM, max(map(len, codes), default=0) + 3))

    def width(self, row_width: int) -> int:
        room = row_width - ROW_FIXED - self.chip
        return self.full if self.full <= room else self.short if self.short <= room else max(MIN_ID, room)

    def text(self, item_id: str, width: int) -> str:
        if len(item_id) <= width:
            return item_id.ljust(width)
        tail = "…" + item_id[self.prefix:] if self.prefix else item_id
        return elided(tail, width).ljust(width)


def elided(text: str, width: int) -> str:
    """``text`` in ``width`` columns: whole if it fits, else its start and its (distinguishing) end around "…"."""
    if len(text) <= width:
        return text
    head = max(1, (width - 1) // 3)
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]
