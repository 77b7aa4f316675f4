"""Pages for the browser fetcher's tests: application shells, a scripted site that records every
request (as the page server, or as the environment's proxy, where absolute URLs arrive), and
``pi-web call web_fetch`` driven as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from .loopback import LoopbackServer

PI_WEB = str(Path(sys.executable).parent / "pi-web")
#: Words enough for the extractor to trust a paragraph as main content.
FILLER = (
    "It has enough words to be the main content of an article, which the extractor wants "
    "before it trusts the text."
)


def shell(script: str = "", words: str = "drawn by JavaScript") -> bytes:
    """An application shell: an empty root that its script fills with an article, then runs
    *script*."""
    paragraph = f"<p>This text was {words} in the page. {FILLER}</p>"
    return (
        "<html><head><title>App</title></head><body><div id='root'></div><script>"
        "document.getElementById('root').innerHTML = '<article><h1>Rendered</h1>"
        f"{paragraph * 4}</article>';"
        f"{script}</script></body></html>"
    ).encode()


def reporting_page(script: str) -> bytes:
    """A page whose *script* reports what it found by calling ``report(name, value)``: each
    report becomes a sentence of the article (``<name>: <value>.``)."""
    return (
        "<html><head><title>Report</title></head><body><article><h1>Report</h1>"
        f"<p>The page reports what its scripts could do. {FILLER}</p><div id='out'></div>"
        "</article><script>function report(name, value) { var p = document.createElement('p');"
        "p.textContent = name + ': ' + value + '. ' + "
        f"{json.dumps(FILLER)}; document.getElementById('out').appendChild(p); }}"
        f"{script}</script></body></html>"
    ).encode()


Answer = tuple[int, dict, bytes]


class Site(LoopbackServer):
    """A loopback HTTP server answering each path (or absolute URL, as a proxy) from *routes*:
    an ``(status, headers, body)`` or a function of the request handler returning one; 404
    otherwise. Every request is recorded in :attr:`requests` as ``(method, path)``, every
    request's headers in :attr:`headers`."""

    def __init__(
        self, routes: dict[str, Answer | Callable[..., Answer]] | None = None, tls: Any = None
    ):
        self.routes = dict(routes or {})
        self.requests: list[tuple[str, str]] = []
        self.headers: list[dict] = []
        self.lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with site.lock:
                    site.requests.append((self.command, self.path))
                    site.headers.append(dict(self.headers))
                route = site.routes.get(self.path)
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not here"
                elif callable(route):
                    status, headers, body = route(self)
                else:
                    status, headers, body = route
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(body)
                except OSError:
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = _answer

        super().__init__(Handler)
        if tls is not None:  # HTTPS: each connection's handshake in its own handler thread
            self.server.socket = tls.wrap_socket(
                self.server.socket, server_side=True, do_handshake_on_connect=False
            )
        self.start()

    def asked(self, method: str | None = None) -> list[str]:
        """The paths asked for so far (by *method* only, when given)."""
        with self.lock:
            return [path for verb, path in self.requests if method in (None, verb)]


def html(body: bytes, **headers: str) -> Answer:
    """A 200 HTML answer with *headers* (``Access_Control_Allow_Origin="*"`` style names)."""
    extra = {name.replace("_", "-"): value for name, value in headers.items()}
    return 200, {"Content-Type": "text/html; charset=utf-8", **extra}, body


def redirect(location: str) -> Answer:
    return 302, {"Location": location}, b""


def slow(answer: Answer, seconds: float) -> Callable[..., Answer]:
    """*answer*, given after *seconds*."""

    def later(_handler) -> Answer:
        time.sleep(seconds)
        return answer

    return later


def fetch_json(
    *urls: str,
    provider: str | None = None,
    env: dict | None = None,
    timeout: float = 120,
    preexec_fn: Callable[[], None] | None = None,
) -> dict:
    """``pi-web call web_fetch --json`` of *urls* (fresh; by *provider* when given), as a user
    runs it: the result, with ``elapsed`` (seconds) and ``stderr`` added."""
    arguments: dict = {"urls": list(urls), "fresh": True}
    if provider:
        arguments["provider"] = provider
    started = time.monotonic()
    proc = subprocess.run(
        [PI_WEB, "call", "web_fetch", json.dumps(arguments), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        preexec_fn=preexec_fn,
    )
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"no JSON from pi-web: {proc.stdout!r} {proc.stderr!r}") from None
    result["elapsed"] = time.monotonic() - started
    result["stderr"] = proc.stderr
    return result


def outcomes(result: dict) -> dict[str, str]:
    """Each URL's outcome in a ``fetch_json`` result: ``"ok"`` or its error."""
    return {
        entry["url"]: "ok" if entry["status"] == "ok" else entry.get("error", entry["status"])
        for entry in result["details"]["urls"]
    }


def browser_config(**options) -> dict:
    """A config whose only fetcher is a browser named chrome, with *options*."""
    return {"providers": [{"name": "chrome", "type": "browser", "options": options}]}


def proxy_env(proxy: Site) -> dict[str, str]:
    """The environment that sends every http request through *proxy*."""
    return {
        "HTTP_PROXY": proxy.base_url,
        "http_proxy": proxy.base_url,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def tls_site(routes: dict, folder: Path) -> tuple[Site, Path]:
    """A :class:`Site` serving HTTPS on 127.0.0.1 with a certificate of a private CA made
    here, and the CA's certificate file (for ``REQUESTS_CA_BUNDLE``)."""
    import datetime
    import ipaddress
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def certificate(subject: str, key, issuer: str, signer, *, ca: bool):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False,
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("test CA", ca_key, "test CA", ca_key, ca=True)
    leaf = certificate("127.0.0.1", key, "test CA", ca_key, ca=False)
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(pem))
    (folder / "leaf.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "leaf.pem", folder / "leaf.key")
    return Site(routes, tls=context), folder / "ca.pem"
