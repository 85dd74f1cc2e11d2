"""deploy/: the files Docker users get are the ones run-local.sh runs, and they hold the
policy issue 26 asks for. Static checks (plus ``haproxy -c``); the live topology is
tests/deploy/test_run_local.py's."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks import deployment

DEPLOY = deployment.DEPLOY
HAPROXY_CFG = (DEPLOY / "haproxy.cfg").read_text()
RUN_LOCAL = (DEPLOY / "run-local.sh").read_text()
COMPOSE = (DEPLOY / "compose.yaml").read_text()
DOCKERFILE = (DEPLOY / "Dockerfile").read_text()


def _directives(text: str) -> list[str]:
    """Config lines without comments, whitespace collapsed."""
    lines = (re.sub(r"#.*", "", ln).split() for ln in text.splitlines())
    return [" ".join(words) for words in lines if words]


def test_haproxy_policy() -> None:
    lines = _directives(HAPROXY_CFG)
    assert "cookie LAB_REPLICA insert indirect nocache dynamic" in lines
    assert deployment.cookie_name() == "LAB_REPLICA"
    assert "timeout tunnel 1h" in lines
    assert "option httpchk GET /_stcore/health" in lines
    assert "http-check expect status 200" in lines
    assert "option redispatch 1" in lines
    assert "retries 2" in lines
    assert any(ln.startswith("default-server check ") for ln in lines)
    assert not any(ln.startswith("balance source") for ln in lines)
    # the reason for cookies over source-IP hashing is written down
    assert "NAT" in HAPROXY_CFG and "balance source" in HAPROXY_CFG


def test_haproxy_accepts_both_server_lists(deploy_tools: None, tmp_path: Path) -> None:
    local = tmp_path / "servers.cfg"
    local.write_text("backend replicas\n    server r1 127.0.0.1:1\n    server r2 127.0.0.1:2\n")
    env = {
        **os.environ,
        "LB_ADDRESS": "127.0.0.1",
        "LB_PORT": "1",
        "HAPROXY_STATE_DIR": str(tmp_path),
        "HAPROXY_COOKIE_KEY": "test",
    }
    for servers in (local, DEPLOY / "docker" / "servers.cfg"):
        check = subprocess.run(
            ["haproxy", "-c", "-f", str(DEPLOY / "haproxy.cfg"), "-f", str(servers)],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert check.returncode == 0, f"{servers.name}: {check.stdout}{check.stderr}"


def test_compose_runs_the_tested_files() -> None:
    # the same HAProxy policy and Redis settings, mounted read-only
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in COMPOSE
    assert "./docker/servers.cfg:/usr/local/etc/haproxy/servers.cfg:ro" in COMPOSE
    assert "./redis.conf:/usr/local/etc/redis/redis.conf:ro" in COMPOSE
    assert "ROOM_STORE_URL: redis://redis:6379/0" in COMPOSE
    assert "dockerfile: deploy/Dockerfile" in COMPOSE
    # HAProxy 2.6 is the Debian version the tests run
    assert "image: haproxy:2.6" in COMPOSE
    # every variable haproxy.cfg expands is set in compose, and by run-local.sh
    expanded = set(re.findall(r"\$\{(\w+)\}", "\n".join(_directives(HAPROXY_CFG))))
    assert expanded == {"LB_ADDRESS", "LB_PORT", "HAPROXY_STATE_DIR", "HAPROXY_COOKIE_KEY"}
    for name in expanded:
        assert f"{name}:" in COMPOSE, name
        assert re.search(rf"\b{name}\b", RUN_LOCAL), name


def test_one_start_command() -> None:
    # the image starts deploy/start-app.sh, and run-local.sh starts every replica with it
    assert 'CMD ["sh", "deploy/start-app.sh"]' in DOCKERFILE
    assert '"$HERE/start-app.sh"' in RUN_LOCAL
    start = (DEPLOY / "start-app.sh").read_text()
    assert "-m streamlit run app.py" in start
    assert "--server.headless true" in start
    assert "streamlit run" not in RUN_LOCAL.replace("start-app.sh", "")


def test_redis_keeps_the_rooms() -> None:
    lines = _directives((DEPLOY / "redis.conf").read_text())
    assert "appendonly yes" in lines
    assert '"$HERE/redis.conf"' in RUN_LOCAL


def test_scripts_parse() -> None:
    for cmd in (
        ["bash", "-n", str(DEPLOY / "run-local.sh")],
        ["sh", "-n", str(DEPLOY / "start-app.sh")],
    ):
        check = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0"], "from 1 to 64 (got '0')"),
        (["two"], "from 1 to 64 (got 'two')"),
        (["2", "3"], "one replica count expected"),
        (["--nope", "2"], "unknown option --nope"),
    ],
)
def test_run_local_refuses_bad_arguments(args: list[str], message: str) -> None:
    run = subprocess.run(
        ["bash", str(DEPLOY / "run-local.sh"), *args], capture_output=True, text=True, timeout=30
    )
    assert run.returncode != 0
    assert message in run.stderr
