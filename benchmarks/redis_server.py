"""A throwaway ``redis-server`` on a free loopback port, for tests and benchmarks.

    with RedisServer() as server:        # or server = RedisServer(); server.start()
        store = RedisStore(server.url)
        server.kill()                    # SIGKILL, as a crash
        server.start()                   # the same port and folder again

It runs in a temporary folder of its own (removed at ``stop``), bound to 127.0.0.1 only,
in protected mode, without RDB snapshots; ``append_only=True`` turns on the append-only
file with a write per command, so a killed and restarted server keeps everything it
acknowledged. ``REDIS_SERVER`` names the binary (default: ``redis-server`` on the PATH).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["RedisServer", "find_redis_server", "free_port"]

START_TIMEOUT_S = 10.0


def find_redis_server() -> str | None:
    """Path of the ``redis-server`` binary (``$REDIS_SERVER`` if set), None if there is none."""
    return shutil.which(os.environ.get("REDIS_SERVER") or "redis-server")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process; ``url`` is ``redis://127.0.0.1:<port>/0``."""

    def __init__(self, *, append_only: bool = False, binary: str | None = None) -> None:
        self.binary = binary or find_redis_server()
        if self.binary is None:
            raise FileNotFoundError("redis-server not found (Debian: apt-get install redis-server)")
        self.append_only = append_only
        self.folder = Path(tempfile.mkdtemp(prefix="redis-test-"))
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.folder / "redis.log"

    def start(self) -> RedisServer:
        """Start the server (on the port it had, if it ran before) and wait for PONG."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        for _ in range(5):  # another process may take the free port first
            port = self.port or free_port()
            cmd = [
                self.binary,
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--protected-mode", "yes",
                "--dir", str(self.folder),
                "--save", "",
                "--appendonly", "yes" if self.append_only else "no",
                "--appendfsync", "always",
                "--logfile", str(self.log),
                "--daemonize", "no",
            ]  # fmt: skip
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True
            )
            deadline = time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline and self.proc.poll() is None:
                if _ping(port):
                    self.port = port
                    return self
                time.sleep(0.02)
            self._end(signal.SIGKILL)
            if self.port:  # a restart on its old port: that port is taken now
                break
        log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
        raise RuntimeError(f"redis-server did not start on 127.0.0.1:{port}\n{log}")

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is flushed."""
        self._end(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP: the server holds its connections and answers nothing."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """End the server and remove its folder."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
        self._end(signal.SIGTERM)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _end(self, sig: int) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
