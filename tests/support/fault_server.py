"""A loopback HTTP/1.1 server whose answer to each request is scripted: a status, headers and
body, or a misbehaviour (reset, hang, half a body, an endless body, a redirect loop).

``server.script(a, b, c)`` answers the first request with *a*, the second with *b*, and every
later one with *c*. Every request is recorded (method, path, headers, body, time).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from .loopback import LoopbackServer

__all__ = [
    "FaultServer",
    "Hang",
    "Huge",
    "Partial",
    "Redirect",
    "Reply",
    "Reset",
    "Trickle",
    "json_reply",
    "unused_port",
]


class Reply:
    """A complete answer: status, headers, body (bytes or text)."""

    def __init__(
        self,
        status: int = 200,
        body: bytes | str = b"",
        headers: dict | None = None,
        content_type: str | None = "application/json",
    ):
        self.status = status
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.headers = dict(headers or {})
        if content_type and "Content-Type" not in self.headers:
            self.headers["Content-Type"] = content_type

    def perform(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        handler.send_response(self.status)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(self.body)))
        handler.end_headers()
        handler.wfile.write(self.body)


def json_reply(payload: Any, status: int = 200, headers: dict | None = None) -> Reply:
    """A JSON answer."""
    return Reply(status, json.dumps(payload), headers)


class Reset:
    """Read the request, then close the socket abruptly (SO_LINGER 0 sends an RST)."""

    def perform(self, handler, stop) -> None:
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.connection.close()
        handler.close_connection = True


class Hang:
    """Never send the headers (until the server stops or *seconds* pass), then close."""

    def __init__(self, seconds: float = 30.0):
        self.seconds = seconds

    def perform(self, handler, stop) -> None:
        stop.wait(self.seconds)
        handler.close_connection = True


class Partial:
    """Announce *declared* bytes, send *sent* of them, then close the connection."""

    def __init__(
        self, declared: int = 4000, sent: int = 1000, content_type: str = "application/json"
    ):
        self.declared, self.sent, self.content_type = declared, sent, content_type

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.send_header("Content-Length", str(self.declared))
        handler.end_headers()
        handler.wfile.write(b'{"data": [' + b" " * (self.sent - 10))
        handler.wfile.flush()
        handler.connection.shutdown(socket.SHUT_RDWR)
        handler.close_connection = True


class Huge:
    """A body of *size* bytes streamed in 64 KB chunks (the client may stop reading early)."""

    def __init__(
        self,
        size: int = 20 * 1024 * 1024,
        content_type: str = "application/json",
        fill: bytes = b"a",
    ):
        self.size, self.content_type, self.fill = size, content_type, fill

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.send_header("Content-Length", str(self.size))
        handler.end_headers()
        chunk = self.fill * (65536 // len(self.fill))
        sent = 0
        while sent < self.size and not stop.is_set():
            piece = chunk[: self.size - sent]
            handler.wfile.write(piece)
            sent += len(piece)


class Trickle:
    """Headers at once, then one byte every *interval* seconds for ever (until the server stops)."""

    def __init__(self, interval: float = 0.02, content_type: str = "text/plain"):
        self.interval, self.content_type = interval, content_type

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.send_header("Content-Length", "10000000")
        handler.end_headers()
        while not stop.wait(self.interval):
            handler.wfile.write(b"a")
            handler.wfile.flush()
        handler.close_connection = True


class Redirect:
    """A redirect (302 by default) to *location*."""

    def __init__(self, location: str, status: int = 302):
        self.location, self.status = location, status

    def perform(self, handler, stop) -> None:
        handler.send_response(self.status)
        handler.send_header("Location", self.location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()


Action = Reply | Reset | Hang | Partial | Huge | Trickle | Redirect


class FaultServer(LoopbackServer):
    """The loopback server answering each request with the next scripted action."""

    def __init__(self, host: str = "127.0.0.1"):
        self.requests: list[dict] = []
        self._script: list = [Reply(404, "no script", content_type="text/plain")]
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with outer._lock:
                    outer.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": body,
                            "time": time.monotonic(),
                        }
                    )
                    index = len(outer.requests) - 1
                    action = outer._script[min(index, len(outer._script) - 1)]
                action = (
                    action(self) if callable(action) and not hasattr(action, "perform") else action
                )
                try:
                    action.perform(self, outer.stop)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_HEAD = _handle

        super().__init__(Handler, host)

    def script(self, *actions: Any) -> FaultServer:
        """Answer request N with ``actions[N]``; the last action repeats. A callable gets the handler."""
        with self._lock:
            self._script = list(actions)
        return self

    @property
    def count(self) -> int:
        """How many requests arrived."""
        return len(self.requests)


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
