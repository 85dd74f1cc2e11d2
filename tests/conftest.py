"""Test-wide setup: one BLAS thread, as app.py and the scripts use; Redis fixtures.

BLAS threads are set at import, before any test module loads NumPy: the arrays in this
project are small, and a multithreaded BLAS on a shared machine made the training tests
several times slower.

``redis_server`` (session) and ``start_redis`` (a server of the test's own) run a real
``redis-server`` (Debian's package) on a free loopback port, in a temporary folder. Without
the binary a test using them skips with the reason, unless ``REQUIRE_REDIS`` is set (CI):
then it fails.
"""

import os

import pytest

from benchmarks.redis_server import RedisServer, find_redis_server

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


# --- Redis ------------------------------------------------------------------------------
def _need_redis_server() -> None:
    if find_redis_server() is None:
        reason = "redis-server not installed (Debian: apt-get install redis-server)"
        if os.environ.get("REQUIRE_REDIS"):
            pytest.fail(f"{reason}, and REQUIRE_REDIS is set")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def redis_server():
    """A running redis-server shared by the session (``.url``, ``.port``). Do not stop or
    kill it: use ``start_redis`` for a server of your own."""
    _need_redis_server()
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture
def start_redis():
    """``start_redis(append_only=False) -> RedisServer``: a running server of the test's
    own, which it may kill, pause and restart; stopped at the end of the test."""
    _need_redis_server()
    servers: list[RedisServer] = []

    def start(*, append_only: bool = False) -> RedisServer:
        servers.append(RedisServer(append_only=append_only))
        return servers[-1].start()

    yield start
    for server in servers:
        server.stop()
