"""Export rows written as JSON lines, CSV or Parquet, one row at a time (``sessions.reports.export`` makes them).

JSON lines keep each row's JSON values. CSV and Parquet are flat: in CSV a list of codes is
``a;b`` (``labels_<annotator>``: empty when that person did not review the item, ``-`` when
they did and gave no label), evidence and notes one per line, gold, outputs and finish
reasons JSON text. Parquet keeps lists as lists of strings and numbers as numbers; it
needs the ``[parquet]`` extra (pyarrow) and is written in row groups of ``PARQUET_ROWS``,
so neither format holds the run in memory. A file is written beside its target and moved
over it when complete (``sessions.store.files``): a failed export never leaves half a file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from sessions.errors import InputError
from sessions.reports.export import Columns
from sessions.store.files import atomic_target, atomic_write_chunks

PARQUET_ROWS = 2048
CODE_LISTS = ("tags", "final_tags", "manual_tags_added", "manual_tags_removed", "settled_tags")
LINE_LISTS = ("tag_evidence", "notes")
JSON_VALUES = ("gold", "finish_reasons", "outputs")


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def _cell(name: str, value: Any) -> Any:
    if name.startswith("labels_"):
        return "" if value is None else ";".join(value) or "-"
    if value is None:
        return ""
    if name in CODE_LISTS:
        return ";".join(value)
    if name in LINE_LISTS:
        return "\n".join(value)
    if name in JSON_VALUES:
        return json.dumps(value, ensure_ascii=False)
    return value


def csv_lines(rows: Iterable[dict[str, Any]], columns: Columns) -> Iterator[str]:
    names = columns.names()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow([_cell(name, row.get(name)) for name in names])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def write_text(lines: Iterable[str], out: str | None, stdout: TextIO) -> None:
    """To ``out`` (replaced whole when done) or, without one, to ``stdout`` as the lines come."""
    if out is None:
        for line in lines:
            stdout.write(line)
        return
    try:
        atomic_write_chunks(Path(out), (line.encode("utf-8") for line in lines))
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from None


def parquet_schema(columns: Columns) -> Any:
    import pyarrow as pa

    strings = pa.list_(pa.string())
    kinds = {int: pa.int64(), float: pa.float64(), bool: pa.bool_(), str: pa.string()}
    fields = []
    for name in columns.names():
        if name.startswith("score_"):
            kind = pa.float64()
        elif name.startswith("meta_"):
            kind = kinds[columns.meta[name[len("meta_"):]]]
        elif name in CODE_LISTS or name in LINE_LISTS or name.startswith("labels_") or name in ("finish_reasons", "outputs"):
            kind = strings
        elif name in ("index", "prompt_tokens", "completion_tokens", "cached_steps"):
            kind = pa.int64()
        elif name == "reviewed":
            kind = pa.bool_()
        else:
            kind = pa.string()
        fields.append(pa.field(name, kind))
    return pa.schema(fields)


def write_parquet(rows: Iterable[dict[str, Any]], columns: Columns, out: str) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("--format parquet needs pyarrow: pip install 'n2f-tui[parquet]'") from None
    schema = parquet_schema(columns)
    try:
        with atomic_target(Path(out)) as target, pq.ParquetWriter(str(target), schema) as writer:
            batch: list[dict[str, Any]] = []
            for row in rows:
                batch.append({**row, "gold": json.dumps(row["gold"], ensure_ascii=False)})
                if len(batch) == PARQUET_ROWS:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch.clear()
            if batch:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    except OSError as exc:
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from None
