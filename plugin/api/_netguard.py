"""The network guard: which hosts a request from this machine may reach.

One host rule, :func:`host_problem`, judges every host: private, loopback, link-local, CGNAT,
multicast, reserved and cloud-metadata addresses, ``localhost`` names and single-label names
(``http://intranet/``) are refused unless the user allows private networks. Every fetcher passes
it the same way: the hand-off check before a URL is given to any fetcher
(:mod:`pi_web_tools.runtime.run`), and on the wire :func:`guarded_adapter`, whose ``send`` runs
:func:`check_request` on **every request** a session makes (each redirect hop, whoever follows
it; each request a rendered page makes, through the browser fetcher's proxy) and whose sockets
check the connected peer again, so a DNS answer that changes in between (rebinding) cannot reach
a private address either.

A new fetcher or site reader gets all of it by making its session with
:func:`guarded_session` (or mounting :func:`guarded_adapter`): a refused request raises
:class:`RefusedAddress`, whose message says what was refused and which option allows it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import Any

import requests
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = [
    "ALLOW_HINT",
    "RefusedAddress",
    "allow_hint",
    "check_request",
    "classify_address",
    "guarded_adapter",
    "guarded_session",
    "host_problem",
    "host_refusal",
    "is_proxied",
    "literal_address",
    "request_target",
    "resolve_host",
]


def allow_hint(provider: str = "direct") -> str:
    """How the user lets *provider* reach private networks, for a refusal message."""
    return f'set "allowPrivateNetwork": true in the {provider} provider\'s options to allow it'


ALLOW_HINT = allow_hint("direct")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def classify_address(ip: IPAddress) -> str | None:
    """Why *ip* may not be fetched (``"a private address"``, ...), or ``None`` when it is public."""
    if ip in _METADATA:
        return "a cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return classify_address(embedded)
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_link_local:
        return "a link-local address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return "a shared (CGNAT) address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_reserved:
        return "a reserved address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global:
        return "a non-public address"
    return None


def _literal_address(host: str) -> IPAddress | None:
    """*host* as an IP address when it is one (also ``127.1``-style IPv4 forms), else ``None``."""
    host = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if re.fullmatch(r"[0-9a-fA-FxX.]+", host) and re.match(r"[0-9]", host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def literal_address(host: str) -> IPAddress | None:
    """*host* as an IP address when it is written as one (``127.1``-style forms too)."""
    return _literal_address(host.lower().rstrip("."))


def resolve_host(host: str, port: int) -> list[str]:
    """Every address *host* resolves to (raises ``socket.gaierror`` when it does not resolve)."""
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def host_problem(host: str, port: int, *, resolve: bool = True) -> str | None:
    """The host rule: why *host* is not a public host (``"10.0.0.5 is a private address"``,
    ``"intranet is a single-label name (an intranet host)"``, ``"wiki.corp resolves to a private
    address (10.0.0.5)"``), or ``None``.

    IP literals (``127.1``-style forms too), ``localhost`` names and single-label names are
    judged as written; other names, with *resolve*, by every address they resolve to (raises
    ``OSError`` when the name does not resolve). Through a proxy, pass ``resolve=False``: the
    proxy resolves names itself, but a single-label name still never reaches it (a proxy inside
    a company resolves intranet hosts)."""
    host = host.lower().rstrip(".")
    literal = _literal_address(host)
    if literal is not None:
        reason = classify_address(literal)
        return f"{host} is {reason}" if reason else None
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is a loopback address"
    if "." not in host:
        return f"{host} is a single-label name (an intranet host)"
    if not resolve:
        return None
    try:
        addresses = resolve_host(host, port)
    except UnicodeError as exc:
        raise OSError(str(exc)) from None
    for address in addresses:
        ip = _literal_address(address)
        reason = classify_address(ip) if ip is not None else "an unrecognized address"
        if reason:
            return f"{host} resolves to {reason} ({address})"
    return None


def host_refusal(
    host: str, port: int, *, proxied: bool = False, hint: str = ALLOW_HINT
) -> str | None:
    """Why *host* may not be fetched, or ``None``.

    Through a proxy, names are not resolved here (the proxy resolves them); literal addresses,
    ``localhost`` and single-label names are still refused.
    """
    try:
        reason = host_problem(host, port, resolve=not proxied)
    except OSError:
        return "could not resolve the host name"
    return f"refused: {reason}; {hint}" if reason else None


def request_target(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of *url* exactly as requests will send it: prepared by requests
    (IDNA, quoting), then parsed by urllib3, which opens the connection or names the URL to a
    proxy. ``urlsplit`` can disagree: it reads ``http://127.0.0.1:8080\\@example.com/`` as
    ``example.com``, while requests sends ``http://127.0.0.1:8080/%5C@example.com/``.

    Raises ``ValueError`` when requests would refuse the URL.
    """
    prepared = requests.PreparedRequest()
    try:
        prepared.prepare_url(url, None)
        parts = urllib3.util.parse_url(prepared.url or "")
    except (
        requests.exceptions.RequestException,
        urllib3.exceptions.HTTPError,
        UnicodeError,
    ) as exc:
        raise ValueError(str(exc)) from None
    scheme = (parts.scheme or "").lower()
    if not parts.host:
        raise ValueError("no host")
    return scheme, parts.host, parts.port or (443 if scheme == "https" else 80)


class RefusedAddress(Exception):
    """A request the network guard refused: its message says what and which option allows it
    (``refused: 10.0.0.5 is a private address; set "allowPrivateNetwork": ...``); *reason* is
    the first half alone."""

    def __init__(self, reason: str, hint: str = ALLOW_HINT):
        super().__init__(f"refused: {reason}; {hint}")
        self.reason = reason
        self.hint = hint


def check_request(url: str, proxies: Any = None, *, hint: str = ALLOW_HINT) -> None:
    """Raise :class:`RefusedAddress` unless a request to *url* may go out: an http(s) URL whose
    host, as requests sends it, passes :func:`host_problem`, resolved here unless one of
    *proxies* (as requests merged them from the environment) carries the request. A name that
    does not resolve passes (the connection then fails by itself, nothing private reached)."""
    try:
        scheme, host, port = request_target(url)
    except ValueError:
        raise RefusedAddress("the URL cannot be parsed", hint) from None
    if scheme not in ("http", "https"):
        raise RefusedAddress(
            f"only http and https URLs can be fetched (got {scheme or 'no'} scheme)", hint
        )
    proxied = bool(proxies) and requests.utils.select_proxy(url, proxies) is not None
    try:
        reason = host_problem(host, port, resolve=not proxied)
    except OSError:
        return
    if reason:
        raise RefusedAddress(reason, hint)


def _check_peer(sock: socket.socket, host: str, hint: str) -> None:
    """Refuse a connection whose peer is private (catches DNS answers that changed since the
    pre-check, so a rebinding name cannot slip through)."""
    try:
        peer = sock.getpeername()[0]
        reason = classify_address(ipaddress.ip_address(peer.split("%", 1)[0]))
    except (OSError, ValueError):
        peer, reason = "?", "an unrecognized address"
    if reason:
        sock.close()
        raise RefusedAddress(f"{host} connected to {reason} ({peer})", hint)


def guarded_adapter(*, hint: str = ALLOW_HINT, **kwargs: Any) -> requests.adapters.HTTPAdapter:
    """An adapter (``requests.adapters.HTTPAdapter`` arguments in *kwargs*) that sends no
    request :func:`check_request` refuses (every hop of a redirect chain comes through here,
    whoever follows it), and whose direct (non-proxy) connections check the connected peer.
    Refusals raise :class:`RefusedAddress` ending with *hint*."""

    class GuardedHTTPConnection(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            _check_peer(sock, self.host, hint)
            return sock

    class GuardedHTTPSConnection(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            _check_peer(sock, self.host, hint)
            return sock

    class GuardedHTTPPool(HTTPConnectionPool):
        ConnectionCls = GuardedHTTPConnection

    class GuardedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPSConnection

    class GuardedAdapter(requests.adapters.HTTPAdapter):
        def send(
            self,
            request: Any,
            stream: bool = False,
            timeout: Any = None,
            verify: Any = True,
            cert: Any = None,
            proxies: Any = None,
        ) -> Any:
            check_request(request.url, proxies, hint=hint)
            return super().send(request, stream, timeout, verify, cert, proxies)

        def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
            super().init_poolmanager(*args, **pool_kwargs)
            # Proxied requests use a separate ProxyManager: the proxy resolves names itself.
            self.poolmanager.pool_classes_by_scheme = {
                "http": GuardedHTTPPool,
                "https": GuardedHTTPSPool,
            }

    return GuardedAdapter(**kwargs)


def guarded_session(*, hint: str = ALLOW_HINT, **kwargs: Any) -> requests.Session:
    """A session made the one way (:func:`pi_web_tools.api._http_client.new_session`, *kwargs*
    passed on) on a :func:`guarded_adapter`: nothing it sends reaches a host the rule refuses."""
    from ._http_client import new_session

    return new_session(adapter=guarded_adapter(hint=hint), **kwargs)


def is_proxied(url: str) -> bool:
    """Whether a proxy from the environment applies to *url*."""
    proxies = requests.utils.get_environ_proxies(url)
    return bool(proxies) and requests.utils.select_proxy(url, proxies) is not None
