"""A real Redis (or Valkey) server for the shared-state tests: ``redis-server`` from the OS
packages, started on a free loopback port with nothing saved to disk, stopped and started again
on the same port to play a restart."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

#: Why the shared-state tests are skipped on this machine, or ``None`` when a server is here.
SERVER = shutil.which("redis-server") or shutil.which("valkey-server")
MISSING = (
    None if SERVER else "no redis-server or valkey-server on PATH (apt-get install redis-server)"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """``redis-server`` on 127.0.0.1:*port* (no persistence, no other interface)."""

    def __init__(self, password: str | None = None):
        self.port = free_port()
        self.password = password
        self.folder = tempfile.mkdtemp(prefix="pi-web-redis-")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        assert SERVER is not None, MISSING
        args = [
            SERVER,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", self.folder,
            "--loglevel", "warning",
        ]  # fmt: skip
        if self.password:
            args += ["--requirepass", self.password]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64):
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start within 10 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        assert self.proc is not None
        self.proc.send_signal(19)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(18)

    def client(self):
        """A redis client of the test's own (to look at or plant what the server holds)."""
        import redis

        return redis.Redis.from_url(self.url)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
