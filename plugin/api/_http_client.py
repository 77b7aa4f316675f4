"""One HTTP path for every provider and the direct fetcher: one session factory, requests that
a deadline or a cancellation interrupts, capped bodies, and :class:`HttpClient` for JSON APIs
(error messages with the status, the API's own words and never the key).

Retries follow a :class:`~pi_web_tools.api.retry.RetryPolicy` through the one loop in
:mod:`pi_web_tools.api.retry`: 429, 502, 503, 504 and broken or refused connections are retried
(at most twice by default), never 400/401/402/403.
"""

from __future__ import annotations

import html
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from http.cookiejar import DefaultCookiePolicy
from typing import Any
from urllib.parse import quote, urlsplit

import requests
import urllib3
from pi_hostspec.sanitize import map_strings, strip_control, valid_unicode
from pi_hostspec.truncate import format_size

from . import retry as retry_module
from .errors import ErrorKind, ProviderError
from .redaction import known_secrets, redact, redact_bytes, redact_secrets, redact_value
from .retry import Retryable, RetryPolicy, parse_retry_after, with_retries
from .version import __version__

__all__ = [
    "HttpClient",
    "LazySession",
    "USER_AGENT",
    "error_snippet",
    "is_retryable",
    "network_error_message",
    "new_session",
    "read_body",
    "run_interruptible",
    "send",
    "socket_timeouts",
]

USER_AGENT = f"pi-web-tools/{__version__} (+https://pypi.org/project/pi-web-tools/)"
CONNECT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 30.0
MAX_API_BODY = 16 * 1024 * 1024
MAX_REDIRECTS = 5
#: The longest timeout handed to a socket (a day): larger ones overflow the platform's timeval.
MAX_SOCKET_TIMEOUT = 24 * 3600.0
_CHUNK = 64 * 1024


def error_snippet(body: str, limit: int = 200, secrets: Iterable[str | None] = ()) -> str:
    """A short, tag-free, one-line excerpt of an error body (its ``<title>`` for an HTML page).

    Only the first 16 KB are looked at, with patterns that cannot backtrack, so a hostile error
    page costs nothing.
    """
    # Keys are redacted before anything is shortened (a key cut in two would show in part): the
    # window redacted reaches past the cut by more than any key is long.
    body = redact_secrets(redact(body[: 16384 + 1024], secrets))[:16384]
    lower = body.lower()
    start = lower.find("<title")
    opened = lower.find(">", start) if start != -1 else -1
    end = lower.find("</title", opened) if opened != -1 else -1
    text = body[opened + 1 : end] if end != -1 else body
    text = re.sub(r"<(script|style)\b[^<>]*>[^<]*", " ", text, flags=re.I)
    text = html.unescape(re.sub(r"<[^<>]*>", " ", text))
    # Unescaping and joining may have assembled a key (``sk&#45;...``, a key split by a tag):
    # redact again before the cut.
    text = redact_secrets(redact(" ".join(text.split()), secrets))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clean_json(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """Parsed JSON as it enters the product: lone surrogates (``"\\ud800"`` is valid JSON)
    replaced in every string, so no text taken from an API can crash a host that writes it,
    and every known key (and *secrets*) removed before a provider can cut, title or log it."""
    return redact_value(map_strings(valid_unicode, value, keys=True), secrets)


#: The failures requests raises for a setting it cannot use, the request's or the proxy's.
_SETTING_ERRORS = (
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
)
#: Failures of requests by type, most specific first, and what to tell the user.
_NETWORK_ERRORS = (
    (requests.exceptions.ConnectTimeout, "connection timed out"),
    (requests.exceptions.ReadTimeout, "timed out waiting for the response"),
    (requests.exceptions.SSLError, "TLS/SSL error (check the certificate or REQUESTS_CA_BUNDLE)"),
    (requests.exceptions.ProxyError, "could not connect through the proxy"),
    (requests.exceptions.TooManyRedirects, "too many redirects"),
    (requests.exceptions.ChunkedEncodingError, "the connection broke while reading the response"),
    (
        requests.exceptions.InvalidHeader,
        "a request header is invalid (check the API key for stray characters)",
    ),
    (
        _SETTING_ERRORS,
        "the request URL is invalid (check baseUrl)",
    ),
)


def network_error_message(exc: BaseException) -> str:
    """A one-line description of a requests / socket failure."""
    proxy_problem = _proxy_setting_problem(exc)
    if proxy_problem is not None:
        return proxy_problem
    if _response_header_error(exc):
        return "the server's response headers are invalid"
    for kinds, message in _NETWORK_ERRORS:
        if isinstance(exc, kinds):
            return message
    text = str(exc)
    if _oversized_headers(exc):
        return "the server sent oversized or endless response headers"
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused"
    if (
        "Name or service not known" in text
        or "NameResolutionError" in text
        or "nodename nor servname" in text
        or "Temporary failure in name resolution" in text
    ):
        return "could not resolve the host name"
    if "reset by peer" in text or "ConnectionResetError" in text or "RemoteDisconnected" in text:
        return "the connection was reset"
    if isinstance(exc, requests.exceptions.ConnectionError):
        return "could not connect"
    return type(exc).__name__


#: Proxy URL schemes requests can use (the socks ones with PySocks installed).
_PROXY_SCHEMES = ("http", "https", "socks4", "socks4a", "socks5", "socks5h")


def _proxy_setting_problem(exc: BaseException) -> str | None:
    """What is wrong with the environment's proxy variable that made *exc* (a request that
    could not be sent), naming the variable, never its value (it may hold a password); or
    ``None`` when the proxy settings that apply are usable."""
    if not isinstance(exc, _SETTING_ERRORS):
        return None
    request = getattr(exc, "request", None)
    if request is None and not isinstance(
        exc, (requests.exceptions.InvalidProxyURL, requests.exceptions.InvalidSchema)
    ):
        return None  # raised while the request was prepared: its own URL, before any proxy
    for name, value in _proxy_variables(getattr(request, "url", None)):
        problem = _proxy_value_problem(value)
        if problem is not None:
            return f"the proxy set in {name} {problem}"
    return None


def _proxy_variables(url: str | None) -> list[tuple[str, str]]:
    """The environment's proxy variable requests uses for *url* (none when ``NO_PROXY`` covers
    its host; every one when *url* is not known), as ``(name, value)``: read as requests reads
    them (urllib's rules: the lower-case name wins, an empty one unsets the upper-case one)."""
    import os
    import urllib.request

    if url:
        try:
            proxies = requests.utils.get_environ_proxies(url)
        except (TypeError, ValueError):  # an unparseable URL: its own failure, not a proxy's
            return []
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), parts.hostname
        keys = [f"{scheme}://{host}", scheme, f"all://{host}", "all"] if host else [scheme, "all"]
        keys = [key for key in keys if proxies.get(key)][:1]  # the one requests selects
    else:
        proxies = urllib.request.getproxies_environment()
        keys = sorted(key for key in proxies if key != "no")
    found = []
    for key in keys:
        names = [f"{key}_proxy"] + [
            name for name in sorted(os.environ) if name.lower() == f"{key}_proxy"
        ]
        name = next((name for name in names if os.environ.get(name) == proxies[key]), None)
        if name is not None:  # else not from a variable (a system setting elsewhere)
            found.append((name, proxies[key]))
    return found


def _proxy_value_problem(value: str) -> str | None:
    """Why requests cannot use *value* as a proxy URL, or ``None``."""
    import importlib.util

    try:  # as requests reads it (which fails with a TypeError on http://user:pass@)
        parts = urllib3.util.parse_url(value if "://" in value else f"http://{value}")
    except (urllib3.exceptions.LocationParseError, TypeError, ValueError):
        parts = None
    if parts is None or not parts.host or not parts.host.strip() or value != value.strip():
        return "is not a valid proxy URL (correct it, or unset the variable)"
    scheme = (parts.scheme or "http").lower()
    if scheme not in _PROXY_SCHEMES:
        return (
            f"uses the scheme {scheme}:, which a proxy cannot have (use http://, https:// or "
            "socks5://)"
        )
    if scheme.startswith("socks") and importlib.util.find_spec("socks") is None:
        from pi_hostspec.install import install_command

        return f"is a SOCKS proxy, which needs PySocks: {install_command('socks')}"
    return None


def read_body(
    response: requests.Response,
    *,
    max_bytes: int,
    deadline: float,
    cancel: threading.Event | None = None,
) -> tuple[bytes, bool]:
    """Read a streamed body up to *max_bytes*; return (bytes, exceeded_cap). Every known key in
    it is redacted before the cap cuts it: the cap is read past by the longest key's length,
    so a key across it is whole when it is replaced.

    Raises ``TimeoutError`` past *deadline* (a monotonic time) and ``InterruptedError`` when
    *cancel* is set, so a trickling or endless body cannot hold the call.
    """
    secrets = known_secrets()
    past_the_cap = max((len(secret.encode("utf-8")) for secret in secrets), default=0)
    chunks = []
    size = 0
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    while True:
        if cancel is not None and cancel.is_set():
            raise InterruptedError("cancelled")
        if time.monotonic() > deadline:
            raise TimeoutError("the response took longer than the timeout")
        # read1 returns after one socket read, so a trickling body meets the deadline check.
        try:
            chunk = (
                read1(_CHUNK, decode_content=True)
                if read1
                else raw.read(_CHUNK, decode_content=True)
            )
        except urllib3.exceptions.ReadTimeoutError:
            raise TimeoutError("the response stopped arriving") from None
        except urllib3.exceptions.HTTPError as exc:
            raise _as_requests_error(exc) from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes + past_the_cap:
            return redact_bytes(b"".join(chunks), secrets)[:max_bytes], True
    response._content_consumed = True  # lets close() return the connection to the pool
    body = redact_bytes(b"".join(chunks), secrets)
    return (body[:max_bytes], True) if size > max_bytes else (body, False)


def socket_timeouts(remaining: float, connect: float = CONNECT_TIMEOUT) -> tuple[float, float]:
    """The (connect, read) timeouts for a request with *remaining* seconds before its deadline."""
    remaining = min(remaining, MAX_SOCKET_TIMEOUT)
    return min(connect, remaining), remaining


_CANCEL_POLL = 0.05


def run_interruptible(
    work: Callable[[], Any],
    *,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
) -> Any:
    """``work()``, given up on at once when *cancel* is set or the monotonic *deadline* passes.

    A socket waiting for headers, or a DNS lookup, cannot be woken, so *work* runs in a helper
    thread and this one waits for either; on cancellation it raises ``InterruptedError``, past
    the deadline ``TimeoutError``. The helper, left to its own socket timeouts, closes whatever
    it still gets (anything with a ``close`` method).
    """
    if cancel is None and deadline is None:
        return work()
    if cancel is not None and cancel.is_set():
        raise InterruptedError("cancelled")
    box: dict = {}
    lock = threading.Lock()
    done = threading.Event()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result, box["error"] = None, exc
        with lock:
            if box.get("abandoned"):
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            else:
                box["result"] = result
            done.set()

    threading.Thread(target=run, name="pi-web-request", daemon=True).start()
    while not done.wait(_CANCEL_POLL):
        cancelled = cancel is not None and cancel.is_set()
        late = deadline is not None and time.monotonic() > deadline
        if cancelled or late:
            with lock:
                if not done.is_set():
                    box["abandoned"] = True
                    raise InterruptedError("cancelled") if cancelled else TimeoutError("timed out")
    if "error" in box:
        raise box["error"]
    return box["result"]


def send(
    session: requests.Session,
    method: str,
    url: str,
    *,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
    **kwargs: Any,
) -> requests.Response:
    """``session.request(method, url, **kwargs)`` that *cancel* or the *deadline* interrupts
    (see :func:`run_interruptible`; the deadline also bounds DNS lookups, which socket timeouts
    do not)."""
    try:
        return run_interruptible(
            lambda: session.request(method, url, **kwargs), cancel=cancel, deadline=deadline
        )
    except requests.exceptions.RequestException as exc:
        proxy_failure = (requests.exceptions.InvalidProxyURL, requests.exceptions.InvalidSchema)
        if exc.request is None and isinstance(exc, proxy_failure):  # which proxy: the URL's
            exc.request = requests.Request(method, url)
        raise
    except TypeError:  # requests' own failure on a proxy with credentials and no host
        if not session.trust_env or not any(
            _proxy_value_problem(value) for _, value in _proxy_variables(url)
        ):
            raise
        raise requests.exceptions.InvalidProxyURL(
            "the proxy URL is malformed", request=requests.Request(method, url)
        ) from None


def _as_requests_error(exc: Exception) -> requests.exceptions.RequestException:
    """The requests exception for a urllib3 error raised while reading a body (as
    ``Response.iter_content`` maps them), so callers handle one family of errors."""
    errors = urllib3.exceptions
    if isinstance(exc, errors.ReadTimeoutError):
        return requests.exceptions.ReadTimeout(str(exc))
    if isinstance(exc, errors.SSLError):
        return requests.exceptions.SSLError(str(exc))
    if isinstance(exc, errors.DecodeError):
        return requests.exceptions.ContentDecodingError(str(exc))
    return requests.exceptions.ChunkedEncodingError(str(exc))


_NOT_RETRYABLE = (
    requests.exceptions.ReadTimeout,  # the deadline is spent: no time left to retry
    requests.exceptions.TooManyRedirects,
    requests.exceptions.SSLError,
    requests.exceptions.InvalidHeader,
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
)


def _response_header_error(exc: BaseException) -> bool:
    """Whether *exc* is about the response's headers (two different Content-Lengths, say), not
    ours: requests raises InvalidHeader for both, wrapping urllib3's error for a response."""
    return (
        isinstance(exc, requests.exceptions.InvalidHeader)
        and bool(exc.args)
        and isinstance(exc.args[0], urllib3.exceptions.HTTPError)
    )


def _oversized_headers(exc: BaseException) -> bool:
    """Whether http.client gave up on the response headers (a line over 64 KB, more than 100
    headers): the server misbehaves, it is no network failure."""
    text = str(exc)
    return "got more than" in text and ("header" in text or "bytes when reading" in text)


def is_retryable(exc: BaseException) -> bool:
    """Whether a requests failure is worth another try (broken or refused connections are;
    oversized response headers are not)."""
    return (
        isinstance(exc, requests.exceptions.RequestException)
        and not isinstance(exc, _NOT_RETRYABLE)
        and not _oversized_headers(exc)
    )


class _Session(requests.Session):
    """A session that drops every header carrying a key (not only ``Authorization``, which is
    all requests strips) when a redirect leaves the original host."""

    secret_headers: tuple[str, ...] = ()

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        """The ``Location`` of a redirect as a browser reads it: UTF-8 when it decodes, else
        its raw bytes percent-encoded (requests raised ``UnicodeDecodeError`` on Latin-1). An
        unparseable one (``http://[::1``) is no redirect; ``resp.invalid_location`` says so."""
        if not resp.is_redirect:
            return None
        raw = resp.headers["location"].encode("latin-1", "replace")
        try:
            location = raw.decode("utf-8")
        except UnicodeDecodeError:
            location = quote(raw, safe="!#$%&'()*+,-./:;=?@[]_~")
        try:
            urlsplit(location).port  # noqa: B018 - raises on a bad host or port
        except ValueError:
            resp.invalid_location = True  # type: ignore[attr-defined] # read by resolve_redirects
            return None
        return location

    def rebuild_auth(
        self, prepared_request: requests.PreparedRequest, response: requests.Response
    ) -> None:
        super().rebuild_auth(prepared_request, response)
        if self.should_strip_auth(response.request.url or "", prepared_request.url or ""):
            for name in self.secret_headers:
                prepared_request.headers.pop(name, None)


def new_session(
    *,
    headers: dict | None = None,
    secret_headers: Iterable[str] = (),
    adapter: requests.adapters.HTTPAdapter | None = None,
    keep_cookies: bool = True,
) -> requests.Session:
    """The one way a session is made: our User-Agent, *headers*, no urllib3 retries (the retry
    loop is ours), at most :data:`MAX_REDIRECTS` redirects, proxies and CA bundle from the
    environment. *secret_headers* are dropped on a redirect to another host; *adapter*
    replaces the default (the direct fetcher's guards its connections); without
    *keep_cookies* no cookie is ever stored."""
    session = _Session()
    session.secret_headers = tuple(secret_headers)
    adapter = adapter or requests.adapters.HTTPAdapter(
        pool_connections=4, pool_maxsize=16, max_retries=0
    )
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    session.max_redirects = MAX_REDIRECTS
    if not keep_cookies:
        session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    session.headers["User-Agent"] = USER_AGENT
    session.headers.update(headers or {})
    return session


class LazySession:
    """A session opened by *make* on first use and kept warm; :meth:`close` closes it and its
    pooled connections (a new one opens on next use). Safe to share between threads."""

    def __init__(self, make: Callable[[], requests.Session]):
        self._make = make
        self._session: requests.Session | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        """Whether a session is open now."""
        return self._session is not None

    def get(self) -> requests.Session:
        """The open session, opened now if there is none."""
        with self._lock:
            if self._session is None:
                self._session = self._make()
            return self._session

    def close(self) -> None:
        """Close the session, if one is open (never raises for a closed one)."""
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()


class HttpClient:
    """A provider's HTTP client for a JSON API: one warm session reused across calls.

    :param provider: the name errors start with (``"Kagi"``).
    :param base_url: what request paths are joined to.
    :param headers: sent with every request (a key's header is dropped on a cross-host redirect).
    :param secrets: redacted from every message this client produces (known keys always are).
    :param timeout: seconds for one call, retries included, unless the call says otherwise.
    :param error_text: turns a parsed JSON error body into the API's own message, or a
        ``(message, code)`` pair, or ``None``.
    :param error_headers: turns an error response's status and headers (a case-insensitive
        mapping) into words added to the message (a rate limit's quotas), or ``None``.
    :param retry: the :class:`~pi_web_tools.api.retry.RetryPolicy` (default: 2 retries of
        429/502/503/504 and broken connections).
    :param follow_redirects: ``False`` for an API at an address the user chose (a self-hosted
        one): a redirect is then an error naming where it pointed, never followed, so the
        client reaches that address and nothing else.
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: dict | None = None,
        secrets: Iterable[str | None] = (),
        timeout: float = DEFAULT_TIMEOUT,
        error_text: Callable[[Any], Any] | None = None,
        error_headers: Callable[[int, Any], str | None] | None = None,
        max_body_bytes: int = MAX_API_BODY,
        retry: RetryPolicy | None = None,
        follow_redirects: bool = True,
    ):
        self.provider = provider
        self.follow_redirects = follow_redirects
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.secrets = tuple(s for s in secrets if s)
        self.error_text = error_text
        self.error_headers = error_headers
        self.max_body_bytes = max_body_bytes
        self.retry = retry  # None: retry.DEFAULT_RETRY, read at call time
        self._headers = dict(headers or {})
        self._session = LazySession(
            lambda: new_session(
                headers=self._headers,
                secret_headers=[
                    name
                    for name, value in self._headers.items()
                    if any(secret in str(value) for secret in self.secrets)
                ],
            )
        )

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy in force: this client's, else the default."""
        return self.retry if self.retry is not None else retry_module.DEFAULT_RETRY

    @property
    def session(self) -> requests.Session:
        """The warm session (created on first use)."""
        return self._session.get()

    def close(self) -> None:
        """Close the session and its pooled connections (a new one opens on next use)."""
        self._session.close()

    def error(self, message: str, **facts: Any) -> ProviderError:
        """A :class:`ProviderError` whose message is prefixed, redacted (this client's key and
        every known one) and made one clean line (an API's words may hold escapes)."""
        message = redact_secrets(redact(f"{self.provider}: {message}", self.secrets))
        return ProviderError(
            " ".join(strip_control(message).split()), provider=self.provider, **facts
        )

    def shape_error(self, what: str) -> ProviderError:
        """The error for an answer of the wrong shape: ``unexpected response shape: <what>``."""
        return self.error(f"unexpected response shape: {what}")

    def request_json(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        json_body: Any = None,
        headers: dict | None = None,
        ctx: Any = None,
        timeout: float | None = None,
    ) -> tuple[Any, requests.Response]:
        """Send a request (retried per the policy) and return (parsed JSON, response); raise
        :class:`ProviderError` on any failure, ``cancelled`` when *ctx* is cancelled.

        *path* is joined to the base URL unless it is absolute; *headers* add to (or with
        ``None`` values, remove from) the client's own for this request.
        """
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
        budget = timeout if timeout is not None else self.timeout
        deadline = time.monotonic() + budget
        cancel = getattr(ctx, "cancel", None)

        def attempt() -> tuple[Any, requests.Response]:
            return self._attempt(method, url, params, json_body, headers, budget, deadline, cancel)

        try:
            return with_retries(attempt, policy=self.policy, deadline=deadline, cancel=cancel)
        except InterruptedError:
            raise self.error("cancelled") from None

    def _attempt(
        self,
        method: str,
        url: str,
        params: dict | None,
        json_body: Any,
        headers: dict | None,
        budget: float,
        deadline: float,
        cancel: threading.Event | None,
    ) -> tuple[Any, requests.Response]:
        """One request and its body; a failure worth retrying is raised as :class:`Retryable`."""
        if cancel is not None and cancel.is_set():
            raise InterruptedError("cancelled")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self.error(
                f"timed out after {budget:g} s", retryable=True, kind=ErrorKind.TIMEOUT
            )
        reading = False
        try:
            response = send(
                self.session,
                method,
                url,
                cancel=cancel,
                deadline=deadline,
                params=params,
                json=json_body,
                headers=headers,
                timeout=socket_timeouts(remaining),
                stream=True,
                allow_redirects=self.follow_redirects,
            )
            reading = True
            try:
                body, too_big = read_body(
                    response, max_bytes=self.max_body_bytes, deadline=deadline, cancel=cancel
                )
            finally:
                response.close()
        except TimeoutError:
            stage = "while reading the response" if reading else "waiting for the response"
            raise self.error(
                f"timed out after {budget:g} s {stage}", kind=ErrorKind.TIMEOUT
            ) from None
        except UnicodeEncodeError:  # http.client sends header values as Latin-1 only
            raise self.error(
                "the API key (or another header value) holds characters an HTTP header cannot "
                "carry; check the key for pasted quotes, dashes or spaces"
            ) from None
        except requests.exceptions.RequestException as exc:
            reason = network_error_message(exc)
            if isinstance(exc, requests.exceptions.ReadTimeout):
                reason = f"timed out after {budget:g} s waiting for the response"
            timed_out = isinstance(exc, requests.exceptions.Timeout)
            failure = self.error(
                f"request failed: {reason}",
                retryable=is_retryable(exc),
                kind=ErrorKind.TIMEOUT if timed_out else ErrorKind.UNREACHABLE,
            )
            if is_retryable(exc):
                raise Retryable(failure) from None
            raise failure from None
        if too_big:
            raise self.error(
                f"the response is larger than {format_size(self.max_body_bytes)}; refused",
                status=response.status_code,
            )
        status = response.status_code
        if not self.follow_redirects and 300 <= status < 400:
            raise self._redirect_error(response)
        if status >= 400:
            failure = self._status_error(response, body)
            if self.policy.is_retry_status(status):
                raise Retryable(failure, response.headers.get("Retry-After"))
            raise failure
        if not body.strip():
            raise self.error(f"the API returned an empty body (HTTP {status})", status=status)
        try:
            data = _clean_json(json.loads(body), self.secrets)
        except (ValueError, RecursionError):
            kind = response.headers.get("Content-Type", "unknown content type")
            raise self.error(
                f"the API returned a body that is not valid JSON (HTTP {status}, {kind}): "
                f"{error_snippet(body.decode('utf-8', 'replace'), 120, self.secrets)}",
                status=status,
            ) from None
        return data, response

    def _redirect_error(self, response: requests.Response) -> ProviderError:
        """A redirect this client does not follow: where it pointed, and what to change."""
        from pi_hostspec.sanitize import strip_control

        status = response.status_code
        # Keys are removed before the cut, so no part of one can show.
        location = redact_secrets(redact(response.headers.get("Location") or "", self.secrets))
        location = " ".join(strip_control(location).split())
        where = f" to {location[:199]}…" if len(location) > 200 else f" to {location}"
        where = where if location else ""
        return self.error(
            f"HTTP {status}: the API redirected{where}, which is not followed; set baseUrl "
            "to the address it moved to",
            status=status,
        )

    def _status_error(self, response: requests.Response, body: bytes) -> ProviderError:
        status = response.status_code
        reason = response.reason or ""
        text = body.decode("utf-8", "replace")
        api_message = None
        code = None
        try:
            parsed = _clean_json(json.loads(text), self.secrets) if text.strip() else None
        except (ValueError, RecursionError):
            parsed = None
        if parsed is not None and self.error_text is not None:
            try:
                found = self.error_text(parsed)
            except Exception:  # noqa: BLE001 - a parser bug must not hide the status
                found = None
            if isinstance(found, tuple):
                api_message, code = found
            else:
                api_message = found
        if api_message is None and text.strip():
            api_message = error_snippet(text, secrets=self.secrets)
        message = f"HTTP {status} {reason}".rstrip()
        if api_message:
            message += f": {api_message}"
        if self.error_headers is not None:
            try:
                note = self.error_headers(status, response.headers)
            except Exception:  # noqa: BLE001 - a parser bug must not hide the status
                note = None
            if note:
                message += f" ({note})"
        if status == 429:
            hinted = parse_retry_after(response.headers.get("Retry-After"))
            message += (
                f" (rate limited; retry after {hinted:.0f} s)"
                if hinted is not None and hinted < 86400
                else " (rate limited; try again shortly)"
            )
        failure = self.error(
            message, status=status, code=code, retryable=self.policy.is_retry_status(status)
        )
        hinted = parse_retry_after(response.headers.get("Retry-After"))
        if hinted is not None and status in (429, 503):
            failure.retry_after = hinted  # the runtime rests the provider that long (team.py)
        return failure
