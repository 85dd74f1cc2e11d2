"""The room store alone: time per answer and space per 1,000 answers, SQLite and Redis.

    python benchmarks/room_store.py [--answers 1000] [--threads 20] [--store sqlite,redis]

For each backend, in a fresh folder (SQLite) or a fresh ``redis-server`` on a free
loopback port (Redis), one room and one question:

- ``1 thread``: ``--answers`` answers from distinct learners, one after another: the
  median and 95th percentile of one ``answer()`` call, and the mean (wall time / answers);
- ``N threads``: the same number of answers from ``--threads`` threads at once through one
  store object (the threads of one Streamlit server): per-call median and p95 (including
  the wait for the others), and wall time / answers (the store's throughput);
- ``retry``: the same learner answering again (an update, not an insert);
- ``counts``: one presenter poll (``counts()`` with the key);
- the space the answers take: the SQLite file after a checkpoint (and its WAL before), or
  Redis's ``MEMORY USAGE`` of the room's keys.

No budget: the figures are for the README and for sizing. Other load on the machine moves
them.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.redis_server import RedisServer, find_redis_server
from rooms.redis_store import RedisStore
from rooms.sqlite_store import SqliteStore
from rooms.store import RoomStore

Q = "saturation_mean_max"
G = "64|16|0"  # d_k, n_keys, seed: a typical settings group


def learner(thread: int, i: int) -> str:
    return f"t{thread:02d}_{i:012d}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def one_thread(store: RoomStore, n: int) -> dict[str, float]:
    code, key = store.open_room()
    times = []
    start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        store.answer(code, Q, G, learner(0, i), i % 4, 4)
        times.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    assert store.counts(code, Q, G, key).total == n
    retry = []
    for i in range(min(n, 200)):
        t0 = time.perf_counter()
        store.answer(code, Q, G, learner(0, i), (i + 1) % 4, 4)
        retry.append(time.perf_counter() - t0)
    polls = []
    for _ in range(200):
        t0 = time.perf_counter()
        store.counts(code, Q, G, key)
        polls.append(time.perf_counter() - t0)
    return {
        "p50": statistics.median(times),
        "p95": pct(times, 95),
        "mean": wall / n,
        "retry_p50": statistics.median(retry),
        "counts_p50": statistics.median(polls),
        "code": code,
    }


def many_threads(store: RoomStore, n: int, threads: int) -> dict[str, float]:
    code, key = store.open_room()
    per = n // threads
    times: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def run(t: int) -> None:
        mine = []
        barrier.wait()
        for i in range(per):
            t0 = time.perf_counter()
            store.answer(code, Q, G, learner(t, i), (t + i) % 4, 4)
            mine.append(time.perf_counter() - t0)
        with lock:
            times.extend(mine)

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    wall = time.perf_counter() - start
    total = store.counts(code, Q, G, key).total
    assert total == per * threads, (total, per * threads)
    return {"p50": statistics.median(times), "p95": pct(times, 95), "mean": wall / total}


def sqlite_size(store: SqliteStore) -> str:
    wal = Path(str(store.path) + "-wal")
    wal_kb = wal.stat().st_size / 1024 if wal.exists() else 0.0
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db_kb = store.path.stat().st_size / 1024
    return f"file {db_kb:.0f} KB after checkpoint (WAL before it: {wal_kb:.0f} KB)"


def redis_size(store: RedisStore, code: str) -> str:
    keys = list(store.client.scan_iter(f"{store.prefix}{code}*"))
    usage = sum(store.client.memory_usage(k, samples=0) or 0 for k in keys) / 1024
    return f"MEMORY USAGE of the room's {len(keys)} keys: {usage:.0f} KB"


def report(name: str, single: dict, multi: dict, threads: int, size: str) -> None:
    print(f"\n{name}")
    print(f"  {'':<12} {'p50 ms':>8} {'p95 ms':>8} {'wall/answer ms':>15}")
    print(
        f"  {'1 thread':<12} {ms(single['p50']):>8} {ms(single['p95']):>8} {ms(single['mean']):>15}"
    )
    row = f"{threads} threads"
    print(f"  {row:<12} {ms(multi['p50']):>8} {ms(multi['p95']):>8} {ms(multi['mean']):>15}")
    print(f"  {'retry':<12} {ms(single['retry_p50']):>8}")
    print(f"  {'counts':<12} {ms(single['counts_p50']):>8}")
    print(f"  space for the answers: {size}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--store", default="sqlite,redis")
    args = parser.parse_args()
    print(f"{args.answers} answers to one question; {args.threads} threads share one store")
    for name in args.store.split(","):
        if name == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                store = SqliteStore(folder)
                single = one_thread(store, args.answers)
                size = sqlite_size(store)
                multi = many_threads(store, args.answers, args.threads)
                report("SQLite (WAL, synchronous=NORMAL)", single, multi, args.threads, size)
        elif name == "redis":
            if find_redis_server() is None:
                print("\nRedis: skipped, redis-server not installed")
                continue
            with RedisServer() as server:
                store = RedisStore(server.url)
                single = one_thread(store, args.answers)
                size = redis_size(store, single["code"])
                multi = many_threads(store, args.answers, args.threads)
                report(f"Redis (loopback, {server.url})", single, multi, args.threads, size)
        else:
            parser.error(f"--store: unknown store {name!r} (sqlite, redis)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
