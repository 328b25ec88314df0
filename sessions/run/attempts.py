"""Debugging a prompt live: re-run one item with edited templates, keeping every attempt.

A re-run never touches the run's results: each attempt is appended to the run folder's
``attempts.json`` (TinyDB, table ``attempts``), one record per attempt::

    {"attempt_id": 1, "item": "dedc-004", "index": 4, "templates": {...},
     "prompts": [{"step", "messages"}], "outputs": [...], "status": "wrong",
     "scores": {...}, "tags": [{"code", "label", "evidence", "source"}], "time": "..."}

plus ``"error"`` when the backend failed (status ``error``). ``attempt_id`` counts from 1
per item. Once the edited prompt works, ``fork_with_templates`` makes it a new run.

One re-run at a time per item: attempt ids are assigned when a re-run starts. TinyDB
fits here (a small document table read whole); every write replaces the file atomically
under an exclusive ``flock`` on ``attempts.lock``, so two windows re-running items of one
run never drop each other's attempts.
"""

from __future__ import annotations

import fcntl
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from tinydb import TinyDB
from tinydb.storages import Storage

from engines.core import settings_to_json
from sessions.backends.service import response_cache
from sessions.run.prepare import DEFAULT_SEED, package_versions
from sessions.store.results import run_settings
from sessions.backends.base import Backend
from sessions.config import load_config
from sessions.errors import InputError
from sessions.backends.models import make_backend, parse_model_spec
from sessions.store.files import atomic_write_text, now_iso
from sessions.store.summary_line import finish_reasons
from sessions.run.steps import run_steps
from sessions.store.runs import RunStore
from sessions.backends.streaming import LiveReply

ATTEMPTS_FILE = "attempts.json"
ATTEMPTS_TABLE = "attempts"


class AtomicJSONStorage(Storage):
    """TinyDB storage that reads the file afresh and replaces it atomically on every write."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        if not text.strip():
            return None
        try:
            data: dict[str, Any] = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{self.path} is not valid JSON ({exc})") from None
        return data

    def write(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


@contextmanager
def _attempts_table(store: RunStore) -> Iterator[Any]:
    """The attempts table, held exclusively against other processes while the block runs."""
    with open(store.folder / "attempts.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        db = TinyDB(store.folder / ATTEMPTS_FILE, storage=AtomicJSONStorage)
        try:
            yield db.table(ATTEMPTS_TABLE)
        finally:
            db.close()
            fcntl.flock(lock, fcntl.LOCK_UN)


def list_attempts(store: RunStore, item_id: str) -> list[dict[str, Any]]:
    """Every attempt stored for one item, oldest first."""
    with _attempts_table(store) as table:
        found = [dict(doc) for doc in table.all() if doc.get("item") == item_id]
    return sorted(found, key=lambda a: a["attempt_id"])


def _save_attempt(store: RunStore, attempt: Mapping[str, Any]) -> None:
    with _attempts_table(store) as table:
        table.insert(dict(attempt))


async def rerun_item(
    store: RunStore, index: int, templates: Mapping[str, str], backend: Backend | None = None,
    live: LiveReply | None = None,
) -> dict[str, Any]:
    """Run item ``index`` again with ``templates`` over the run's own; store and return the attempt.

    Without ``backend``, the run's model is rebuilt from its metadata (model spec, seed,
    the user config; real models share the response cache). Each attempt sends a new
    ``CallRequest.attempt`` (the run's attempt for the item plus the attempt id), so the
    cache never answers a re-run with an earlier reply. A BackendError ends the attempt
    in status ``error``; an unknown placeholder raises ``engines.core.SettingsError``
    before anything is stored. With ``live`` the reply streams into it as it is generated.
    """
    engine, settings = run_settings(store)
    if not 0 <= index < store.total:
        raise InputError(f"run {store.label} has no item at index {index} (0..{store.total - 1})")
    item = store.item(index)
    chosen = {**(store.meta.get("templates") or {}), **templates}
    attempt_id = len(list_attempts(store, item.id)) + 1
    previous = store.record(index) or {}
    request_attempt = int(previous.get("attempt", 0)) + attempt_id

    own_backend = backend is None
    cache = None
    try:
        if backend is None:
            spec = parse_model_spec(store.meta["model"])
            config = load_config()
            cache = response_cache(spec.kind, config=config)
            backend = make_backend(spec, engine, int(store.meta.get("seed", DEFAULT_SEED)), config, cache=cache)
        trace = await run_steps(engine, item, settings, backend, chosen, request_attempt, live)
    finally:
        if own_backend and backend is not None:
            await backend.aclose()
        if cache is not None:
            cache.close()

    attempt: dict[str, Any] = {
        "attempt_id": attempt_id,
        "item": item.id,
        "index": index,
        "templates": chosen,
        "prompts": trace.prompts,
        "outputs": trace.outputs,
    }
    if trace.error:
        attempt.update(status="error", scores={}, tags=[], error=trace.error)
    else:
        verdict = engine.score(item, trace.outputs, settings, finish_reasons=finish_reasons(trace.steps), templates=chosen,
                               prompts=trace.sent_prompts())
        attempt.update(status=verdict.status, scores=verdict.scores, tags=[t.to_json() for t in verdict.tags])
    attempt["time"] = now_iso()
    _save_attempt(store, attempt)
    return attempt


def fork_with_templates(store: RunStore, templates: Mapping[str, str], name: str = "") -> RunStore:
    """A new run: this run's engine, settings, seed, model and items, with edited templates.

    The new run is only created (status ``created``, no results); start it with
    ``sessions.api.prepare_resume(new_store.id)``. The first step of the first item is
    built up front so that a bad placeholder raises SettingsError before anything is
    written. The new run's meta records ``forked_from``.
    """
    engine, settings = run_settings(store)
    items = store.items()
    chosen = {**(store.meta.get("templates") or {}), **templates}
    if items:
        engine.next_step(items[0], settings, [], chosen)
    meta = store.meta
    return RunStore.create(
        engine=engine.name,
        settings=settings_to_json(settings),
        seed=int(meta.get("seed", DEFAULT_SEED)),
        model=meta["model"],
        backend=meta.get("backend", {}),
        items=list(items),
        templates=chosen,
        concurrency=int(meta.get("concurrency", 8)),
        name=name,
        extra={"versions": package_versions(), "forked_from": store.id},
        report_keys=engine.parts.report_keys,
    )
