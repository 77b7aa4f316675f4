"""One HTTP layer for every provider: a warm session, deadlines, retries, capped bodies, and
error messages with the status, the API's own words and never the key.

Retry policy: 429, 502, 503, 504 and connection failures are retried at most twice, with
exponential backoff and jitter, honouring ``Retry-After`` up to :data:`RETRY_AFTER_CAP`; never
400/401/402/403. Every wait fits inside the call's deadline and stops at once on cancellation.
"""

from __future__ import annotations

import email.utils
import html
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import requests
import urllib3
from pi_hostspec.truncate import format_size

from . import __version__
from .config import known_secrets, redact_secrets
from .errors import ProviderError

__all__ = ["HttpClient", "USER_AGENT", "read_body", "redact", "send"]

USER_AGENT = f"pi-web-tools/{__version__} (+https://pypi.org/project/pi-web-tools/)"
CONNECT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 30.0
MAX_API_BODY = 16 * 1024 * 1024
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRIES = 2
BACKOFF_BASE = 0.5
RETRY_AFTER_CAP = 10.0
#: The longest timeout handed to a socket (a day): larger ones overflow the platform's timeval.
MAX_SOCKET_TIMEOUT = 24 * 3600.0
_CHUNK = 64 * 1024


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (4 characters or longer) in *text* with ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, "***")
    return text


class _RedactingFilter(logging.Filter):
    """Replaces known API keys in log records (urllib3 logs every request line, query string
    included, at DEBUG level)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            secrets = known_secrets()
            if secrets:
                message = record.getMessage()
                if any(secret in message for secret in secrets):
                    record.msg, record.args = redact(message, secrets), ()
        except Exception:  # noqa: BLE001 - a log filter must never break the call that logs
            pass
        return True


_LOG_FILTER = _RedactingFilter()


#: Libraries that log URLs (query strings included) on the way to a page.
LOGGING_LIBRARIES = ("urllib3", "requests", "trafilatura", "htmldate", "courlan", "justext")


def install_log_filter() -> None:
    """Attach the redacting filter to every logger of :data:`LOGGING_LIBRARIES` created so far
    (a logger's filters do not apply to its children's records, so each one gets it). Cheap to
    call again after importing one of them."""
    for name in ["urllib3.connectionpool", *list(logging.root.manager.loggerDict)]:
        if name.split(".")[0] in LOGGING_LIBRARIES:
            logging.getLogger(name).addFilter(_LOG_FILTER)


install_log_filter()


def _snippet(body: str, limit: int = 200) -> str:
    """A short, tag-free, one-line excerpt of an error body (its ``<title>`` for an HTML page).

    Only the first 16 KB are looked at, with patterns that cannot backtrack, so a hostile error
    page costs nothing.
    """
    body = body[:16384]
    lower = body.lower()
    start = lower.find("<title")
    opened = lower.find(">", start) if start != -1 else -1
    end = lower.find("</title", opened) if opened != -1 else -1
    text = body[opened + 1 : end] if end != -1 else body
    text = re.sub(r"<(script|style)\b[^<>]*>[^<]*", " ", text, flags=re.I)
    text = html.unescape(re.sub(r"<[^<>]*>", " ", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def network_error_message(exc: BaseException) -> str:
    """A one-line description of a requests / socket failure."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return "timed out waiting for the response"
    if isinstance(exc, requests.exceptions.SSLError):
        return "TLS/SSL error (check the certificate or REQUESTS_CA_BUNDLE)"
    if isinstance(exc, requests.exceptions.ProxyError):
        return "could not connect through the proxy"
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return "too many redirects"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "the connection broke while reading the response"
    if isinstance(exc, requests.exceptions.InvalidHeader):
        return "a request header is invalid (check the API key for stray characters)"
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema)):
        return "the request URL is invalid (check baseUrl)"
    text = str(exc)
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


def read_body(
    response: requests.Response,
    *,
    max_bytes: int,
    deadline: float,
    cancel: threading.Event | None = None,
) -> tuple[bytes, bool]:
    """Read a streamed body up to *max_bytes*; return (bytes, exceeded_cap).

    Raises ``TimeoutError`` past *deadline* (a monotonic time) and ``InterruptedError`` when
    *cancel* is set, so a trickling or endless body cannot hold the call.
    """
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
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    response._content_consumed = True  # lets close() return the connection to the pool
    return b"".join(chunks), False


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
    return run_interruptible(
        lambda: session.request(method, url, **kwargs), cancel=cancel, deadline=deadline
    )


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
)


def is_retryable(exc: BaseException) -> bool:
    """Whether a requests failure is worth another try (broken or refused connections are)."""
    return isinstance(exc, requests.exceptions.RequestException) and not isinstance(
        exc, _NOT_RETRYABLE
    )


def wait_before_retry(
    attempt: int,
    retry_after: str | None,
    deadline: float,
    cancel: threading.Event | None,
    *,
    base: float | None = None,
) -> bool:
    """Sleep before retry *attempt* (exponential backoff with jitter, ``Retry-After`` honoured up
    to :data:`RETRY_AFTER_CAP`); False when the wait would not fit before *deadline*. Raises
    ``InterruptedError`` as soon as *cancel* is set."""
    base = BACKOFF_BASE if base is None else base
    delay = base * (2**attempt) + random.uniform(0, base / 2)
    hinted = _retry_after(retry_after)
    if hinted is not None:
        delay = max(delay, min(hinted, RETRY_AFTER_CAP))
    if time.monotonic() + delay >= deadline - 0.05:
        return False
    if cancel is not None:
        if cancel.wait(delay):
            raise InterruptedError("cancelled")
        return True
    time.sleep(delay)
    return True


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    return max(0.0, moment.timestamp() - time.time())


class _Session(requests.Session):
    """A session that drops every header carrying a key (not only ``Authorization``, which is
    all requests strips) when a redirect leaves the original host."""

    secret_headers: tuple[str, ...] = ()

    def rebuild_auth(
        self, prepared_request: requests.PreparedRequest, response: requests.Response
    ) -> None:
        super().rebuild_auth(prepared_request, response)
        if self.should_strip_auth(response.request.url, prepared_request.url):
            for name in self.secret_headers:
                prepared_request.headers.pop(name, None)


class HttpClient:
    """A provider's HTTP client: one ``requests.Session`` reused across calls.

    *error_text* turns a parsed JSON error body into the API's own message (or ``None``);
    *secrets* are redacted from every message this client produces.
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: dict | None = None,
        secrets: Iterable[str | None] = (),
        timeout: float = DEFAULT_TIMEOUT,
        error_text: Callable[[Any], str | None] | None = None,
        max_body_bytes: int = MAX_API_BODY,
        retries: int = MAX_RETRIES,
        sleep_base: float | None = None,
    ):
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.secrets = tuple(s for s in secrets if s)
        self.error_text = error_text
        self.max_body_bytes = max_body_bytes
        self.retries = retries
        self.sleep_base = sleep_base
        self._headers = dict(headers or {})
        self._session: requests.Session | None = None
        self._session_lock = threading.Lock()

    @property
    def session(self) -> requests.Session:
        """The warm session (created on first use; proxies and CA bundle from the environment)."""
        with self._session_lock:
            if self._session is None:
                session = _Session()
                session.secret_headers = tuple(
                    name
                    for name, value in self._headers.items()
                    if any(secret in str(value) for secret in self.secrets)
                )
                adapter = requests.adapters.HTTPAdapter(
                    pool_connections=4, pool_maxsize=16, max_retries=0
                )
                session.mount("https://", adapter)
                session.mount("http://", adapter)
                session.max_redirects = 5
                session.headers["User-Agent"] = USER_AGENT
                session.headers.update(self._headers)
                self._session = session
            return self._session

    def close(self) -> None:
        """Close the session and its pooled connections (a new one opens on next use)."""
        with self._session_lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()

    def error(self, message: str, **facts: Any) -> ProviderError:
        """A :class:`ProviderError` whose message is prefixed, redacted (this client's key and
        every configured one) and made one clean line (an API's words may hold escapes)."""
        from pi_hostspec.sanitize import strip_control

        message = redact_secrets(redact(f"{self.provider}: {message}", self.secrets))
        return ProviderError(
            " ".join(strip_control(message).split()), provider=self.provider, **facts
        )

    def request_json(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        json_body: Any = None,
        ctx: Any = None,
        timeout: float | None = None,
    ) -> tuple[Any, requests.Response]:
        """Send a request and return (parsed JSON, response); raise :class:`ProviderError`."""
        try:
            return self._request_json(
                method, path, params=params, json_body=json_body, ctx=ctx, timeout=timeout
            )
        except InterruptedError:
            raise self.error("cancelled") from None

    def _request_json(
        self,
        method: str,
        path: str,
        *,
        params: dict | None,
        json_body: Any,
        ctx: Any,
        timeout: float | None,
    ) -> tuple[Any, requests.Response]:
        url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
        budget = timeout if timeout is not None else self.timeout
        deadline = time.monotonic() + budget
        cancel = getattr(ctx, "cancel", None)
        attempt = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise self.error("cancelled")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.error(f"timed out after {budget:g} s", retryable=True)
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
                    timeout=socket_timeouts(remaining),
                    stream=True,
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
                raise self.error(f"timed out after {budget:g} s {stage}") from None
            except requests.exceptions.RequestException as exc:
                reason = network_error_message(exc)
                retryable = is_retryable(exc)
                if (
                    retryable
                    and attempt < self.retries
                    and self._wait(attempt, None, deadline, cancel)
                ):
                    attempt += 1
                    continue
                if isinstance(exc, requests.exceptions.ReadTimeout):
                    reason = f"timed out after {budget:g} s waiting for the response"
                raise self.error(f"request failed: {reason}", retryable=retryable) from None
            if too_big:
                raise self.error(
                    f"the response is larger than {format_size(self.max_body_bytes)}; refused",
                    status=response.status_code,
                )
            status = response.status_code
            if status >= 400:
                if (
                    status in RETRY_STATUSES
                    and attempt < self.retries
                    and self._wait(attempt, response.headers.get("Retry-After"), deadline, cancel)
                ):
                    attempt += 1
                    continue
                raise self._status_error(response, body)
            if not body.strip():
                raise self.error(f"the API returned an empty body (HTTP {status})", status=status)
            try:
                data = json.loads(body)
            except (ValueError, RecursionError):
                kind = response.headers.get("Content-Type", "unknown content type")
                raise self.error(
                    f"the API returned a body that is not valid JSON (HTTP {status}, {kind}): "
                    f"{_snippet(body.decode('utf-8', 'replace'), 120)}",
                    status=status,
                ) from None
            return data, response

    def _wait(
        self, attempt: int, retry_after: str | None, deadline: float, cancel: threading.Event | None
    ) -> bool:
        return wait_before_retry(attempt, retry_after, deadline, cancel, base=self.sleep_base)

    def _status_error(self, response: requests.Response, body: bytes) -> ProviderError:
        status = response.status_code
        reason = response.reason or ""
        text = body.decode("utf-8", "replace")
        api_message = None
        code = None
        try:
            parsed = json.loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            parsed = None
        if parsed is not None and self.error_text is not None:
            try:
                found = self.error_text(parsed)
            except Exception:
                found = None
            if isinstance(found, tuple):
                api_message, code = found
            else:
                api_message = found
        if api_message is None and text.strip():
            api_message = _snippet(text)
        message = f"HTTP {status} {reason}".rstrip()
        if api_message:
            message += f": {api_message}"
        if status == 429:
            hinted = _retry_after(response.headers.get("Retry-After"))
            message += (
                f" (rate limited; retry after {hinted:.0f} s)"
                if hinted is not None and hinted < 86400
                else " (rate limited; try again shortly)"
            )
        return self.error(message, status=status, code=code, retryable=status in RETRY_STATUSES)
