"""Runs as earlier versions of n2f stored them, written the old way, for the tests that open them."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

ITEM_FILES = ("items.jsonl", "items.idx", "items.brief.jsonl", "items.brief.idx", "shared.jsonl", "items.ids")


def make_format_1(folder: Path, index: bool = True, brief: bool = True) -> None:
    """Rewrite the run in ``folder`` as items format 1 stored it: each whole item on its line of
    items.jsonl (meta included), no shared parts, and ``items_format`` absent from meta.json.
    ``index=False`` / ``brief=False`` leave out items.idx / items.brief.jsonl, as the earliest
    versions did. The items are read back first with the reader of the run's present format."""
    from sessions.store.runs import RunStore

    items = RunStore(folder).items()
    for name in ITEM_FILES:
        (folder / name).unlink(missing_ok=True)
    lines = [json.dumps(item.to_json(), ensure_ascii=False).encode("utf-8") + b"\n" for item in items]
    (folder / "items.jsonl").write_bytes(b"".join(lines))
    if index:
        offsets = array("Q", [0])
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        (folder / "items.idx").write_bytes(offsets.tobytes())
    if brief:
        (folder / "items.brief.jsonl").write_text(
            "".join(json.dumps({"id": i.id, "meta": i.meta}, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta.pop("items_format", None)
    (folder / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
