"""Durable file primitives shared by every store: atomic replace, fsynced append, tail reads.

Two ways of writing keep a file whole across a crash or ``kill -9``:
  - replace: write a temp file in the same folder, fsync it, ``os.replace`` it over the
    target and fsync the folder (meta.json, items.jsonl);
  - append: one ``write`` of whole lines at the end of the file, then fsync (result logs,
    annotation logs). A crash or a full disk can leave a partial last line, which every
    reader ignores (a line counts once it ends in a newline) and only the file's writer
    cuts off before it appends (``cut_after``), keeping the cut bytes in ``<name>.torn``:
    the next line then starts on a line boundary and nothing written is thrown away.

Temp files carry the writing process's pid, so the owner of a folder can tell the
leftovers of a dead process from a live writer's file and removes only the former.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import secrets
import sys
from array import array
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Sequence

from sessions.errors import InputError

TMP_MARK = ".tmp-"


def now_iso() -> str:
    """The time stamp every stored record and event carries (UTC, milliseconds)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def temp_path(path: Path) -> Path:
    return path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def little_endian(numbers: array[int]) -> bytes:
    """``numbers`` as the store's binary files hold them: little-endian, whatever this machine's byte order."""
    if sys.byteorder == "big":
        numbers = array(numbers.typecode, numbers)
        numbers.byteswap()
    return numbers.tobytes()


def from_little_endian(typecode: str, data: bytes | memoryview) -> array[int]:
    """The numbers ``little_endian`` wrote (ValueError when ``data`` is not a whole number of them)."""
    numbers = array(typecode)
    numbers.frombytes(data)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def replace_unsynced(path: Path, chunks: Iterable[bytes]) -> None:
    """Replace ``path`` with ``chunks`` as one file, without fsync: for what readers can do without (a
    crash may lose or empty it; a reader never sees it half written)."""
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a reader or a crash sees the old or the new file, never a mix."""
    atomic_write_chunks(path, (data,))


def atomic_write_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """Like ``atomic_write_bytes`` for content produced piece by piece, never held whole in memory."""
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


@contextmanager
def atomic_files(folder: Path, names: Sequence[str]) -> Iterator[list[BinaryIO]]:
    """Files of ``folder`` written side by side, piece by piece (a new run's item files, streamed
    once): each replaces its target only when all are written, and no temp file outlives a failure."""
    temps = [temp_path(folder / name) for name in names]
    handles: list[BinaryIO] = []
    try:
        for tmp in temps:
            handles.append(open(tmp, "wb"))
        yield handles
        for handle in handles:
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        for handle in handles:
            handle.close()
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        raise
    for handle in handles:
        handle.close()
    for tmp, name in zip(temps, names):
        os.replace(tmp, folder / name)
    fsync_folder(folder)


@contextmanager
def atomic_target(path: Path) -> Iterator[Path]:
    """A temp file name beside ``path`` for a writer that needs a name (Parquet, Inspect's log);
    ``path`` is replaced by it only when the writer is done, and the temp file never outlives a failure."""
    tmp = temp_path(path)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_folder(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def file_size(path: Path) -> int:
    """The file's size, -1 when it is not there."""
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def overwrite_in_place(path: Path, data: bytes) -> bool:
    """Write ``data`` over ``path`` padded with spaces to its present size (no new disk block needed);
    False when it does not fit or the write fails too."""
    try:
        size = path.stat().st_size
        if len(data) > size:
            return False
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, data + b" " * (size - len(data)), 0)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        return False
    return True


def append_durably(fd: int, data: bytes) -> None:
    """Append ``data`` at the end of an ``O_APPEND`` file and fsync it; raise OSError if any of it is not written.

    A short write (disk full part-way) raises ENOSPC instead of returning quietly: the
    caller must not believe a batch is stored when only its head is.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]
    os.fsync(fd)


def complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """The whole lines of ``data`` (without their newlines) and how many bytes they span.

    A trailing piece without a newline is a line still being written (or torn by a crash):
    it is not returned, and the byte count stops before it.
    """
    end = data.rfind(b"\n") + 1
    if end == 0:
        return [], 0
    return data[: end - 1].split(b"\n"), end


def line_blocks(path: Path, offset: int = 0, block: int = 1 << 18) -> Iterator[bytes]:
    """A file's whole lines from ``offset`` on, about ``block`` bytes of them at a time (each piece ends
    with a newline; a torn last line is left out): what is held at once is a block, not the file.
    A missing file has no lines."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    with handle:
        handle.seek(offset)
        rest = b""
        while chunk := handle.read(block):
            data = rest + chunk
            end = data.rfind(b"\n") + 1
            rest = data[end:]
            if end:
                yield data[:end]


def json_line_blocks(path: Path, offset: int, block: int = 1 << 18) -> Iterator[tuple[list[Any], int]]:
    """A JSON-lines file's whole lines from ``offset`` on, parsed about ``block`` bytes at a time, with the
    bytes each block used: one parse per block (a fifth of the time of line by line), and what is held at
    once is a block, not the file. A damaged line raises InputError; a missing file has no lines."""
    for data in line_blocks(path, offset, block):
        lines, used = complete_lines(data)
        try:
            parsed = json.loads(b"[" + b",".join(lines) + b"]")
        except ValueError as exc:
            raise InputError(f"{path} has a damaged line ({exc}); the run cannot be read") from None
        yield parsed, used


def whole_lines_end(path: Path, block: int = 65_536) -> int:
    """The offset just past the last newline of ``path`` (0 if it has none or does not exist),
    found reading backwards from the end: a torn tail is measured without reading the file."""
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            while end > 0:
                start = max(0, end - block)
                handle.seek(start)
                at = handle.read(end - start).rfind(b"\n")
                if at >= 0:
                    return start + at + 1
                end = start
    except FileNotFoundError:
        pass
    return 0


TORN = ".torn"


def cut_after(path: Path, end: int) -> int:
    """Cut ``path`` back to ``end`` bytes, appending what is cut to ``<name>.torn`` first; the writer only.

    Returns how many bytes were cut. What a crash or a full disk left half written is
    kept aside, never deleted, and the next append starts on a line boundary.
    """
    tail = read_from(path, end)
    if not tail:
        return 0
    fd = os.open(path.with_name(path.name + TORN), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        append_durably(fd, tail if tail.endswith(b"\n") else tail + b"\n")
    finally:
        os.close(fd)
    os.truncate(path, end)
    return len(tail)


def cut_torn_tail(path: Path) -> int:
    """Cut a last line without its newline off ``path`` (kept in ``<name>.torn``); the writer only."""
    return cut_after(path, whole_lines_end(path))


def whole_lines_backwards(path: Path, block: int = 1 << 20) -> Iterator[bytes]:
    """The whole lines of ``path`` (a torn last line left out) in blocks of about ``block`` bytes, the
    last block first: a search from the end holds one block, not the file."""
    end = whole_lines_end(path)
    if not end:
        return
    with open(path, "rb") as handle:
        size = block
        while end > 0:
            start = max(0, end - size)
            handle.seek(start)
            data = handle.read(end - start)
            first = 0 if start == 0 else data.find(b"\n") + 1  # its first line may begin in the block before
            if start > 0 and not 0 < first < len(data):  # no whole line begins in it: a longer block
                size *= 2
                continue
            yield data[first:]
            end, size = start + first, block


def read_from(path: Path, offset: int) -> bytes:
    """The bytes of ``path`` from ``offset`` on; empty if the file does not exist yet."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read()
    except FileNotFoundError:
        return b""


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_dead_temp_files(folder: Path) -> None:
    """Remove temp files left by processes that no longer exist; a live writer's temp file stays."""
    for stale in folder.glob(f"*{TMP_MARK}*"):
        pid_text = stale.name.rsplit(TMP_MARK, 1)[1].split("-", 1)[0]
        if pid_text.isdigit() and (int(pid_text) == os.getpid() or pid_alive(int(pid_text))):
            continue
        stale.unlink(missing_ok=True)
