"""deploy/run-local.sh 2, live: HAProxy in front of two replicas, Redis behind them.

One deployment for the module (benchmarks/deployment.py starts the script on free
loopback ports and reads the pids and ports from its state.json). The tests run in file
order: the last two kill a replica, then stop the whole deployment.

Which replica answered: HAProxy adds ``X-Replica: <server name>`` to every response,
the websocket handshake's included (the affinity cookie's value is a hash).
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import deployment, load
from benchmarks.deployment import LocalDeployment

PAGE = "saturation"
#: A run of the page may take this long on a shared 2-core machine (the first one
#: imports the app); tests assert no timing.
RUN_TIMEOUT_S = 90.0


@pytest.fixture(scope="module")
def dep(deploy_tools: None) -> Iterator[LocalDeployment]:
    with LocalDeployment(2) as running:
        yield running


def _pinned(dep: LocalDeployment, replica: str) -> str:
    """An affinity cookie for ``replica``: cookie-less GETs until HAProxy picks it."""
    for _ in range(8):
        resp = deployment.get(f"{dep.url}/")
        if resp.replica == replica:
            cookie = deployment.affinity_cookie(resp.headers)
            assert cookie is not None
            return cookie
    raise AssertionError(f"8 cookie-less requests and none went to {replica}")


def _session(dep: LocalDeployment, cookie: str | None, query: str = "d_k=64") -> load.Learner:
    headers = {"Cookie": cookie} if cookie else None
    return load.Learner(dep.url, PAGE, query, RUN_TIMEOUT_S, headers)


def test_state_file_names_every_process(dep: LocalDeployment) -> None:
    state = dep.state
    assert [r["name"] for r in state["replicas"]] == ["r1", "r2"]
    ports = [state["haproxy"]["port"], state["redis"]["port"]]
    ports += [r["port"] for r in state["replicas"]]
    assert len(set(ports)) == 4
    for pid in dep.pids().values():
        assert Path(f"/proc/{pid}").exists()


def test_health_through_haproxy(dep: LocalDeployment) -> None:
    resp = deployment.get(f"{dep.url}/_stcore/health")
    assert resp.status == 200
    assert resp.body == b"ok"
    assert resp.replica in ("r1", "r2")
    servers = dep.servers()
    assert sorted(servers) == ["r1", "r2"]
    assert all(row["status"] == "UP" for row in servers.values())


def test_replicas_share_redis_with_append_only_log(dep: LocalDeployment) -> None:
    redis = dep.state["redis"]
    for rep in dep.state["replicas"]:
        environ = Path(f"/proc/{rep['pid']}/environ").read_bytes().split(b"\0")
        assert f"ROOM_STORE_URL={redis['url']}".encode() in environ
    cli = ["redis-cli", "-h", "127.0.0.1", "-p", str(redis["port"])]

    def ask(*args: str) -> str:
        return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=10).stdout

    assert ask("CONFIG", "GET", "appendonly").split() == ["appendonly", "yes"]
    assert ask("CONFIG", "GET", "dir").split() == ["dir", redis["dir"]]
    assert ask("SET", "deploy-test", "1").strip() == "OK"
    assert any(Path(redis["dir"]).rglob("*.aof"))


def test_cookie_affinity(dep: LocalDeployment) -> None:
    # two clients without a cookie are spread over both replicas (leastconn, ties in turn)
    first, second = deployment.get(f"{dep.url}/"), deployment.get(f"{dep.url}/")
    assert {first.replica, second.replica} == {"r1", "r2"}
    cookies = [deployment.affinity_cookie(r.headers) for r in (first, second)]
    assert None not in cookies and cookies[0] != cookies[1]
    # with its cookie a client keeps its replica, and HAProxy does not set it again
    for resp, cookie in zip((first, second), cookies, strict=True):
        for path in ("/", f"/{PAGE}?d_k=64", "/_stcore/health", "/_stcore/host-config"):
            again = deployment.get(f"{dep.url}{path}", cookie=cookie)
            assert again.status == 200, path
            assert again.replica == resp.replica, path
            assert deployment.affinity_cookie(again.headers) is None, path


def test_websocket_session_through_haproxy(dep: LocalDeployment) -> None:
    cookie = _pinned(dep, "r2")

    async def visit() -> tuple[load.Learner, float | None]:
        session = _session(dep, cookie)
        try:
            await session.open()
            latency = await session.change("d_k", 100)
        finally:
            await session.close()
        return session, latency

    session, latency = asyncio.run(visit())
    assert session.stats.errors == []
    assert session.stats.load_s is not None  # the first run finished
    assert session.response_headers.get(deployment.REPLICA_HEADER) == "r2"
    assert latency is not None
    assert session.current("d_k") == 100
    assert session.query == "d_k=100"


def test_dead_replica_learners_move_on(dep: LocalDeployment) -> None:
    """Kill r1 under a learner: its websocket closes, HAProxy marks r1 down, the
    learner's next request with r1's cookie goes to r2 (and carries r2's cookie back),
    and a new websocket reruns the page from the URL, with the learner's d_k."""
    old_cookie = _pinned(dep, "r1")

    async def before_and_after() -> tuple[load.Learner, load.Learner, float, str]:
        session = _session(dep, old_cookie)
        await session.open()
        assert session.response_headers.get(deployment.REPLICA_HEADER) == "r1"
        assert await session.change("d_k", 256) is not None
        dep.kill_replica("r1")
        await asyncio.wait_for(session.lost.wait(), 10)
        with pytest.raises(load.ConnectionLost):
            await session.change("d_k", 512)
        await session.close()
        down_s = await asyncio.to_thread(dep.wait_status, "r1", "DOWN", 20.0)
        probe = await asyncio.to_thread(deployment.get, f"{dep.url}/_stcore/health", old_cookie)
        assert probe.status == 200 and probe.replica == "r2"
        new_cookie = deployment.affinity_cookie(probe.headers)
        assert new_cookie is not None and new_cookie != old_cookie
        again = _session(dep, new_cookie, session.query)
        try:
            await again.open()
            restored = again.current("d_k")
            assert await again.change("d_k", 32) is not None
        finally:
            await again.close()
        return session, again, down_s, restored

    session, again, down_s, restored = asyncio.run(before_and_after())
    # the URL took the change the dead replica never ran, and brings it back
    assert session.query == "d_k=512"
    assert restored == 512
    # inter 2 s, fastinter 0.5 s, fall 2: down within ~2.5 s of the kill; 20 s is slack
    # for a loaded machine
    assert down_s < 20
    assert again.response_headers.get(deployment.REPLICA_HEADER) == "r2"
    assert again.stats.load_s is not None
    assert again.stats.errors == [] and session.stats.errors == []
    assert again.current("d_k") == 32
    assert dep.servers()["r2"]["status"] == "UP"


def test_sigterm_stops_everything(dep: LocalDeployment) -> None:
    pids = dep.pids()
    state_json = dep.state_dir / "state.json"
    assert state_json.exists()
    dep.stop()
    assert dep.proc is not None and dep.proc.returncode == 0
    assert "[run-local] stopped" in dep.output()
    for name, pid in pids.items():
        assert not Path(f"/proc/{pid}").exists(), f"{name} (pid {pid}) still runs"
