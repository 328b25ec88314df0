"""ResponseCache: keys, persistence, WAL, concurrency, recovery from a corrupt file."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from sessions.backends.cache import PUT_BATCH, ResponseCache, cache_key


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("N2F_HOME", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


PARTS = {
    "model": "m",
    "base_url": "http://127.0.0.1:8000/v1",
    "messages": [{"role": "user", "content": "hi"}],
    "params": {"temperature": 0, "max_tokens": 10},
    "attempt": 0,
}


def test_round_trip_and_miss(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.get(PARTS) is None
        cache.put(PARTS, {"text": "héllo", "usage": {"prompt_tokens": 1, "completion_tokens": 2}})
        assert cache.get(PARTS) == {"text": "héllo", "usage": {"prompt_tokens": 1, "completion_tokens": 2}}
        assert cache.get({**PARTS, "attempt": 1}) is None
        assert cache.get({**PARTS, "params": {"temperature": 0.5, "max_tokens": 10}}) is None
        cache.put(PARTS, {"text": "again", "usage": {}})  # replace
        assert cache.get(PARTS)["text"] == "again"
        assert len(cache) == 1


def test_key_is_canonical():
    reordered = {k: PARTS[k] for k in reversed(list(PARTS))}
    reordered["params"] = {"max_tokens": 10, "temperature": 0}
    assert cache_key(reordered) == cache_key(PARTS)
    assert cache_key({**PARTS, "model": "n"}) != cache_key(PARTS)
    assert len(cache_key(PARTS)) == 64


def test_persists_and_uses_wal(tmp_path):
    path = tmp_path / "sub" / "c.sqlite"
    cache = ResponseCache(path)
    cache.put(PARTS, {"text": "x"})
    cache.close()
    cache.close()  # idempotent
    with ResponseCache(path) as again:
        assert again.get(PARTS) == {"text": "x"}
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_second_connection_reads_while_first_writes(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as writer, ResponseCache(path) as reader:
        writer.put(PARTS, {"text": "shared"})
        writer.flush()
        assert reader.get(PARTS) == {"text": "shared"}


def test_puts_are_written_in_batches(tmp_path):
    """Held in memory (and served from there) until a batch is full, a flush or close."""
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as writer, ResponseCache(path) as reader:
        for i in range(PUT_BATCH - 1):
            writer.put({**PARTS, "attempt": i}, {"text": str(i)})
        assert writer.get({**PARTS, "attempt": 3}) == {"text": "3"}
        assert reader.get({**PARTS, "attempt": 3}) is None  # not on disk yet
        writer.put({**PARTS, "attempt": PUT_BATCH}, {"text": "last"})  # fills the batch
        assert reader.get({**PARTS, "attempt": 3}) == {"text": "3"}
        assert reader.get({**PARTS, "attempt": PUT_BATCH}) == {"text": "last"}
        writer.put({**PARTS, "attempt": -1}, {"text": "closing"})
    with ResponseCache(path) as again:
        assert again.get({**PARTS, "attempt": -1}) == {"text": "closing"}  # close wrote it
        assert len(again) == PUT_BATCH + 1


def test_threads_share_one_cache(tmp_path):
    errors: list[BaseException] = []
    with ResponseCache(tmp_path / "c.sqlite") as cache:

        def work(n: int) -> None:
            try:
                for i in range(50):
                    parts = {**PARTS, "attempt": n * 1000 + i}
                    cache.put(parts, {"text": str(i)})
                    assert cache.get(parts) == {"text": str(i)}
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert len(cache) == 200


def test_corrupt_file_is_moved_aside(tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a sqlite database, just some junk bytes " * 40)
    with pytest.warns(RuntimeWarning, match="moved it to c.sqlite.corrupt-"):
        cache = ResponseCache(path)
    try:
        assert cache.get(PARTS) is None
        cache.put(PARTS, {"text": "fresh"})
        assert cache.get(PARTS) == {"text": "fresh"}
    finally:
        cache.close()
    aside = list(tmp_path.glob("c.sqlite.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")


def test_damage_found_after_opening_is_recovered(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        for i in range(200):
            cache.put({**PARTS, "attempt": i}, {"text": "x" * 200})
    data = bytearray(path.read_bytes())
    data[-3 * 4096 :] = b"\xff" * (3 * 4096)  # the schema survives, the last data pages do not
    path.write_bytes(bytes(data))
    cache = ResponseCache(path)  # opens: the damage is not visible yet
    try:
        with pytest.warns(RuntimeWarning, match="unreadable"):
            for i in range(200):  # some of them live on the damaged pages
                assert cache.get({**PARTS, "attempt": i}) in (None, {"text": "x" * 200})
        cache.put(PARTS, {"text": "fresh"})
        assert cache.get(PARTS) == {"text": "fresh"}
    finally:
        cache.close()
    assert list(tmp_path.glob("c.sqlite.corrupt-*"))
