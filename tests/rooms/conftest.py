"""Fixtures for the room store tests: every test using ``make_store`` runs on both backends.

``make_store(clock=None) -> RoomStore`` makes a store of the test's backend: SQLite in the
test's own folder, or Redis on the session's server under a prefix of the test's own (so
tests share the server without seeing each other's rooms). Several calls give several
stores on the same data, as several processes or app servers would have.
"""

from __future__ import annotations

import time
import uuid

import pytest

from rooms.redis_store import RedisStore
from rooms.sqlite_store import SqliteStore


class FakeClock:
    """A clock the test moves: ``clock()`` is the time, ``clock.advance(s)`` moves it."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "redis"])
def backend(request) -> str:
    return request.param


@pytest.fixture
def make_store(backend, request, tmp_path):
    if backend == "sqlite":
        return lambda clock=None: SqliteStore(tmp_path / "rooms", clock=clock or time.time)
    server = request.getfixturevalue("redis_server")
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    return lambda clock=None: RedisStore(server.url, prefix=prefix, clock=clock or time.time)


@pytest.fixture
def store(make_store, clock):
    """A store on the test's backend, driven by ``clock``."""
    return make_store(clock)
