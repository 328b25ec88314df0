"""Loading the official DEDC files: ``NAME.jsonl`` and, when present, its ``NAME.full.jsonl``.

The plain file holds the question, the demonstrations and the gold answer; the full
companion adds the authors' prompt, their accepted answer strings (``candi_outputs``) and
the graph of every item and demonstration. With the companion present the items are read
from it (the two must hold the same questions in the same order). The naming setting of a
file is the one whose symbols cover every gold answer; the number of base demonstrations
is the file name's ``shotN``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from engines.core import DataError, Item
from engines.dedc.graphs import graph_type_str, out_type, scheme_index, shape_of, tag_type
from engines.dedc.primitives import NAME_MAPPINGS, meanings_by_symbol

ENGINE = "dedc"

# ------------------------------------------------------------------- answer parsing

_STEP = re.compile(r"^\s*([A-Za-z_]\w*)\s*:=\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_RESULT = re.compile(r"^\s*result\s*:=\s*([A-Za-z_]\w*)\s*$")


@dataclass(frozen=True)
class OfficialStep:
    var: str
    symbol: str
    args: tuple[str, ...]


def split_steps(text: str) -> tuple[list[OfficialStep], str | None]:
    """An answer in the official format as its steps and the ``result`` variable (the
    files' own regular format; model replies go through ``parse.parse_answer``).

    Raises ValueError on a piece that is neither ``var := sym (args)`` nor ``result := var``.
    """
    steps: list[OfficialStep] = []
    result = None
    for piece in text.split(";"):
        if not piece.strip():
            continue
        m = _RESULT.match(piece)
        if m:
            result = m.group(1)
            continue
        m = _STEP.match(piece)
        if not m:
            raise ValueError(f"not an assignment: {piece.strip()!r}")
        args = tuple(a.strip() for a in m.group(3).split(",")) if m.group(3).strip() else ()
        steps.append(OfficialStep(m.group(1), m.group(2), args))
    return steps, result


def naming_of(symbols: Iterable[str]) -> str | None:
    """The naming setting whose symbol set contains all ``symbols`` (None if none does)."""
    used = set(symbols)
    for names in ("opaque", "anomalous", "cross"):
        if used <= set(NAME_MAPPINGS[names].values()):
            return names
    return None


def dag_of_answer(text: str, names: str) -> tuple[list[str], int | None, str]:
    """(primitive meanings in node order, base graph number or None, graph type or "?")."""
    steps, _ = split_steps(text)
    meaning = meanings_by_symbol(names)
    prims = [meaning.get(s.symbol, "?") for s in steps]
    where = {s.var: i for i, s in enumerate(steps)}
    prev = tuple(tuple(sorted({where[a] for a in s.args if a in where})) for s in steps)
    shape = shape_of(prev) if len(steps) == 4 and "?" not in prims else None
    if shape is None:
        return prims, None, "?"
    return prims, shape, graph_type_str(shape, [out_type(p) for p in prims[:-1]])


def without_shared_type(item_type: Any, shot_types: Iterable[Any]) -> bool:
    """The compositional gap: no shot has the item's graph type."""
    return not any(tp == item_type for tp in shot_types)


# ------------------------------------------------------------------- the files


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"DEDC dataset file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read DEDC dataset file {path}: {exc}") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}: line {n}: expected a JSON object")
        rows.append(row)
    if not rows:
        raise DataError(f"{path}: no items in DEDC dataset file")
    return rows


def _need(row: dict[str, Any], key: str, path: Path, n: int, kind: type = str) -> Any:
    if key not in row or not isinstance(row[key], kind):
        raise DataError(f"{path}: line {n}: missing or malformed field {key!r}")
    return row[key]


def _demo_pairs(row: dict[str, Any], path: Path, n: int, full: bool) -> list[dict[str, str]]:
    key, q, a = ("demo", "question", "output_steps") if full else ("demonstration", "input", "output")
    demos = _need(row, key, path, n, list)
    out = []
    for d in demos:
        if not isinstance(d, dict) or not isinstance(d.get(q), str) or not isinstance(d.get(a), str):
            raise DataError(f"{path}: line {n}: malformed demonstration")
        out.append({"question": d[q], "answer": d[a]})
    return out


def _graph_type(tp: Any) -> str | None:
    """A .full.jsonl graph_tp ``[shape, [types]]`` as our graph type string."""
    if isinstance(tp, list) and len(tp) == 2 and isinstance(tp[0], int) and isinstance(tp[1], list):
        return graph_type_str(tp[0], [tag_type(str(t)) for t in tp[1]])
    return None


@dataclass(frozen=True)
class OfficialFile:
    """Where an official file's rows are read from, and how."""

    path: Path  # as given
    stem: str  # the name without .jsonl / .full.jsonl: the items' id prefix
    source: Path  # the file the rows come from (the full companion when there is one)
    full: bool
    rows: list[dict[str, Any]]
    shots: int  # base demonstrations (``shotN`` in the name)

    def need(self, row_index: int, key: str, kind: type = str) -> Any:
        return _need(self.rows[row_index], key, self.source, row_index + 1, kind)


def open_official(path_text: str, shots: int) -> OfficialFile:
    """The rows of ``path_text`` (or of its full companion), checked against each other."""
    path = Path(path_text).expanduser()
    name = path.name
    plain_path: Path | None = None
    full_path: Path | None = None
    if name.endswith(".full.jsonl"):
        full_path, stem = path, name[: -len(".full.jsonl")]
    else:
        stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else path.stem
        plain_path = path
        companion = path.with_name(stem + ".full.jsonl")
        full_path = companion if companion.is_file() else None
    if not path.is_file():
        raise DataError(f"DEDC dataset file not found: {path}")
    plain = _read_jsonl(plain_path) if plain_path else None
    full = _read_jsonl(full_path) if full_path else None
    if plain is not None and full is not None and full_path is not None:
        if len(plain) != len(full) or any(p.get("input") != f.get("question") for p, f in zip(plain, full)):
            raise DataError(f"{path}: its companion {full_path.name} does not hold the same items")
    found = re.search(r"shot(\d+)", stem)
    rows, source = (full, full_path) if full is not None else (plain, plain_path)
    assert rows is not None and source is not None
    return OfficialFile(path, stem, source, full is not None, rows, int(found.group(1)) if found else shots)


def _file_naming(file: OfficialFile, golds: list[str]) -> str:
    symbols: set[str] = set()
    for i, gold in enumerate(golds):
        try:
            symbols |= {s.symbol for s in split_steps(gold)[0]}
        except ValueError as exc:
            raise DataError(f"{file.source}: line {i + 1}: malformed gold answer ({exc})") from None
    names = naming_of(symbols)
    if names is None:
        raise DataError(f"{file.source}: primitive symbols {sorted(symbols)} match no naming setting")
    return names


def _shot_types(file: OfficialFile, i: int, demos: list[dict[str, str]], names: str) -> list[str | None]:
    if file.full:
        return [_graph_type(d.get("graph_tp")) for d in file.rows[i]["demo"][:file.shots]]
    found: list[str | None] = []
    for d in demos[:file.shots]:
        try:
            found.append(dag_of_answer(d["answer"], names)[2])
        except ValueError:
            found.append("?")
    return found


def _official_item(file: OfficialFile, i: int, gold_answer: str, names: str,
                   lookup: dict[tuple[int, tuple[str, ...]], int]) -> Item:
    row = file.rows[i]
    question = file.need(i, "question" if file.full else "input")
    demos = _demo_pairs(row, file.source, i + 1, file.full)
    prims, shape, graph_type = dag_of_answer(gold_answer, names)
    inputs: dict[str, Any] = {"question": question, "demonstrations": demos}
    gold: dict[str, Any] = {"answer": gold_answer}
    if file.full:
        inputs["prompt"] = file.need(i, "input_text")
        gold["accepted"] = list(file.need(i, "candi_outputs", list))
        if isinstance(row.get("graph_nodes"), list):
            prims = [str(p) for p in row["graph_nodes"]]
        if isinstance(row.get("graph_idx"), int):
            shape = row["graph_idx"]
        graph_type = _graph_type(row.get("graph_tp")) or graph_type
    shot_types = _shot_types(file, i, demos, names)
    n_prim = max(0, len(demos) - file.shots)
    inputs["n_primitive_demos"] = n_prim
    gap = None if graph_type == "?" or "?" in shot_types else without_shared_type(graph_type, shot_types)
    return Item(
        id=f"{file.stem}-{i:03d}",
        engine=ENGINE,
        inputs=inputs,
        gold=gold,
        meta={
            "scheme": lookup.get((shape, tuple(prims)), i) if shape is not None else i,
            "shape": shape if shape is not None else -1,
            "graph_type": graph_type,
            "gap": gap,
            "primitives": prims,
            "names": names,
            "primitive_demos": n_prim > 0,
            "source": file.path.name,
            "repeat": 0,
        },
    )


def load_dataset(path_text: str, shots: int = 3) -> list[Item]:
    """Items of an official DEDC file (``.jsonl``, with its ``.full.jsonl`` companion when present)."""
    file = open_official(path_text, shots)
    golds = [file.need(i, "output_steps" if file.full else "output") for i in range(len(file.rows))]
    names = _file_naming(file, golds)
    lookup = scheme_index()
    return [_official_item(file, i, gold, names, lookup) for i, gold in enumerate(golds)]
