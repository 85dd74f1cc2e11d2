"""The SQLite store when its folder or file fails: ``StoreUnavailable`` at once, nothing
half-written, and working again once the fault is gone.

Tests run as root in CI, where permission bits do not stop a write, so the faults are made
of things root cannot write through either: a folder path that runs through a regular file,
a directory where the database file should be, a file that is not a database, a database
held by another connection, and a full database (``PRAGMA max_page_count``: the same
``SQLITE_FULL`` a full disk gives).
"""

from __future__ import annotations

import shutil
import sqlite3
import time

import pytest

from rooms.sqlite_store import FILE_NAME, SqliteStore
from rooms.store import StoreUnavailable, UnknownRoom

Q = "variance_std"
G = "64|1|1"


def learner(i: int) -> str:
    return f"L{i:015d}"


def every_call(store: SqliteStore, code: str = "ABCDEF", key: str = "k" * 43):
    return [
        store.open_room,
        lambda: store.room_status(code),
        lambda: store.answer(code, Q, G, learner(0), 0, 2),
        lambda: store.counts(code, Q, G, key),
        lambda: store.reveal(code, key, Q),
        lambda: store.reset(code, key, Q),
        lambda: store.close(code, key),
    ]


def test_a_folder_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    store = SqliteStore(blocker / "rooms")
    for call in every_call(store):
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="not-a-folder"):
            call()
        assert time.monotonic() - started < 1.0
    blocker.unlink()  # the fault is gone: the store works
    code, key = store.open_room()
    store.answer(code, Q, G, learner(1), 1, 2)
    assert store.counts(code, Q, G, key).total == 1


def test_a_file_that_cannot_be_opened(tmp_path):
    (tmp_path / FILE_NAME).mkdir()  # a directory in the file's place
    store = SqliteStore(tmp_path)
    for call in every_call(store):
        with pytest.raises(StoreUnavailable, match=FILE_NAME):
            call()


def test_a_file_that_is_not_a_database(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"not a database, " * 512)
    store = SqliteStore(tmp_path)
    for call in every_call(store):
        with pytest.raises(StoreUnavailable, match="not a database"):
            call()
    assert (tmp_path / FILE_NAME).read_bytes() == b"not a database, " * 512  # left alone


def test_a_full_disk_loses_nothing_acknowledged(tmp_path):
    store = SqliteStore(tmp_path)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    # the database may not grow past its present size: SQLITE_FULL, as from a full disk
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")
    acknowledged = 1
    with pytest.raises(StoreUnavailable, match="full"):
        for i in range(1, 10_000):
            store.answer(code, Q, f"{i}|" + "x" * 180, learner(i), i % 2, 2)
            acknowledged += 1
    assert acknowledged < 10_000
    # the failed call changed nothing; the next call reconnects (no page limit) and works
    groups = [G] + [f"{i}|" + "x" * 180 for i in range(1, acknowledged)]
    assert sum(store.counts(code, Q, g, key).total for g in groups) == acknowledged
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == acknowledged
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.answer(code, Q, G, learner(10_000), 1, 2)
    assert store.counts(code, Q, G, key).total == 2


def test_a_database_held_by_another_process(tmp_path):
    store = SqliteStore(tmp_path, busy_timeout_s=0.3)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="locked"):
            store.answer(code, Q, G, learner(1), 1, 2)
        assert 0.25 < time.monotonic() - started < 2.0
        assert store.counts(code, Q, G, key).total == 1  # WAL: reading goes on meanwhile
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.answer(code, Q, G, learner(1), 1, 2)
    assert store.counts(code, Q, G, key).total == 2


def test_a_removed_folder_is_made_again(tmp_path):
    """The temporary folder emptied under a running server (as a Cloud restart does): the
    store opens a new file rather than writing into the deleted one; old rooms are gone."""
    folder = tmp_path / "rooms"
    store = SqliteStore(folder)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    shutil.rmtree(folder)
    with pytest.raises(UnknownRoom):
        store.answer(code, Q, G, learner(1), 0, 2)
    assert (folder / FILE_NAME).exists()
    code, key = store.open_room()
    store.answer(code, Q, G, learner(1), 0, 2)
    other = SqliteStore(folder)  # another process sees the same new file
    assert other.counts(code, Q, G, key).total == 1


def test_a_replaced_file_is_opened_again(tmp_path):
    store = SqliteStore(tmp_path)
    code, _ = store.open_room()
    (tmp_path / FILE_NAME).unlink()
    for suffix in ("-wal", "-shm"):
        (tmp_path / (FILE_NAME + suffix)).unlink(missing_ok=True)
    (tmp_path / FILE_NAME).write_bytes(b"")  # an empty file is an empty database
    with pytest.raises(UnknownRoom):
        store.room_status(code)
    assert store.room_status(store.open_room()[0]).state == "open"


def test_the_file_is_private_and_in_wal_mode(tmp_path):
    store = SqliteStore(tmp_path)
    store.open_room()
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(store.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
