"""Direct: fetch pages straight from the web with no API key, the keyless default of
``web_fetch``.

Each URL is fetched on its own (a few at a time), redirects are followed by hand so every hop's
address is checked, bodies are capped while streaming, and HTML becomes main-content Markdown.
"""

from __future__ import annotations

import codecs
import html
import ipaddress
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.cookiejar import DefaultCookiePolicy
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from attrs import frozen
from pi_hostspec.truncate import format_size

from ..hookspecs import hookimpl
from ..http import (
    MAX_RETRIES,
    RETRY_STATUSES,
    USER_AGENT,
    install_log_filter,
    is_retryable,
    network_error_message,
    read_body,
    run_interruptible,
    send,
    socket_timeouts,
    wait_before_retry,
)
from .base import (
    DEFAULT_TEXT_MAX_CHARACTERS,
    CommonOptions,
    FetchedPage,
    FetchRequest,
    FetchResponse,
    option,
)

__all__ = [
    "DirectOptions",
    "DirectProvider",
    "classify_address",
    "host_refusal",
    "html_to_text",
    "resolve_host",
]

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
MAX_URLS = 20  # web_fetch's schema allows at most 20 URLs; all are fetched at once
MIN_EXTRACTED = 200
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5"
ALLOW_HINT = 'set "allowPrivateNetwork": true in the direct provider\'s options to allow it'

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-ndjson",
}


def _at_least_one(value: int) -> str | None:
    return None if value >= 1 else "must be at least 1"


@frozen(kw_only=True)
class DirectOptions(CommonOptions):
    """Options of a ``direct`` fetcher."""

    max_bytes: int = option(DEFAULT_MAX_BYTES, key="maxBytes", kind="integer", check=_at_least_one)
    allow_private_network: bool = option(False, key="allowPrivateNetwork", kind="boolean")


# --- address safety -------------------------------------------------------------------------


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


def resolve_host(host: str, port: int) -> list[str]:
    """Every address *host* resolves to (raises ``socket.gaierror`` when it does not resolve)."""
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [info[4][0] for info in infos]


def host_refusal(host: str, port: int, *, proxied: bool = False) -> str | None:
    """Why *host* may not be fetched, or ``None``.

    Through a proxy only the literal host is checked (IP literals, ``localhost``): the proxy
    resolves names itself.
    """
    host = host.lower().rstrip(".")
    literal = _literal_address(host)
    if literal is not None:
        reason = classify_address(literal)
        return f"refused: {host} is {reason}; {ALLOW_HINT}" if reason else None
    if host == "localhost" or host.endswith(".localhost"):
        return f"refused: {host} is a loopback address; {ALLOW_HINT}"
    if proxied:
        return None
    try:
        addresses = resolve_host(host, port)
    except (OSError, UnicodeError):
        return "could not resolve the host name"
    for address in addresses:
        ip = _literal_address(address)
        reason = classify_address(ip) if ip is not None else "an unrecognized address"
        if reason:
            return f"refused: {host} resolves to {reason} ({address}); {ALLOW_HINT}"
    return None


class RefusedAddress(Exception):
    """The socket connected to an address the direct fetcher may not reach."""


def _check_peer(sock: socket.socket, host: str) -> None:
    """Refuse a connection whose peer is private (catches DNS answers that changed since the
    pre-check, so a rebinding name cannot slip through)."""
    try:
        peer = sock.getpeername()[0]
        reason = classify_address(ipaddress.ip_address(peer.split("%", 1)[0]))
    except (OSError, ValueError):
        peer, reason = "?", "an unrecognized address"
    if reason:
        sock.close()
        raise RefusedAddress(f"refused: {host} connected to {reason} ({peer}); {ALLOW_HINT}")


def _guarded_adapter(**kwargs: Any) -> requests.adapters.HTTPAdapter:
    """An adapter whose direct (non-proxy) connections pass :func:`_check_peer` on connect."""
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class GuardedHTTPConnection(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            _check_peer(sock, self.host)
            return sock

    class GuardedHTTPSConnection(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            _check_peer(sock, self.host)
            return sock

    class GuardedHTTPPool(HTTPConnectionPool):
        ConnectionCls = GuardedHTTPConnection

    class GuardedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPSConnection

    class GuardedAdapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
            super().init_poolmanager(*args, **pool_kwargs)
            # Proxied requests use a separate ProxyManager: the proxy resolves names itself.
            self.poolmanager.pool_classes_by_scheme = {
                "http": GuardedHTTPPool,
                "https": GuardedHTTPSPool,
            }

    return GuardedAdapter(**kwargs)


def _proxied(url: str) -> bool:
    """Whether a proxy from the environment applies to *url*."""
    proxies = requests.utils.get_environ_proxies(url)
    return bool(proxies) and requests.utils.select_proxy(url, proxies) is not None


# --- decoding and extraction ----------------------------------------------------------------

_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9._:-]+)""", re.IGNORECASE)
# Every pattern below runs in linear time on hostile pages: no lazy ".*?" spans (a page of
# unclosed "<script>" tags made them quadratic), and tag bodies stop at the next "<".
_HIDDEN_OPENER = re.compile(r"<!--|<(script|style|noscript|template|svg|head)\b", re.IGNORECASE)
_BLOCK = re.compile(
    r"<\s*/?\s*(p|div|br|li|ul|ol|tr|h[1-6]|section|article|header|footer|nav|table|"
    r"blockquote|pre|hr|dd|dt|main|aside|figure|figcaption)\b[^<>]*>",
    re.IGNORECASE,
)
_TAG = re.compile(r"<[^<>]*>")


def _codec(name: str | None) -> str | None:
    """A Python codec for a charset label; Latin-1 and ASCII labels mean windows-1252 (as browsers do)."""
    if not name:
        return None
    try:
        found = codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None
    return "cp1252" if found in ("iso8859-1", "ascii") else found


def _charset(header_charset: str | None, body: bytes) -> str:
    """The body's encoding: BOM, then the header, then ``<meta>`` / XML declaration, else UTF-8."""
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    found = _codec(header_charset)
    if found:
        return found
    head = body[:2048]
    match = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    return (_codec(match.group(1).decode("ascii")) if match else None) or "utf-8"


def _clean_line_text(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _drop_hidden(page: str) -> str:
    """*page* without comments and script/style/head/... elements, in one linear pass.

    An element that is never closed hides the rest of the page, as it does in a browser.
    """
    lower = page.lower()
    kept: list[str] = []
    position = 0
    while True:
        opener = _HIDDEN_OPENER.search(page, position)
        if opener is None:
            kept.append(page[position:])
            break
        kept.append(page[position : opener.start()])
        kept.append(" ")
        if opener.group(0) == "<!--":
            end = lower.find("-->", opener.end())
            position = end + 3
        else:
            end = lower.find(f"</{opener.group(1).lower()}", opener.end())
            position = lower.find(">", end) + 1 if end != -1 else 0
        if end == -1 or position <= 0:
            break
    return "".join(kept)


def html_to_text(page: str) -> str:
    """The whole page as plain text: scripts and styles dropped, tags stripped, entities unescaped."""
    text = _drop_hidden(page)
    text = _BLOCK.sub("\n", text)
    text = html.unescape(_TAG.sub(" ", text)).replace("\xa0", " ")
    return _clean_line_text(text)


def _title(page: str) -> str | None:
    """The text of the first ``<title>`` element (found with plain searches: linear time)."""
    lower = page.lower()
    start = lower.find("<title")
    opened = lower.find(">", start) if start != -1 else -1
    end = lower.find("</title", opened) if opened != -1 else -1
    if end == -1:
        return None
    title = " ".join(html.unescape(_TAG.sub(" ", page[opened + 1 : end])).split())
    return title or None


def _extract_html(page: str, url: str) -> tuple[str | None, str, list[str]]:
    """(title, text, notes) for an HTML page: main-content Markdown, or whole-page text."""
    title = _title(page)
    whole = html_to_text(page)
    notes: list[str] = []
    try:
        import trafilatura  # imported here: it is slow to import and an optional extra
    except ImportError:
        notes.append("HTML shown as plain text (install pi-web-tools[extract] for Markdown)")
        return title, whole, notes
    install_log_filter()  # trafilatura logs the page URL, which may carry a key
    try:
        extracted = trafilatura.extract(
            page,
            output_format="markdown",
            include_links=True,
            include_tables=True,
            favor_recall=True,
            url=url,
        )
    except Exception:  # noqa: BLE001 - a parser failure must not lose the page
        extracted = None
    if title is None:
        try:
            from trafilatura.metadata import extract_metadata

            meta = extract_metadata(page)
            title = meta.title if meta is not None and meta.title else None
        except Exception:  # noqa: BLE001
            title = None
    extracted = (extracted or "").strip()
    if not extracted or (len(extracted) < MIN_EXTRACTED and len(whole) >= 3 * len(extracted)):
        if whole and extracted != whole:
            notes.append(
                "main-content extraction found almost nothing; showing the whole page text"
            )
        return title, whole, notes
    return title, extracted, notes


def _reason(status: int, given: str | None) -> str:
    """The standard reason phrase for *status* (servers spell it variously), else the server's."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return given or ""


def _kind(mime: str) -> str | None:
    """``html``, ``text``, ``sniff`` (no type given) or ``None`` (unsupported)."""
    if not mime:
        return "sniff"
    if mime in _HTML_TYPES:
        return "html"
    if mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return "text"
    return None


# --- the provider ---------------------------------------------------------------------------


class _Failure(Exception):
    """One URL's failure, carried out of the hop loop; *retryable* ones are tried again."""

    def __init__(
        self, message: str, *, retryable: bool = False, retry_after: str | None = None, **facts: Any
    ):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.facts = facts


class DirectProvider:
    """A keyless fetcher that GETs each URL itself."""

    capabilities = frozenset({"fetch"})
    search_filters = frozenset()
    fetch_modes = frozenset({"text"})

    def __init__(self, name: str = "direct", options: DirectOptions | None = None):
        self.name = name
        self.options = options or DirectOptions()
        self.timeout = self.options.timeout_seconds or DEFAULT_TIMEOUT
        self._session: requests.Session | None = None
        self._session_lock = threading.Lock()

    def close(self) -> None:
        """Close the session and its pooled connections (a new one opens on next use)."""
        with self._session_lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()

    def __repr__(self) -> str:
        return (
            f"DirectProvider(name={self.name!r}, max_bytes={self.options.max_bytes}, "
            f"allow_private_network={self.options.allow_private_network})"
        )

    @property
    def session(self) -> requests.Session:
        """One session for every fetch (proxies and CA bundle from the environment; no cookie jar)."""
        with self._session_lock:
            if self._session is None:
                session = requests.Session()
                make = (
                    requests.adapters.HTTPAdapter
                    if self.options.allow_private_network
                    else _guarded_adapter
                )
                adapter = make(pool_connections=8, pool_maxsize=MAX_URLS, max_retries=0)
                session.mount("https://", adapter)
                session.mount("http://", adapter)
                # Cookies never outlive one URL's redirect chain (see _fetch_one).
                session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
                session.headers["User-Agent"] = USER_AGENT
                session.headers["Accept"] = ACCEPT
                self._session = session
            return self._session

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Fetch every URL concurrently; each becomes a page, failures included, in request order."""
        urls = list(request.urls)
        if not urls:
            return FetchResponse(pages=())
        with ThreadPoolExecutor(
            max_workers=min(MAX_URLS, len(urls)), thread_name_prefix="direct-fetch"
        ) as pool:
            pages = list(pool.map(lambda url: self._fetch_safely(url, request, ctx), urls))
        return FetchResponse(pages=tuple(pages))

    def _fetch_safely(self, url: str, request: FetchRequest, ctx: Any) -> FetchedPage:
        """One URL's page or failure; 429/502/503/504 and broken connections are retried at
        most twice, with backoff, within the same timeout (as the API providers do)."""
        deadline = time.monotonic() + self.timeout
        cancel = getattr(ctx, "cancel", None)
        attempt = 0
        while True:
            try:
                return self._fetch_one(url, request, ctx, deadline)
            except _Failure as failure:
                try:
                    again = (
                        failure.retryable
                        and attempt < MAX_RETRIES
                        and wait_before_retry(attempt, failure.retry_after, deadline, cancel)
                    )
                except InterruptedError:
                    return FetchedPage(url=url, ok=False, error="cancelled", **failure.facts)
                if again:
                    attempt += 1
                    continue
                return FetchedPage(url=url, ok=False, error=failure.message, **failure.facts)
            except Exception as exc:  # noqa: BLE001 - one URL's bug must not sink the others
                return FetchedPage(
                    url=url, ok=False, error=f"unexpected error: {type(exc).__name__}"
                )

    def _refusal(self, url: str) -> str | None:
        """Why *url* may not be fetched (scheme, host, address), or ``None``."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return f"refused: only http and https URLs can be fetched (got {parts.scheme or 'no'} scheme)"
        try:
            host = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return "invalid URL (bad host or port)"
        if not host:
            return "invalid URL (no host)"
        if self.options.allow_private_network:
            return None
        return host_refusal(host, port, proxied=_proxied(url))

    def _fetch_one(self, url: str, request: FetchRequest, ctx: Any, deadline: float) -> FetchedPage:
        cancel = getattr(ctx, "cancel", None)
        cookies = requests.cookies.RequestsCookieJar()
        visited = {url}
        current = url
        hops = 0
        while True:
            facts = {"final_url": current if current != url else None}
            if cancel is not None and cancel.is_set():
                raise _Failure("cancelled", **facts)
            try:  # the address check resolves the name: bounded like the request itself
                refusal = run_interruptible(
                    lambda url=current: self._refusal(url), cancel=cancel, deadline=deadline
                )
            except TimeoutError:
                raise _Failure(
                    f"timed out after {self.timeout:g} s resolving the host", **facts
                ) from None
            except InterruptedError:
                raise _Failure("cancelled", **facts) from None
            if refusal:
                raise _Failure(refusal, **facts)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Failure(f"timed out after {self.timeout:g} s", **facts)
            try:
                response = send(
                    self.session,
                    "GET",
                    current,
                    cancel=cancel,
                    deadline=deadline,
                    stream=True,
                    allow_redirects=False,
                    cookies=cookies,
                    timeout=socket_timeouts(remaining),
                )
            except requests.exceptions.RequestException as exc:
                raise _Failure(
                    network_error_message(exc), retryable=is_retryable(exc), **facts
                ) from None
            except RefusedAddress as exc:
                raise _Failure(str(exc), **facts) from None
            except TimeoutError:
                raise _Failure(
                    f"timed out after {self.timeout:g} s waiting for the response", **facts
                ) from None
            except InterruptedError:
                raise _Failure("cancelled", **facts) from None
            try:
                cookies.update(response.cookies)
                target = self.session.get_redirect_target(response)
                if target:
                    following = requests.utils.requote_uri(urljoin(current, target))
                    if following in visited:
                        raise _Failure(
                            f"redirect loop at {following}", status=response.status_code, **facts
                        )
                    hops += 1
                    if hops > MAX_REDIRECTS:
                        raise _Failure(
                            f"too many redirects (more than {MAX_REDIRECTS})",
                            status=response.status_code,
                            **facts,
                        )
                    visited.add(following)
                    current = following
                    continue
                return self._read(url, current, response, request, deadline, cancel)
            finally:
                response.close()

    def _read(
        self,
        url: str,
        final_url: str,
        response: requests.Response,
        request: FetchRequest,
        deadline: float,
        cancel: threading.Event | None,
    ) -> FetchedPage:
        """Turn a final (non-redirect) response into a page, or raise :class:`_Failure`."""
        status = response.status_code
        raw_type = response.headers.get("Content-Type", "")
        mime = raw_type.split(";", 1)[0].strip().lower()
        facts: dict = {
            "final_url": final_url if final_url != url else None,
            "status": status,
            "content_type": mime or None,
        }
        if not 200 <= status < 300:
            raise _Failure(
                f"HTTP {status} {_reason(status, response.reason)}".rstrip(),
                retryable=status in RETRY_STATUSES,
                retry_after=response.headers.get("Retry-After"),
                **facts,
            )
        kind = _kind(mime)
        if kind is None:
            raise _Failure(f"unsupported content type {mime}", **facts)
        try:
            body, too_big = read_body(
                response, max_bytes=self.options.max_bytes, deadline=deadline, cancel=cancel
            )
        except TimeoutError:
            raise _Failure(
                f"timed out after {self.timeout:g} s while reading the response", **facts
            ) from None
        except InterruptedError:
            raise _Failure("cancelled", **facts) from None
        except requests.exceptions.RequestException as exc:
            raise _Failure(network_error_message(exc), **facts) from None

        notes: list[str] = []
        if too_big:
            notes.append(f"Stopped reading after {format_size(self.options.max_bytes)} (maxBytes)")
        if kind == "sniff":
            kind = self._sniff(body)
            if kind is None:
                raise _Failure(
                    "unsupported content type (none given, and the body is not text)", **facts
                )
        match = _HEADER_CHARSET.search(raw_type)
        text = body.decode(_charset(match.group(1) if match else None, body), errors="replace")
        title = None
        if kind == "html":
            title, text, extra = _extract_html(text, final_url)
            notes += extra
        limit = request.text_max_characters or DEFAULT_TEXT_MAX_CHARACTERS
        if len(text) > limit:
            text = text[:limit]
            notes.append(f"text cut at {limit} characters; pass text_max_characters for more")
        return FetchedPage(url=url, ok=True, title=title, text=text, notes=tuple(notes), **facts)

    @staticmethod
    def _sniff(body: bytes) -> str | None:
        """A type for an untyped body: HTML when it starts with ``<``, text when it decodes."""
        if body.lstrip()[:1] == b"<":
            return "html"
        if b"\x00" in body[:4096]:
            return None
        try:
            body[:4096].decode("utf-8")
        except UnicodeDecodeError as exc:
            # A multi-byte character cut by the 4 KB window is still text.
            if exc.start < min(len(body), 4096) - 3:
                return None
        return "text"


def _create(config: Any) -> DirectProvider:
    return DirectProvider(config.name, config.options or DirectOptions())


@hookimpl
def register_provider_types(register):
    """Register the ``direct`` provider type (no API key)."""
    from ..registry import ProviderType

    register(
        ProviderType(
            name="direct",
            capabilities={"fetch"},
            factory=_create,
            options_class=DirectOptions,
            needs_api_key=False,
        )
    )
