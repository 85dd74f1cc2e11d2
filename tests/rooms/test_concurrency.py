"""Answers given at once are never lost nor counted twice, on both backends.

20 threads × 50 answers, through one store object (the threads of one Streamlit server)
and through one store object per thread (as separate processes or app servers would:
SQLite's file locking or Redis's atomic scripts order them); then separate processes.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from rooms.store import MAX_ANSWERS, LimitReached

Q = "variance_std"
G = "64|1|1"
THREADS = 20
PER_THREAD = 50
ROOT = Path(__file__).resolve().parents[2]


def learner(thread: int, i: int) -> str:
    return f"T{thread:02d}x{i:013d}"


def run_threads(target, n: int = THREADS) -> list[BaseException]:
    """Run ``target(t)`` on ``n`` threads started together; the exceptions they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(t: int) -> None:
        start.wait()
        try:
            target(t)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    return errors


@pytest.mark.parametrize("shared", [True, False], ids=["one_store", "store_per_thread"])
def test_20_threads_x_50_answers_none_lost_none_twice(make_store, shared):
    store = make_store()
    code, key = store.open_room()
    stores = [store if shared else make_store() for _ in range(THREADS)]

    def answer(t: int) -> None:
        for i in range(PER_THREAD):
            stores[t].answer(code, Q, G, learner(t, i), (t + i) % 4, 4)

    assert run_threads(answer) == []
    expected = Counter((t + i) % 4 for t in range(THREADS) for i in range(PER_THREAD))
    counts = store.counts(code, Q, G, key)
    assert counts.total == THREADS * PER_THREAD == MAX_ANSWERS
    assert counts.by_option == expected
    with pytest.raises(LimitReached):  # exactly full: the next new learner is refused
        store.answer(code, Q, G, learner(99, 0), 0, 4)


@pytest.mark.parametrize("shared", [True, False], ids=["one_store", "store_per_thread"])
def test_retries_at_once_replace_and_never_add(make_store, shared):
    """Each thread's 25 learners answer, then change their minds (50 calls a thread), while
    all 20 threads also hammer one common learner: 500 + 1 answers, the last choices."""
    store = make_store()
    code, key = store.open_room()
    stores = [store if shared else make_store() for _ in range(THREADS)]
    common = "Common0000000000"

    def answer(t: int) -> None:
        for i in range(PER_THREAD // 2):
            stores[t].answer(code, Q, G, learner(t, i), 0, 4)
            stores[t].answer(code, Q, G, common, t % 4, 4)
            stores[t].answer(code, Q, G, learner(t, i), 1 + (t + i) % 3, 4)

    assert run_threads(answer) == []
    counts = store.counts(code, Q, G, key)
    assert counts.total == THREADS * PER_THREAD // 2 + 1
    mine = Counter(1 + (t + i) % 3 for t in range(THREADS) for i in range(PER_THREAD // 2))
    # the common learner's last answer is one of 0..3, whichever thread wrote last
    extra = Counter(counts.by_option) - mine
    assert sum(extra.values()) == 1 and set(extra) <= {0, 1, 2, 3}
    assert Counter(counts.by_option) - extra == mine


def test_the_limit_holds_under_contention(make_store):
    """30 threads × 40 new learners race for 1,000 places: exactly 1,000 get one."""
    store = make_store()
    code, key = store.open_room()
    refused = Counter()

    def answer(t: int) -> None:
        for i in range(40):
            try:
                store.answer(code, Q, G, learner(t, i), i % 2, 2)
            except LimitReached:
                refused[t] += 1

    assert run_threads(answer, n=30) == []
    assert store.counts(code, Q, G, key).total == MAX_ANSWERS
    assert sum(refused.values()) == 30 * 40 - MAX_ANSWERS


WORKER = """
import sys
from rooms.redis_store import RedisStore
from rooms.sqlite_store import SqliteStore
backend, where, prefix, code, tag, n = sys.argv[1:]
store = SqliteStore(where) if backend == "sqlite" else RedisStore(where, prefix=prefix)
for i in range(int(n)):
    store.answer(code, "variance_std", "64|1|1", f"{tag}x{i:013d}", i % 3, 3)
"""


def test_processes_share_the_store(make_store, backend):
    """4 processes × 100 answers into one room, each with its own connection."""
    store = make_store()
    code, key = store.open_room()
    if backend == "sqlite":
        where, prefix = str(store.folder), ""
    else:
        where, prefix = store.url, store.prefix
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, backend, where, prefix, code, f"P{p}", "100"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    counts = store.counts(code, Q, G, key)
    assert counts.total == 400
    assert counts.by_option == Counter(i % 3 for _ in range(4) for i in range(100))
