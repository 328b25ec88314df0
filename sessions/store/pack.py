"""A run as one file, to hand to another machine: ``n2f pack`` writes it, ``n2f unpack`` installs it.

The file is a gzipped tar of the run's folder as it stands (metadata, items, results with
their outputs, the study sample, attempts, annotation events) plus ``manifest.json``::

    {"format": "n2f-pack", "version": 1, "run": "<run id>", "name": "...", "engine": "dedc",
     "fingerprint": "<sessions.store.fingerprint fingerprint>", "files": {"meta.json": "<sha256>", ...}}

Packing holds the run's lock (nobody writes its results meanwhile) and copies only the
whole lines of the annotation log, which others may be appending to. Unpacking installs
the run under the same id in this home, so events labelled on either machine name the
same run and items: it checks every file's sha256 and the fingerprint, extracts into a
temporary folder beside the runs and renames it into place, so a failed unpack leaves
nothing behind. A run with that id already here is never overwritten: the same run
(same fingerprint) takes in the pack's new annotation events; a different one is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from sessions.study.annotations import LOCK as ANNOTATIONS_LOCK, LOG as ANNOTATIONS
from sessions.errors import InputError
from sessions.store.files import TMP_MARK, complete_lines, fsync_folder, temp_path
from sessions.paths import data_home, ensure_writable, runs_dir
from sessions.store.fingerprint import run_fingerprint
from sessions.store.index import NAME_RE, list_run_meta
from sessions.store.runs import RunStore
from sessions.store.summary_snapshot import SNAPSHOT
from sessions.reports.kept_report import KEPT_REPORT

FORMAT = "n2f-pack"
VERSION = 1
MANIFEST = "manifest.json"
NOT_PACKED = {"lock", ANNOTATIONS_LOCK, SNAPSHOT, KEPT_REPORT}  # readers' copies (of the index, of the report), made anew


@dataclass
class Unpacked:
    run: str
    label: str
    fingerprint: str
    installed: bool  # False: the same run was here already
    merged: int = 0  # annotation events from the pack new to this home


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _run_files(store: RunStore) -> dict[str, bytes]:
    """The run folder's files as they are now (the annotation log cut to its whole lines)."""
    files = {}
    for path in sorted(store.folder.iterdir()):
        if not path.is_file() or path.name in NOT_PACKED or TMP_MARK in path.name:
            continue
        data = path.read_bytes()
        if path.name == ANNOTATIONS:
            data = data[: complete_lines(data)[1]]
        files[path.name] = data
    return files


def pack_run(ref: str, out: Path) -> tuple[RunStore, str, int]:
    """Write run ``ref`` to ``out`` (atomically); return the store, its fingerprint and the file's size."""
    store = RunStore.open(ref)
    store.acquire()
    try:
        files = _run_files(store)
        fingerprint = run_fingerprint(store)
    finally:
        store.close()
    manifest = {"format": FORMAT, "version": VERSION, "run": store.id, "name": store.meta.get("name", ""),
                "engine": store.meta.get("engine", ""), "fingerprint": fingerprint,
                "files": {name: _sha256(data) for name, data in files.items()}}
    members = {MANIFEST: json.dumps(manifest, indent=1).encode("utf-8"), **files}
    tmp = temp_path(out.resolve())
    try:
        with open(tmp, "wb") as handle:
            with tarfile.open(fileobj=handle, mode="w:gz") as tar:
                for name, data in members.items():
                    info = tarfile.TarInfo(name)
                    info.size, info.mode = len(data), 0o644
                    tar.addfile(info, io.BytesIO(data))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {out}: {exc.strerror or exc}") from None
    fsync_folder(out.resolve().parent)
    return store, fingerprint, out.stat().st_size


def read_pack(path: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest and the files of a pack, every file checked against the manifest's sha256."""
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            members = {m.name: m for m in tar.getmembers()}
            if MANIFEST not in members:
                raise InputError(f"{path} is not an n2f pack (no {MANIFEST})")
            manifest = json.loads(_member_bytes(tar, members[MANIFEST], path))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise InputError(f"{path} is not an n2f pack")
            if manifest.get("version") != VERSION:
                raise InputError(f"{path} is an n2f pack of version {manifest.get('version')}; this n2f reads {VERSION}")
            files: dict[str, bytes] = {}
            for name, digest in dict(manifest.get("files", {})).items():
                member = members.get(name)
                if member is None or not member.isfile() or "/" in name or name.startswith("."):
                    raise InputError(f"{path}: the pack's file {name!r} is missing or not a plain file")
                data = _member_bytes(tar, member, path)
                if _sha256(data) != digest:
                    raise InputError(f"{path}: {name} is damaged (its sha256 differs from the manifest's)")
                files[name] = data
    except FileNotFoundError:
        raise InputError(f"no file {path}") from None
    except (tarfile.TarError, EOFError, OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not a readable n2f pack ({exc})") from None
    if not NAME_RE.match(str(manifest.get("run", ""))) or "meta.json" not in files:
        raise InputError(f"{path}: the pack names no valid run")
    return manifest, files


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> bytes:
    handle = tar.extractfile(member)
    if handle is None:  # a directory or a link, not a plain file
        raise InputError(f"{path}: the pack's file {member.name!r} is missing or not a plain file")
    return handle.read()


def unpack_run(path: Path) -> Unpacked:
    """Install the pack at ``path`` into this home (see the module docstring)."""
    manifest, files = read_pack(path)
    run_id, fingerprint = manifest["run"], manifest.get("fingerprint", "")
    target = ensure_writable(runs_dir()) / run_id
    if target.exists():
        return _merge_into(RunStore(target), manifest, files.get(ANNOTATIONS, b""), str(path))
    name = manifest.get("name", "")
    if name and any(m.get("name") == name for m in list_run_meta()):
        raise InputError(f"this home has another run named {name!r}; rename it before unpacking run {run_id}")
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=data_home()))
    try:
        for file_name, data in files.items():
            (tmp / file_name).write_bytes(data)
        probe = RunStore(tmp)
        try:
            found = run_fingerprint(probe)
        finally:
            probe.close()
        if found != fingerprint:
            raise InputError(f"{path}: the run inside has fingerprint {found}, the manifest says {fingerprint}")
        os.rename(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fsync_folder(target.parent)
    store = RunStore(target)
    return Unpacked(run=run_id, label=store.label, fingerprint=fingerprint, installed=True)


def _merge_into(store: RunStore, manifest: Mapping[str, Any], annotations: bytes, source: str) -> Unpacked:
    """The pack's run is here already: take in its new events if it is the same run, else refuse."""
    here = run_fingerprint(store)
    if here != manifest.get("fingerprint"):
        raise InputError(f"this home has a different run {store.id} (fingerprint {here}, the pack's "
                         f"{manifest.get('fingerprint')}: other items or outputs); nothing was written")
    lines = [line.decode("utf-8") for line in complete_lines(annotations)[0] if line.strip()]
    merged = store.annotations().import_lines(lines, set(store.item_ids()), source) if lines else 0
    return Unpacked(run=store.id, label=store.label, fingerprint=here, installed=False, merged=merged)
