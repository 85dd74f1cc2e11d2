"""``deploy/run-local.sh N`` from Python: for tests/deploy and benchmarks/scale_out.py.

:class:`LocalDeployment` starts the script on free loopback ports in a state folder of its
own, waits for the script's ``state.json`` (written once Redis, every replica and HAProxy
answer: the URL, and the pid and port of each process), and always stops it again:
SIGTERM to the script, which stops its children; SIGKILL to the script's process group
if that did not work within 30 s.

Also here: plain HTTP requests carrying a cookie (:func:`get`), the affinity cookie a
response sets (:func:`affinity_cookie`, its name read from ``deploy/haproxy.cfg``) and
the replica that answered (the ``X-Replica`` header HAProxy adds), and HAProxy's view of
the replicas from its stats socket (:meth:`LocalDeployment.servers`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEPLOY = REPO_ROOT / "deploy"
RUN_LOCAL = DEPLOY / "run-local.sh"
#: What run-local.sh needs besides Python (redis-cli comes with Debian's redis-server).
TOOLS = ("haproxy", "redis-server", "redis-cli")
#: The header HAProxy adds to every response: the name of the replica that answered.
REPLICA_HEADER = "X-Replica"


def cookie_name() -> str:
    """The affinity cookie's name, as deploy/haproxy.cfg sets it (``cookie NAME insert …``)."""
    text = (DEPLOY / "haproxy.cfg").read_text()
    found = re.search(r"^\s*cookie\s+(\S+)\s+insert\b", text, re.MULTILINE)
    if found is None:
        raise RuntimeError("deploy/haproxy.cfg sets no `cookie NAME insert` line")
    return found.group(1)


def missing_tools() -> list[str]:
    """The programs run-local.sh needs that are not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


# --- HTTP through the balancer ----------------------------------------------------------


@dataclass(frozen=True)
class Response:
    status: int
    headers: Message
    body: bytes

    @property
    def replica(self) -> str | None:
        """The replica that answered (HAProxy's ``X-Replica`` header)."""
        return self.headers.get(REPLICA_HEADER)


def get(url: str, cookie: str | None = None, timeout: float = 10.0) -> Response:
    """GET ``url``, sending ``cookie`` (``NAME=value``) if given; any status is returned."""
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return Response(resp.status, resp.headers, resp.read())
    except urllib.error.HTTPError as err:
        with err:
            return Response(err.code, err.headers, err.read())


def affinity_cookie(headers: Any) -> str | None:
    """``NAME=value`` of the affinity cookie a response sets, or None if it sets none.

    ``headers``: anything with ``get_all`` (urllib's, websockets' handshake headers).
    """
    name = cookie_name()
    for value in headers.get_all("Set-Cookie") or ():
        first = value.split(";", 1)[0].strip()
        if first.startswith(f"{name}="):
            return first
    return None


# --- the deployment ---------------------------------------------------------------------


class LocalDeployment:
    """``deploy/run-local.sh replicas`` on free loopback ports; a context manager.

    ``state`` is the script's state.json once it is ready; ``url`` the learners' URL.
    """

    def __init__(
        self,
        replicas: int,
        *,
        python: str = sys.executable,
        start_timeout: float = 180.0,
        env: dict[str, str] | None = None,
    ) -> None:
        if replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {replicas}")
        self.replicas = replicas
        self.python = python
        self.start_timeout = start_timeout
        self.env = env or {}
        self.state_dir = Path(tempfile.mkdtemp(prefix="attention-lab-deploy-"))
        self.output_path = self.state_dir / "run-local.out"
        self.proc: subprocess.Popen | None = None
        self.state: dict[str, Any] = {}

    # starting and stopping --------------------------------------------------------------
    def __enter__(self) -> LocalDeployment:
        missing = missing_tools()
        if missing:
            raise RuntimeError(f"run-local.sh needs {', '.join(missing)} on PATH")
        env = {**os.environ, "PYTHON": self.python, **self.env}
        cmd = ["bash", str(RUN_LOCAL), "--free-ports", "--state-dir", str(self.state_dir)]
        with open(self.output_path, "wb") as out:
            self.proc = subprocess.Popen(
                [*cmd, str(self.replicas)],
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: Ctrl-C reaches us only
            )
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        path = self.state_dir / "state.json"
        deadline = time.monotonic() + self.start_timeout
        while not path.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"run-local.sh exited with {self.proc.returncode}:\n{self.output()[-3000:]}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"run-local.sh not ready after {self.start_timeout:.0f} s:\n"
                    f"{self.output()[-3000:]}"
                )
            time.sleep(0.2)
        self.state = json.loads(path.read_text())

    def output(self) -> str:
        """What run-local.sh printed."""
        return self.output_path.read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.state_dir, ignore_errors=True)

    def stop(self) -> None:
        """SIGTERM to run-local.sh, which stops HAProxy, the replicas and Redis; SIGKILL
        to its process group if it has not ended within 30 s. Safe to call twice; the
        state folder (logs included) stays until the context ends."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # the script and its children share its process group
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    # what is running --------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The learners' URL, ``http://127.0.0.1:<port>`` (no trailing slash)."""
        return self.state["url"].rstrip("/")

    def replica(self, name: str) -> dict[str, Any]:
        """One replica's entry of state.json: name, port, pid, log."""
        found = [r for r in self.state["replicas"] if r["name"] == name]
        if not found:
            names = ", ".join(r["name"] for r in self.state["replicas"])
            raise KeyError(f"no replica {name!r}; there are {names}")
        return found[0]

    def replica_names(self) -> list[str]:
        return [r["name"] for r in self.state["replicas"]]

    def pids(self) -> dict[str, int]:
        """Process ids by name: ``haproxy``, ``redis`` and each replica's name."""
        if not self.state:
            return {}
        pids = {"haproxy": self.state["haproxy"]["pid"], "redis": self.state["redis"]["pid"]}
        pids.update({r["name"]: r["pid"] for r in self.state["replicas"]})
        return pids

    def kill_replica(self, name: str) -> None:
        """SIGKILL one replica: a crash, with no goodbye to its sessions."""
        os.kill(self.replica(name)["pid"], signal.SIGKILL)

    def stop_redis(self) -> None:
        """SIGTERM to Redis, as a restart does (it writes its append-only log and exits);
        run-local.sh starts it again after ``REDIS_RESTART_S`` seconds. Returns once
        Redis no longer answers."""
        import redis

        os.kill(self.redis_pid(), signal.SIGTERM)
        client = redis.Redis.from_url(self.state["redis"]["url"], socket_timeout=0.5)
        deadline = time.monotonic() + 10.0
        try:
            while time.monotonic() < deadline:
                try:
                    client.ping()
                except redis.RedisError:
                    return
                time.sleep(0.05)
            raise TimeoutError("Redis still answers 10 s after SIGTERM")
        finally:
            client.close()

    def redis_pid(self) -> int:
        """Redis's process id now (state.json is rewritten when Redis is restarted)."""
        path = self.state_dir / "state.json"
        with contextlib.suppress(OSError, ValueError):
            self.state = json.loads(path.read_text())
        return self.state["redis"]["pid"]

    def wait_redis(self, timeout: float = 60.0) -> float:
        """Seconds until Redis answers PING (after :meth:`stop_redis`, once restarted)."""
        import redis  # the client the app's room store uses

        t0 = time.monotonic()
        client = redis.Redis.from_url(self.state["redis"]["url"], socket_timeout=1.0)
        try:
            while True:
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return time.monotonic() - t0
                if time.monotonic() - t0 > timeout:
                    raise TimeoutError(f"Redis not answering {timeout:g} s after its stop")
                time.sleep(0.1)
        finally:
            client.close()

    def replica_log(self, name: str) -> str:
        return Path(self.replica(name)["log"]).read_text(errors="replace")

    def servers(self) -> dict[str, dict[str, str]]:
        """HAProxy's ``show stat`` row of each replica (backend ``replicas``), by name.

        Useful columns: ``status`` (UP, DOWN, …), ``scur`` (connections open now, a
        learner's websocket among them), ``stot`` (connections so far), ``wredis``
        (requests sent to another replica than their cookie named).
        """
        rows = _stats_socket(self.state["haproxy"]["stats_socket"], "show stat")
        lines = [ln for ln in rows.splitlines() if ln.strip()]
        header = lines[0].lstrip("# ").split(",")
        out = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == "replicas" and row.get("svname") not in ("BACKEND",):
                out[row["svname"]] = row
        return out

    def wait_status(self, name: str, status: str, timeout: float = 20.0) -> float:
        """Seconds until HAProxy reports ``status`` for replica ``name``."""
        t0 = time.monotonic()
        while True:
            if self.servers()[name]["status"].startswith(status):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                now = self.servers()[name]["status"]
                raise TimeoutError(f"{name} still {now}, not {status}, after {timeout:g} s")
            time.sleep(0.1)


def _stats_socket(path: str, command: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()
