"""One loopback web server for the tests that fetch pages: routes of path to an answer, every
request counted. A route's answer is ``(status, content type, body)``, or a function of the
query string that returns one (to answer slowly, or differently per request)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Union

__all__ = ["Answer", "PageServer", "after"]

Answer = tuple[int, str, Union[bytes, str]]
Route = Union[Answer, Callable[[str], Answer]]


def after(seconds: float, answer: Answer) -> Callable[[str], Answer]:
    """A route that answers *answer* after *seconds* (``?s=N`` in the URL overrides them)."""

    def answer_later(query: str) -> Answer:
        wait = query.rpartition("s=")[2] if "s=" in query else ""
        time.sleep(float(wait or seconds))
        return answer

    return answer_later


class PageServer:
    """A loopback HTTP server of *routes*; ``url`` is its root, ``hits`` counts each path."""

    def __init__(self, routes: dict[str, Route] | None = None):
        site = self
        self.routes: dict[str, Route] = dict(routes or {})
        self.hits: Counter = Counter()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path, _, query = self.path.partition("?")
                site.hits[path] += 1
                route = site.routes.get(path)
                if route is None:
                    self.send_error(404)
                    return
                status, kind, body = route(query) if callable(route) else route
                data = body.encode("utf-8") if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()
