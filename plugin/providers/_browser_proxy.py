"""The browser fetcher's way to the network: a guarded HTTP proxy on a loopback port, one per call.

Each call's browser context is given this proxy, and the browser has no other way out (its
launch proxy is a port that leads nowhere). Every request the page makes, by any frame, worker
or redirect hop, arrives here and is sent on by :mod:`requests` through the same guarded
session as the direct fetcher's (the host rule before it and the connected socket after it, the
environment's proxies and CA bundle, ``maxBytes``, the call's deadline). The server's answer is
handed back **exactly**: its status and headers, only the wire's own headers (``Connection``,
``Transfer-Encoding``, ``Content-Encoding`` of a body already decoded, ``Content-Length``)
rewritten. Nothing is added, so the browser's same-origin policy judges what the other server
really sent: no ``Access-Control-Allow-Origin`` it did not send, and CORS preflights go to the
server like every other request. (Answering the page's requests from a Playwright route did
add them: ``route.fulfill`` writes ``Access-Control-Allow-Origin: <page origin>`` and
``Allow-Credentials: true`` into a cross-origin response that lacks them, and with a route set
Playwright answers every preflight itself with a yes.)

HTTPS arrives as ``CONNECT host:port``; the tunnel is answered by this process with a
certificate the browser was told to accept (:func:`tls_identity`, an SPKI pin given at launch)
and read as plain HTTP, so the request goes on through ``requests`` like any other, verified
against the system's or ``REQUESTS_CA_BUNDLE``'s certificates. Nothing is connected onwards
before a whole request has been read and checked: a WebSocket upgrade, a preconnect or a TURN
relay through the proxy reaches no host.

A refused or failed request is answered by closing the connection (the page sees a network
error, as for a blocked request); its reason is kept in :attr:`GuardedProxy.refusals` and
:attr:`GuardedProxy.failures`, by URL, for the page's error message.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = ["GuardedProxy", "tls_identity"]

#: Headers that describe one connection, not the message: never passed on either way.
_HOP_HEADERS = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
#: Also dropped from responses: requests has decoded the body and its length is counted anew.
_DECODED_HEADERS = {"content-encoding", "content-length"}
#: The longest request head read from the browser.
_MAX_HEAD = 256 * 1024
_TLS_HANDSHAKE = 0x16


class _Close(Exception):
    """End this connection without an answer."""


_identity_lock = threading.Lock()
_identity: tuple[ssl.SSLContext, str] | None = None


def tls_identity() -> tuple[ssl.SSLContext, str]:
    """The server TLS context the proxy answers tunnels with, and the base64 SHA-256 of its
    public key for Chromium's ``--ignore-certificate-errors-spki-list``: one EC key and one
    self-signed certificate, made once per process and kept only in memory (the files
    ``ssl`` needs to load them are deleted at once)."""
    global _identity
    with _identity_lock:
        if _identity is None:
            _identity = _make_identity()
        return _identity


def _make_identity() -> tuple[ssl.SSLContext, str]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pi-web-tools browser proxy")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.set_alpn_protocols(["http/1.1"])
    folder = tempfile.mkdtemp(prefix="pi-web-tls-")
    try:
        chain, secret = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        with open(chain, "wb") as out:
            out.write(certificate.public_bytes(serialization.Encoding.PEM))
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
        context.load_cert_chain(chain, secret)
    finally:
        for leftover in ("cert.pem", "key.pem"):
            try:
                os.unlink(os.path.join(folder, leftover))
            except OSError:
                pass
        os.rmdir(folder)
    return context, base64.b64encode(hashlib.sha256(public).digest()).decode("ascii")



def _looked_up(reasons: dict[str, str], url: str) -> str | None:
    """*url*'s entry in *reasons*. The browser sends a URL's ``user@`` part as a header, not in
    the request line the proxy keys its reasons by: *url* is looked up without it too."""
    parts = urlsplit(url)
    bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    for key in dict.fromkeys((url, bare)):
        if key in reasons:
            return reasons[key]
    return None

class GuardedProxy:
    """One call's proxy: listening on a loopback port from construction until :meth:`close`.

    *session* gives the guarded ``requests`` session to send with; *max_bytes* caps each
    response body (and each request body); *deadline* (monotonic) ends every request and, at
    :meth:`close`, every connection; *cancel* (an event) stops them sooner.
    """

    def __init__(
        self,
        session: Callable[[], Any],
        *,
        max_bytes: int,
        deadline: float,
        cancel: threading.Event | None = None,
    ):
        self._session = session
        self.max_bytes = max_bytes
        self.deadline = deadline
        self.cancel = cancel
        #: URL -> why the guard refused it ("refused: ...; set ... to allow it").
        self.refusals: dict[str, str] = {}
        #: URL -> why it could not be fetched ("connection refused", ...).
        self.failures: dict[str, str] = {}
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, name="browser-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        """The proxy's address, for the browser context."""
        return f"http://127.0.0.1:{self.port}"

    def refusal(self, url: str) -> str | None:
        """The guard's refusal of a request to *url* (``refused: ...``), or ``None``."""
        return _looked_up(self.refusals, url)

    def reason(self, url: str) -> str | None:
        """Why a request to *url* got no answer (the guard's refusal first), or ``None``."""
        return self.refusal(url) or _looked_up(self.failures, url)

    def close(self) -> None:
        """Stop listening and end every connection (requests still being sent end by their own
        deadline; their answers go nowhere)."""
        with self._lock:
            self._closed = True
            connections, self._open = list(self._open), set()
        for sock in [self._listener, *connections]:
            _end(sock)

    # -- connections ---------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self._open.add(conn)
            threading.Thread(
                target=self._serve, args=(conn,), name="browser-proxy-conn", daemon=True
            ).start()

    def _remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _serve(self, conn: socket.socket) -> None:
        stream = conn
        try:
            conn.settimeout(max(0.1, self._remaining()))
            reader = conn.makefile("rb")
            head = _read_head(reader)
            if head is None:
                return
            method, target, _version, headers = head
            if method == "CONNECT":
                host, port = _authority(target)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                first = conn.recv(1, socket.MSG_PEEK)
                if first and first[0] == _TLS_HANDSHAKE:
                    context, _pin = tls_identity()
                    stream = context.wrap_socket(conn, server_side=True)
                    with self._lock:
                        self._open.add(stream)
                    origin = f"https://{_host_port(host, port, 443)}"
                else:  # a plain-text tunnel (a ws:// WebSocket): read as plain HTTP
                    origin = f"http://{_host_port(host, port, 80)}"
                reader = stream.makefile("rb")
                head = _read_head(reader)
            else:
                origin = None
            while head is not None:
                method, target, _version, headers = head
                url = origin + target if origin is not None and target.startswith("/") else target
                keep = self._exchange(stream, reader, method, url, headers)
                if not keep:
                    return
                head = _read_head(reader)
        except (_Close, OSError, ValueError, ssl.SSLError, http.client.HTTPException):
            return
        finally:
            with self._lock:
                self._open.discard(conn)
                self._open.discard(stream)
            for sock in {conn, stream}:
                _end(sock)

    def _exchange(
        self, stream: socket.socket, reader: Any, method: str, url: str, headers: Any
    ) -> bool:
        """Send one request of the page on and write its answer back; whether the connection
        may carry another. Raises :class:`_Close` to end it without an answer."""
        from ..api._http_client import network_error_message, read_body, send, socket_timeouts
        from ..api._netguard import RefusedAddress

        if headers.get("Upgrade") or headers.get("Transfer-Encoding"):
            # A WebSocket (this process cannot carry it) or a streamed upload: refused.
            self.refusals[url] = "refused: WebSockets and streamed uploads are not carried"
            raise _Close
        if _is_favicon(url, headers):
            # The browser's own fetch of the site's icon, after the page loads: no page text
            # needs it, and the site need not see it. Answered here, with nothing.
            stream.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            return True
        length = int(headers.get("Content-Length") or 0)
        if length < 0 or length > self.max_bytes:
            raise _Close
        body = reader.read(length) if length else None
        sent = _request_headers(headers)
        remaining = self._remaining()
        if remaining <= 0:
            raise _Close
        try:
            response = send(
                self._session(),
                method,
                url,
                cancel=self.cancel,
                deadline=self.deadline,
                headers=sent,
                data=body,
                allow_redirects=False,
                stream=True,
                timeout=socket_timeouts(remaining),
            )
        except RefusedAddress as exc:
            self.refusals[url] = str(exc)
            raise _Close from None
        except (TimeoutError, InterruptedError):
            self.failures[url] = "timed out"
            raise _Close from None
        except Exception as exc:  # noqa: BLE001 - any failure of the request is the page's
            self.failures[url] = network_error_message(exc)
            raise _Close from None
        try:
            location = response.headers.get("Location") if response.is_redirect else None
            if location:
                scheme = urlsplit(urljoin(url, location)).scheme.lower()
                if scheme not in ("http", "https"):
                    self.refusals[url] = (
                        f"refused: the page redirected to a {scheme}: URL; only http and "
                        "https pages can be read"
                    )
                    raise _Close
            no_body = (
                method == "HEAD"
                or response.status_code in (204, 304)
                or (response.status_code < 200)
            )
            content = b""
            if not no_body:
                try:
                    content, _cut = read_body(
                        response,
                        max_bytes=self.max_bytes,
                        deadline=self.deadline,
                        cancel=self.cancel,
                    )
                except Exception as exc:  # noqa: BLE001 - a body that broke off or ran late
                    self.failures[url] = (
                        "timed out"
                        if isinstance(exc, TimeoutError | InterruptedError)
                        else network_error_message(exc)
                    )
                    raise _Close from None
            stream.sendall(_response_head(response, content, no_body) + content)
        finally:
            response.close()
        return (headers.get("Connection") or "").lower() != "close"


def _end(sock: socket.socket) -> None:
    """Close *sock* now, for the peer too (a file made from it would keep it open)."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def _read_head(reader: Any) -> tuple[str, str, str, Any] | None:
    """The next request's (method, target, version, headers), or ``None`` at end of input."""
    line = reader.readline(_MAX_HEAD)
    while line in (b"\r\n", b"\n"):  # tolerated before a request line
        line = reader.readline(_MAX_HEAD)
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise _Close
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise _Close
    headers = http.client.parse_headers(reader)
    return parts[0].upper(), parts[1], parts[2], headers


def _is_favicon(url: str, headers: Any) -> bool:
    """Whether this is a request for the site's icon as an image (which the browser makes by
    itself once a page has loaded)."""
    return urlsplit(url).path == "/favicon.ico" and "image/" in (headers.get("Accept") or "")


def _authority(target: str) -> tuple[str, int]:
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise _Close
    return host.strip("[]"), int(port)


def _host_port(host: str, port: int, default: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port == default else f"{shown}:{port}"


def _request_headers(headers: Any) -> dict[str, str]:
    """The page's request headers to send on: the connection's own dropped, the encodings asked
    for those requests can decode."""
    from urllib3.util.request import ACCEPT_ENCODING

    sent: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in _HOP_HEADERS or lower in ("host", "content-length"):
            continue
        sent[name] = f"{sent[name]}, {value}" if name in sent else value
    if any(name.lower() == "accept-encoding" for name in sent):
        sent = {k: v for k, v in sent.items() if k.lower() != "accept-encoding"}
        sent["Accept-Encoding"] = ACCEPT_ENCODING
    return sent


def _response_head(response: Any, content: bytes, no_body: bool) -> bytes:
    """The answer's status line and headers exactly as the server sent them (each repeated
    header, Set-Cookie too, on its own line), less the wire's own; the body's new length."""
    reason = (response.reason or http.client.responses.get(response.status_code, "")).strip()
    lines = [f"HTTP/1.1 {response.status_code} {reason}".rstrip()]
    original_length = None
    for name, value in response.raw.headers.items():
        lower = name.lower()
        if lower == "content-length":
            original_length = value
        if lower in _HOP_HEADERS or lower in _DECODED_HEADERS:
            continue
        lines.append(f"{name}: {value}")
    if no_body:
        if original_length is not None and response.headers.get("Content-Encoding") is None:
            lines.append(f"Content-Length: {original_length}")
    else:
        lines.append(f"Content-Length: {len(content)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
