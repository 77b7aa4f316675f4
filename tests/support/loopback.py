"""The one loopback HTTP server of the tests: stdlib ``http.server`` on 127.0.0.1 (a free port)
in a daemon thread, quiet when a client hangs up mid-answer, and quick to stop.

The fake APIs, the fault server and the tests' own small servers all run on it. Its shutdown
poll is 0.05 s: with the standard library's default (0.5 s) stopping the servers of a test took
longer than the test itself (``faults/test_ladder.py``: 15 s of teardown, 2 s with this poll).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: How often the serving thread looks for a shutdown request (seconds).
POLL_SECONDS = 0.05


class _QuietServer(ThreadingHTTPServer):
    """A threaded server that prints no traceback when a client hangs up mid-answer."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address) -> None:
        pass


class LoopbackServer:
    """Serves *handler* on ``host`` (127.0.0.1 by default) until :meth:`close`; a context
    manager. ``stop`` is set when the server closes, so a handler that waits (a hang, a trickle)
    can end. ``path`` is the prefix :attr:`base_url` adds (a fake API's mount point)."""

    path = ""

    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1"):
        self.stop = threading.Event()
        self.server = _QuietServer((host, 0), handler)
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
        )

    def url(self, path: str = "") -> str:
        """An absolute URL on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def base_url(self) -> str:
        """The server's URL with its :attr:`path` (what a provider's ``baseUrl`` option gets)."""
        return self.url(self.path)

    def start(self):
        """Start serving (once); returns the server."""
        if not self.thread.is_alive():
            self.thread.start()
        return self

    def close(self) -> None:
        """Stop serving: wake any waiting handler, stop the loop, close the socket."""
        self.stop.set()
        if self.thread.is_alive():
            self.server.shutdown()
        self.server.server_close()
        self.thread.join(2)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
