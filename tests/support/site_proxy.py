"""An HTTPS proxy on loopback that answers for the real host names from the fake sites.

A client configured with ``HTTPS_PROXY=http://127.0.0.1:PORT`` and ``REQUESTS_CA_BUNDLE`` set to
:attr:`SiteProxy.ca_file` reaches ``https://api.github.com/...`` (or any host the fake knows) as
it would the real one: a ``CONNECT`` tunnel, TLS with a certificate for that name (signed by a
test CA from ``trustme``), then HTTP/1.1 requests, answered by :meth:`Sites.answer
<tests.support.sites.Sites.answer>`. Nothing leaves the machine. Plain ``http://`` URLs sent to
the proxy in absolute form are answered the same way.
"""

from __future__ import annotations

import gzip
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.sites import Sites

#: The names the proxy holds certificates for.
HOSTS = (
    "github.com",
    "*.github.com",
    "*.githubusercontent.com",
    "pypi.org",
    "*.npmjs.org",
    "*.npmjs.com",
    "*.stackexchange.com",
    "stackoverflow.com",
    "*.algolia.com",
    "*.ycombinator.com",
    "arxiv.org",
    "*.arxiv.org",
    "*.wikipedia.org",
    "*.reddit.com",
    "*.example",
)


def _answer(handler: BaseHTTPRequestHandler, sites: Sites, url: str) -> None:
    answer = sites.answer(url, dict(handler.headers))
    headers = dict(answer.headers)
    body = answer.body
    if headers.pop("X-Gzip", None) and "gzip" in handler.headers.get("Accept-Encoding", ""):
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    handler.send_response(answer.status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class SiteProxy:
    """The proxy: start it, point ``HTTPS_PROXY`` at :attr:`url` and ``REQUESTS_CA_BUNDLE`` at
    :attr:`ca_file`; :attr:`tunnels` lists the hosts that were asked for."""

    def __init__(self, sites: Sites, folder: Path):
        import trustme

        self.sites = sites
        self.tunnels: list[str] = []
        authority = trustme.CA()
        self.ca_file = folder / "test-ca.pem"
        authority.cert_pem.write_to_path(str(self.ca_file))
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert(*HOSTS).configure_cert(tls)
        proxy = self

        class Inner(BaseHTTPRequestHandler):
            """HTTP inside a tunnel to one host."""

            protocol_version = "HTTP/1.1"
            tunnel_host = ""

            def log_message(self, *args):
                pass

            def do_GET(self):
                _answer(self, proxy.sites, f"https://{self.tunnel_host}{self.path}")

        class Outer(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_CONNECT(self):
                host = self.path.rsplit(":", 1)[0]
                proxy.tunnels.append(host)
                self.send_response(200, "Connection established")
                self.end_headers()
                try:
                    wrapped = tls.wrap_socket(self.connection, server_side=True)
                except (ssl.SSLError, OSError):
                    self.close_connection = True
                    return
                handler = type("Tunnel", (Inner,), {"tunnel_host": host})
                try:
                    handler(wrapped, self.client_address, self.server)
                except (OSError, ssl.SSLError):
                    pass
                self.close_connection = True

            def do_GET(self):
                _answer(self, proxy.sites, self.path)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Outer)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """What ``HTTPS_PROXY`` gets."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def environment(self) -> dict[str, str]:
        """The variables a client needs to go through this proxy."""
        return {
            "HTTPS_PROXY": self.url,
            "HTTP_PROXY": self.url,
            "REQUESTS_CA_BUNDLE": str(self.ca_file),
        }

    def start(self) -> SiteProxy:
        self.thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> SiteProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
