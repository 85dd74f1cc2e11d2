"""The Redis store when Redis fails: ``StoreUnavailable`` within about two seconds, never a
hang, nothing half-written, and working again once Redis is back (the client reconnects).

Each test runs a redis-server of its own (``start_redis``) and kills, pauses or starves it.
"""

from __future__ import annotations

import time

import pytest

from benchmarks.redis_server import free_port
from rooms.redis_store import RedisStore
from rooms.store import ROOM_TTL_S, TOMBSTONE_S, StoreUnavailable, UnknownRoom

Q = "variance_std"
G = "64|1|1"
#: Seconds a call on a dead or silent Redis may take: connect and read timeouts of 1 s,
#: one retry, and slack for a shared machine.
FAIL_WITHIN_S = 4.5


def learner(i: int) -> str:
    return f"L{i:015d}"


def every_call(store: RedisStore, code: str, key: str):
    return [
        store.open_room,
        lambda: store.room_status(code),
        lambda: store.answer(code, Q, G, learner(99), 0, 2),
        lambda: store.counts(code, Q, G, key),
        lambda: store.reveal(code, key, Q),
        lambda: store.reset(code, key, Q),
        lambda: store.close(code, key),
    ]


def assert_unavailable(calls, within: float = FAIL_WITHIN_S) -> None:
    for call in calls:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable):
            call()
        assert time.monotonic() - started < within


def test_no_redis_there():
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0")
    assert_unavailable(every_call(store, "ABCDEF", "k" * 43), within=1.0)


def test_killed_then_restarted_keeps_what_it_acknowledged(start_redis):
    server = start_redis(append_only=True)
    store = RedisStore(server.url)
    code, key = store.open_room()
    for i in range(10):
        store.answer(code, Q, G, learner(i), i % 2, 2)
    server.kill()
    assert_unavailable(every_call(store, code, key))
    server.start()  # same port, same folder: the append-only file brings the data back
    counts = store.counts(code, Q, G, key)
    assert counts.total == 10 and counts.by_option == {0: 5, 1: 5}
    store.answer(code, Q, G, learner(10), 1, 2)  # the pool's dead connections are replaced
    store.answer(code, Q, G, learner(0), 1, 2)
    assert store.counts(code, Q, G, key).by_option == {0: 4, 1: 7}


def test_killed_then_restarted_empty(start_redis):
    server = start_redis()
    store = RedisStore(server.url)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    server.kill()
    assert_unavailable(every_call(store, code, key))
    server.start()  # no persistence: the room is gone, and the store says so
    with pytest.raises(UnknownRoom):
        store.answer(code, Q, G, learner(1), 0, 2)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(1), 0, 2)
    assert store.counts(code, Q, G, key).total == 1


def test_a_silent_redis_times_out(start_redis):
    server = start_redis()
    store = RedisStore(server.url)
    code, key = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    server.pause()
    try:
        assert_unavailable(every_call(store, code, key)[1:3])
    finally:
        server.resume()
    store.answer(code, Q, G, learner(1), 1, 2)
    # the answer that timed out may have run once Redis woke: it is learner 99's, alone
    counts = store.counts(code, Q, G, key)
    assert counts.by_option.get(1) == 1 and counts.total in (2, 3)


def test_a_full_redis_refuses_writes_and_recovers(start_redis):
    """Out of memory (``maxmemory`` reached, no eviction): Redis's "disk full"."""
    server = start_redis()
    store = RedisStore(server.url)
    code, key = store.open_room()
    store_room = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    store.answer(store_room[0], Q, G, learner(0), 0, 2)
    store.client.config_set("maxmemory", "1")
    try:
        with pytest.raises(StoreUnavailable, match="maxmemory"):
            store.answer(code, Q, G, learner(1), 1, 2)
        with pytest.raises(StoreUnavailable, match="maxmemory"):
            store.open_room()
        assert store.counts(code, Q, G, key).total == 1  # reads go on
        store.reset(code, key, Q)  # and what frees memory
        store.close(*store_room)
    finally:
        store.client.config_set("maxmemory", "0")
    store.answer(code, Q, G, learner(1), 1, 2)
    assert store.counts(code, Q, G, key).by_option == {1: 1}
    assert store.room_status(store_room[0]).state == "closed"


def test_keys_expire_with_the_room(redis_server):
    store = RedisStore(redis_server.url, prefix="test:expiry:")
    code, _ = store.open_room()
    store.answer(code, Q, G, learner(0), 0, 2)
    assert store.client.pttl("test:expiry:open") == -1  # pruned whenever a room opens
    ttl = {k: store.client.pttl(k) / 1000 for k in store.client.scan_iter("test:expiry:*")}
    del ttl["test:expiry:open"]
    room = f"test:expiry:{code}"
    assert ttl.pop(room) == pytest.approx(ROOM_TTL_S + TOMBSTONE_S, abs=5)
    assert ttl == {
        f"{room}:a:{Q}": pytest.approx(ROOM_TTL_S, abs=5),
        f"{room}:c:{Q}": pytest.approx(ROOM_TTL_S, abs=5),
    }
