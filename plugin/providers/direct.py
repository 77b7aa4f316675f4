"""Direct: fetch pages straight from the web with no API key, the keyless default of
``web_fetch``.

Each URL is fetched on its own (all at once), redirects are followed by hand so that every hop's
address passes the network guard, bodies are capped while streaming, and HTML becomes
main-content Markdown (:mod:`pi_web_tools.pages.content`).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any
from urllib.parse import urljoin, urlsplit

import attrs
import requests
from attrs import frozen
from pi_hostspec.truncate import format_size

from ..api import (
    CommonOptions,
    Fetch,
    FetchedPage,
    FetchRequest,
    FetchResponse,
    ProviderConfig,
    ProviderType,
    RetryPolicy,
    between,
    hookimpl,
    option,
    run_interruptible,
)
from ..api._http_client import (
    LazySession,
    is_retryable,
    network_error_message,
    new_session,
    read_body,
    send,
    socket_timeouts,
)
from ..api._netguard import (
    RefusedAddress,
    allow_hint,
    guarded_adapter,
    host_refusal,
    is_proxied,
    request_target,
)
from ..api.retry import DEFAULT_RETRY, Retryable, with_retries

__all__ = ["DirectOptions", "DirectProvider"]

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
MAX_URLS = 20  # web_fetch's schema allows at most 20 URLs; all are fetched at once
SERVED_MARKDOWN = "the site served this page as Markdown"


@frozen(kw_only=True)
class DirectOptions(CommonOptions):
    """Options of a ``direct`` fetcher."""

    max_bytes: int = option(DEFAULT_MAX_BYTES, validator=between(1, 100_000_000))
    allow_private_network: bool = option(False, reaches=True)


def _reason(status: int, given: str | None) -> str:
    """The standard reason phrase for *status* (servers spell it variously), else the server's."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return given or ""


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

    def __init__(
        self,
        name: str = "direct",
        options: DirectOptions | None = None,
        *,
        retry: RetryPolicy | None = None,
    ):
        self.name = name
        self.options = options or DirectOptions()
        self.timeout = self.options.timeout_seconds or DEFAULT_TIMEOUT
        self.retry = retry
        self._session = LazySession(self._new_session)

    @property
    def policy(self) -> RetryPolicy:
        """The retry policy in force: this provider's, else the default."""
        return self.retry if self.retry is not None else DEFAULT_RETRY

    def close(self) -> None:
        """Close the session and its pooled connections (a new one opens on next use)."""
        self._session.close()

    def __repr__(self) -> str:
        return (
            f"DirectProvider(name={self.name!r}, max_bytes={self.options.max_bytes}, "
            f"allow_private_network={self.options.allow_private_network})"
        )

    @property
    def session(self) -> requests.Session:
        """One session for every fetch; cookies never outlive one URL's redirect chain."""
        return self._session.get()

    def _new_session(self) -> requests.Session:
        options = {"pool_connections": 8, "pool_maxsize": MAX_URLS, "max_retries": 0}
        adapter = (
            requests.adapters.HTTPAdapter(**options)
            if self.options.allow_private_network
            else guarded_adapter(hint=allow_hint(self.name), **options)
        )
        from .. import pages

        return new_session(
            headers={"Accept": pages.ACCEPT_MARKDOWN_FIRST}, adapter=adapter, keep_cookies=False
        )

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Fetch every URL concurrently; each becomes a page, failures included, in request order."""
        urls = list(request.urls)
        if not urls:
            return FetchResponse(pages=())
        from .. import pages

        pages.prewarm()  # a worker starts while the pages download
        done = [0]
        lock = threading.Lock()
        progress = getattr(ctx, "progress", None)

        def one(url: str) -> FetchedPage:
            page = self._fetch_safely(url, request, ctx)
            if progress is not None and len(urls) > 1:
                with lock:
                    done[0] += 1
                    count = done[0]
                progress(count, len(urls), f"Fetched {count}/{len(urls)} URLs")
            return page

        with ThreadPoolExecutor(
            max_workers=min(MAX_URLS, len(urls)), thread_name_prefix="direct-fetch"
        ) as pool:
            pages = list(pool.map(one, urls))
        return FetchResponse(pages=tuple(pages))

    def _fetch_safely(self, url: str, request: FetchRequest, ctx: Any) -> FetchedPage:
        """One URL's page or failure; retried per the policy (429/502/503/504 and broken
        connections) within one timeout, as the API providers are."""
        deadline = time.monotonic() + self.timeout
        cancel = getattr(ctx, "cancel", None)

        def attempt() -> FetchedPage:
            try:
                return self._fetch_one(url, request, ctx, deadline)
            except _Failure as failure:
                if failure.retryable:
                    raise Retryable(failure, failure.retry_after) from None
                raise

        try:
            return with_retries(attempt, policy=self.policy, deadline=deadline, cancel=cancel)
        except _Failure as failure:
            return FetchedPage(url=url, ok=False, error=failure.message, **failure.facts)
        except InterruptedError:
            return FetchedPage(url=url, ok=False, error="cancelled")
        except Exception as exc:  # noqa: BLE001 - one URL's bug must not sink the others
            return FetchedPage(url=url, ok=False, error=f"unexpected error: {type(exc).__name__}")

    def _markdown_twin(
        self, link: str, request: FetchRequest, ctx: Any, deadline: float
    ) -> FetchedPage | None:
        """The Markdown version an HTML page links to, read once (its own links are not
        followed), or ``None`` when it cannot be read as Markdown."""
        try:
            page = self._fetch_one(link, request, ctx, deadline, alternate=False)
        except _Failure:
            return None
        if not (page.ok and (page.text or "").strip() and SERVED_MARKDOWN in page.notes):
            return None
        notes = [note for note in page.notes if note != SERVED_MARKDOWN]
        return attrs.evolve(
            page, notes=(f"read from the Markdown version the page links to: {link}", *notes)
        )

    def _refusal(self, url: str) -> str | None:
        """Why *url* may not be fetched (scheme, host, address), or ``None``."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return f"refused: only http and https URLs can be fetched (got {parts.scheme or 'no'} scheme)"
        try:
            host = parts.hostname
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            return "invalid URL (bad host or port)"
        if not host:
            return "invalid URL (no host)"
        try:  # the host requests will connect to (or name to a proxy), which urlsplit may misread
            _, host, port = request_target(url)
        except ValueError:
            return "invalid URL (bad host or port)"
        if self.options.allow_private_network:
            return None
        return host_refusal(host, port, proxied=is_proxied(url), hint=allow_hint(self.name))

    def _fetch_one(
        self,
        url: str,
        request: FetchRequest,
        ctx: Any,
        deadline: float,
        *,
        alternate: bool = True,
    ) -> FetchedPage:
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
                if getattr(response, "invalid_location", False):
                    raise _Failure(
                        "the server redirected to an invalid URL",
                        status=response.status_code,
                        **facts,
                    )
                if target:
                    try:
                        following = requests.utils.requote_uri(urljoin(current, target))
                    except ValueError:  # an unparseable Location (http://[::1)
                        raise _Failure(
                            "the server redirected to an invalid URL",
                            status=response.status_code,
                            **facts,
                        ) from None
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
                twin = (
                    (lambda link: self._markdown_twin(link, request, ctx, deadline))
                    if alternate
                    else None
                )
                return self._read(url, current, response, request, deadline, cancel, twin)
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
        twin: Any = None,
    ) -> FetchedPage:
        """Turn a final (non-redirect) response into a page, or raise :class:`_Failure`. A
        Markdown answer is the page's text (an HTML page in disguise is read as HTML); an HTML
        page that links to its Markdown version is read from it when *twin* fetches it."""
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
                retryable=self.policy.is_retry_status(status),
                retry_after=response.headers.get("Retry-After"),
                **facts,
            )
        from .. import pages

        kind = pages.content_kind(mime)
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
        if mime in pages.MARKDOWN_TYPES:
            if pages.looks_like_html(body):
                kind = "html"
            else:
                notes.append(SERVED_MARKDOWN)
        elif kind == "html" and twin is not None and not too_big:
            link = pages.markdown_alternate(body, final_url)
            found = twin(link) if link and link != final_url else None
            if found is not None:
                from ..api.html_text import page_title

                title = page_title(body[: 64 * 1024].decode("utf-8", "replace"))
                return attrs.evolve(
                    found, url=url, title=title or found.title, final_url=link, status=status
                )
        if too_big:
            notes.append(f"Stopped reading after {format_size(self.options.max_bytes)} (maxBytes)")
        try:  # the one bounded page pipeline: time, memory, cancellation
            found = pages.read(
                body,
                kind=kind,
                content_type=raw_type,
                url=final_url,
                deadline=deadline,
                cancel=cancel,
            )
        except pages.Unreadable as exc:
            raise _Failure(str(exc), **facts) from None
        except InterruptedError:
            raise _Failure("cancelled", **facts) from None
        return FetchedPage(
            url=url,
            ok=True,
            title=found.title,
            text=found.text,
            notes=(*notes, *found.notes),
            links=found.links,
            escalate=found.escalate,
            degraded=found.degraded,
            **facts,
        )


def _create(config: ProviderConfig) -> DirectProvider:
    return DirectProvider(config.name, config.options or DirectOptions())


DIRECT = ProviderType(
    name="direct",
    label="Direct fetch",
    factory=_create,
    options_class=DirectOptions,
    fallback_for={"fetch"},
    fetch=Fetch(modes={"text"}, local=True),
)


@hookimpl
def register_provider_types(register):
    """Register the ``direct`` provider type (no API key; serves ``web_fetch`` by default)."""
    register(DIRECT)
