"""A loopback fake of Kagi, Exa and plain web pages with a fixed latency, counting connections."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class FakeAPI:
    """Serves ``/api/v0/search`` (Kagi), ``/search`` (Exa), ``/page/N`` (text), ``/html/N``
    (an article) and any path of *pages* (``{path: (body, content type)}``) after *latency*
    seconds."""

    def __init__(self, latency: float, pages: dict[str, tuple[bytes, str]] | None = None):
        self.latency = latency
        self.pages = dict(pages or {})
        self.connections = 0
        #: Requests per path (``/api/v0/search``, ``/page/3``).
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls skewing the baseline

            def setup(self):
                super().setup()
                with fake._lock:
                    fake.connections += 1

            def log_message(self, *args):
                pass

            def _reply(self, body: bytes, content_type: str) -> None:
                time.sleep(fake.latency)
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                parts = urlsplit(self.path)
                with fake._lock:
                    fake.requests[parts.path] += 1
                if parts.path in fake.pages:
                    self._reply(*fake.pages[parts.path])
                elif parts.path == "/api/v0/search":
                    q = parse_qs(parts.query).get("q", ["x"])[0]
                    data = [
                        {
                            "t": 0,
                            "url": f"https://r.example/{i}",
                            "title": f"{q} {i}",
                            "snippet": f"About <b>{q}</b> {i}",
                        }
                        for i in range(10)
                    ]
                    self._reply(
                        json.dumps({"meta": {"api_balance": 1.0}, "data": data}).encode(),
                        "application/json",
                    )
                elif parts.path.startswith("/html/"):
                    body = "".join(
                        f"<p>Paragraph {i} of an article served for the load check, with words.</p>"
                        for i in range(60)
                    )
                    page = (
                        f"<html><head><title>Page {parts.path}</title></head><body><nav>menu</nav>"
                        f"<article><h1>Heading</h1>{body}</article></body></html>"
                    )
                    self._reply(page.encode(), "text/html; charset=utf-8")
                elif parts.path.startswith("/page/"):
                    text = "\n".join(f"Line {i} of a plain page." for i in range(200))
                    self._reply(text.encode(), "text/plain; charset=utf-8")
                else:
                    self._reply(b"{}", "application/json")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                data = [
                    {
                        "id": f"https://r.example/{i}",
                        "url": f"https://r.example/{i}",
                        "title": f"R {i}",
                        "publishedDate": "2026-01-01",
                    }
                    for i in range(5)
                ]
                self._reply(
                    json.dumps({"requestId": "b", "results": data}).encode(), "application/json"
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the fake."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
