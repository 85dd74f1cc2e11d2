"""The embedded room store: one SQLite file (standard library ``sqlite3``), WAL mode.

One store object serves every thread of a process through one connection and a lock
(SQLite writes one transaction at a time anyway, and each call here takes well under a
millisecond); several processes on one machine share the file, SQLite's busy timeout
ordering their writes. Each call is one transaction (``BEGIN IMMEDIATE`` for writes), so
an answer is recorded once or not at all.

``synchronous=NORMAL``: in WAL mode a commit survives the process being killed, not a
power cut. Rooms last hours and are ephemeral anyway: on Streamlit Community Cloud a
restart empties the temporary folder, and rooms with it (use Redis to keep them).

Failures (the folder cannot be created, the file cannot be opened or written, the disk
is full, another process holds the database past the busy timeout) raise
``StoreUnavailable``; the connection is dropped and the next call opens it again. If the
file is deleted or replaced while open (the temporary folder emptied), the next call
opens the new file instead of writing into the deleted one.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rooms.store import (
    MAX_ANSWERS,
    MAX_OPEN_ROOMS,
    TOMBSTONE_S,
    RoomError,
    RoomRecord,
    RoomStore,
    StoreUnavailable,
    state_of,
)

__all__ = ["FILE_NAME", "SqliteStore"]

#: The store's file in its folder (the schema version is in the name).
FILE_NAME = "attention-lab-rooms-v2.sqlite3"
#: ``PRAGMA user_version`` of a file with the tables below.
SCHEMA_VERSION = 2
#: Expired rooms' answers and old records are deleted at most this often (seconds).
PURGE_EVERY_S = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rooms_expires ON rooms (expires);
CREATE TABLE IF NOT EXISTS revealed (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    PRIMARY KEY (code, question)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL,
    question TEXT NOT NULL,
    grp TEXT NOT NULL,
    learner TEXT NOT NULL,
    session TEXT NOT NULL,
    option INTEGER NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (code, question, grp, learner)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS answers_session ON answers (code, question, grp, session);
"""


class SqliteStore(RoomStore):
    """Rooms in ``folder / FILE_NAME`` (``folder`` default: the system temp folder).

    ``busy_timeout_s`` bounds the wait for another thread or process holding the
    database; past it the call raises ``StoreUnavailable``. Nothing is opened before the
    first call.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = 2.0,
    ) -> None:
        super().__init__(clock=clock)
        self.folder = Path(folder) if folder else Path(tempfile.gettempdir())
        self.path = self.folder / FILE_NAME
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._file_id: tuple[int, int] | None = None
        self._next_purge = 0.0

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.folder)!r})"

    # --- connection ----------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        try:
            st = os.stat(self.path)
            file_id = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            file_id = None
        if self._conn is not None and file_id != self._file_id:
            self._drop()  # deleted or replaced under us: open the file that is there now
        if self._conn is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # created private; SQLite gives its -wal and -shm files the same mode
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute("PRAGMA synchronous=NORMAL")
                # a file in use already has its tables and WAL mode: opening it again
                # takes no write lock, so it works while another process writes
                if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("BEGIN IMMEDIATE")
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    conn.execute("COMMIT")
            except BaseException:
                conn.close()
                raise
            st = os.stat(self.path)
            self._conn, self._file_id = conn, (st.st_dev, st.st_ino)
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn, self._file_id = None, None

    def close_connection(self) -> None:
        """Close the connection (the next call opens it again)."""
        with self._lock:
            self._drop()

    def _transaction(self, body: Callable[[sqlite3.Connection], object], *, write: bool):
        if not self._lock.acquire(timeout=self.busy_timeout_s + 1.0):
            raise StoreUnavailable(f"room store {self.path}: busy")
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                result = body(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result
        except RoomError:
            raise
        except (sqlite3.Error, OSError) as exc:
            self._drop()
            raise StoreUnavailable(f"room store {self.path}: {exc}") from exc
        finally:
            self._lock.release()

    def _purge(self, conn: sqlite3.Connection, now: float) -> None:
        if now < self._next_purge:
            return
        self._next_purge = now + PURGE_EVERY_S
        ended = "SELECT code FROM rooms WHERE expires <= ?"
        conn.execute(f"DELETE FROM answers WHERE code IN ({ended})", (now,))
        conn.execute(f"DELETE FROM revealed WHERE code IN ({ended})", (now,))
        conn.execute("DELETE FROM rooms WHERE expires <= ?", (now - TOMBSTONE_S,))

    # --- the hooks -----------------------------------------------------------------
    def _open(self, code: str, key_hash: str, now: float, expires: float) -> str:
        def body(conn: sqlite3.Connection) -> str:
            self._purge(conn, now)
            if conn.execute("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone():
                return "taken"
            (n_open,) = conn.execute(
                "SELECT COUNT(*) FROM rooms WHERE closed = 0 AND expires > ?", (now,)
            ).fetchone()
            if n_open >= MAX_OPEN_ROOMS:
                return "full_rooms"
            conn.execute(
                "INSERT INTO rooms (code, key_hash, created, expires) VALUES (?, ?, ?, ?)",
                (code, key_hash, now, expires),
            )
            return "ok"

        return self._transaction(body, write=True)

    @staticmethod
    def _record(conn: sqlite3.Connection, code: str) -> RoomRecord | None:
        row = conn.execute(
            "SELECT key_hash, created, expires, closed FROM rooms WHERE code = ?", (code,)
        ).fetchone()
        if row is None:
            return None
        revealed = conn.execute("SELECT question FROM revealed WHERE code = ?", (code,))
        return RoomRecord(
            code=code,
            key_hash=row[0],
            created=row[1],
            expires=row[2],
            closed=bool(row[3]),
            revealed=frozenset(q for (q,) in revealed),
        )

    def _room(self, code: str) -> RoomRecord | None:
        return self._transaction(lambda conn: self._record(conn, code), write=False)

    def _answer(
        self,
        code: str,
        question: str,
        group: str,
        learner: str,
        session: str,
        option: int,
        now: float,
    ) -> str:
        def body(conn: sqlite3.Connection) -> str:
            self._purge(conn, now)
            row = conn.execute("SELECT expires, closed FROM rooms WHERE code = ?", (code,))
            row = row.fetchone()
            state = None if row is None else state_of(row[0], bool(row[1]), now)
            if state != "open":
                return state or "unknown"
            if session:  # this session's answer under another learner id gives way
                conn.execute(
                    "DELETE FROM answers WHERE code = ? AND question = ? AND grp = ?"
                    " AND session = ? AND learner <> ?",
                    (code, question, group, session, learner),
                )
            key = (code, question, group, learner)
            old = conn.execute(
                "SELECT 1 FROM answers WHERE code = ? AND question = ? AND grp = ? AND learner = ?",
                key,
            ).fetchone()
            if old is None:
                (n,) = conn.execute(
                    "SELECT COUNT(*) FROM answers WHERE code = ? AND question = ?",
                    (code, question),
                ).fetchone()
                if n >= MAX_ANSWERS:
                    return "full_answers"
            conn.execute(
                "INSERT INTO answers (code, question, grp, learner, session, option, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (code, question, grp, learner) DO UPDATE SET"
                " session = excluded.session, option = excluded.option, at = excluded.at",
                (*key, session, option, now),
            )
            return "ok"

        return self._transaction(body, write=True)

    def _counts(self, code: str, question: str, group: str) -> tuple[RoomRecord | None, dict]:
        def body(conn: sqlite3.Connection) -> tuple[RoomRecord | None, dict]:
            rows = conn.execute(
                "SELECT option, COUNT(*) FROM answers"
                " WHERE code = ? AND question = ? AND grp = ? GROUP BY option",
                (code, question, group),
            )
            by_option = dict(rows.fetchall())
            return self._record(conn, code), by_option

        return self._transaction(body, write=False)

    def _has_answer(
        self, code: str, question: str, group: str, learner: str
    ) -> tuple[RoomRecord | None, bool]:
        def body(conn: sqlite3.Connection) -> tuple[RoomRecord | None, bool]:
            row = conn.execute(
                "SELECT 1 FROM answers WHERE code = ? AND question = ? AND grp = ? AND learner = ?",
                (code, question, group, learner),
            ).fetchone()
            return self._record(conn, code), row is not None

        return self._transaction(body, write=False)

    def _act(self, action: str, code: str, key_hash: str, question: str | None, now: float) -> str:
        def body(conn: sqlite3.Connection) -> str:
            record = self._record(conn, code)
            state = None if record is None else state_of(record.expires, record.closed, now)
            if state is None:
                return "unknown"
            if state == "expired" or (state == "closed" and action != "close"):
                return state
            if not key_hash or key_hash != record.key_hash:
                return "wrong_key"
            if action == "reveal":
                conn.execute(
                    "INSERT OR IGNORE INTO revealed (code, question) VALUES (?, ?)",
                    (code, question),
                )
            elif action == "reset":
                conn.execute(
                    "DELETE FROM answers WHERE code = ? AND question = ?", (code, question)
                )
                conn.execute(
                    "DELETE FROM revealed WHERE code = ? AND question = ?", (code, question)
                )
            elif action == "close":
                conn.execute("UPDATE rooms SET closed = 1 WHERE code = ?", (code,))
                conn.execute("DELETE FROM answers WHERE code = ?", (code,))
                conn.execute("DELETE FROM revealed WHERE code = ?", (code,))
            else:
                raise ValueError(f"unknown action {action!r}")
            return "ok"

        return self._transaction(body, write=True)
