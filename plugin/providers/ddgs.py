"""Keyless web search through the ``ddgs`` library (DuckDuckGo, Brave, Startpage, Mojeek, ...
as public web pages), for a user who adds ``{"name": "free", "type": "ddgs"}`` to the config.

Opt-in only: the search engines behind it rate-limit and block automated queries, so it is
never chosen without an entry. The library (the ``keyless`` extra) is imported on the first
query; without it, the error gives the install command that fits this install
(:func:`pi_hostspec.install.install_command`). Each query runs in a helper thread that the
call's timeout and cancellation bound, at most two at a time.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from attrs import frozen

from ..api import (
    ErrorKind,
    DOMAIN_FILTERS,
    CommonOptions,
    ProviderConfig,
    ProviderError,
    ProviderType,
    Search,
    SearchHit,
    SearchRequest,
    SearchResponse,
    between,
    hookimpl,
    one_line,
    one_of,
    option,
    run_interruptible,
)

__all__ = ["DEFAULT_BACKENDS", "DdgsOptions", "DdgsProvider", "INSTALL"]

PROVIDER = "ddgs"


def _install() -> str:
    """The command that adds the ddgs library to this install (right for a checkout, a git URL,
    pipx or uv too)."""
    from pi_hostspec.install import install_command

    return install_command("keyless")


INSTALL = _install()
DEFAULT_TIMEOUT = 20.0
DEFAULT_LIMIT = 10
#: Backends tried in order until one answers (each is one search engine's public pages);
#: those the installed library lacks or has disabled are left out.
DEFAULT_BACKENDS = ("duckduckgo", "brave", "startpage", "mojeek", "yahoo")
KEYED_HINT = (
    "Keyless search is rate-limited by the search engines it reads; for reliable search "
    "configure a provider with an API key (brave, tavily, exa or kagi) in web-search.json."
)
#: Queries of one call run at once; the engines block bursts, so at most this many at a time.
MAX_CONCURRENT = 2
_BLOCKED_WORDS = ("ratelimit", "rate limit", "429", "202", "captcha", "anomaly", "blocked")


@frozen(kw_only=True)
class DdgsOptions(CommonOptions):
    """Options of a ``ddgs`` provider."""

    backends: list[str] | None = option(None)
    region: str | None = option(None)
    safesearch: str | None = option(None, validator=one_of("on", "moderate", "off"))
    default_search_limit: int | None = option(None, validator=between(1, 50))


def _library() -> tuple[Any, Any, Any]:
    """``(DDGS, exceptions module, text backends)`` from the ddgs library, or a clean error."""
    try:
        from ddgs import DDGS, exceptions
    except ImportError:
        raise ProviderError(
            f"{PROVIDER}: the ddgs library is not installed; run: {_install()}",
            provider=PROVIDER,
        ) from None
    try:
        from ddgs.engines import ENGINES

        backends = frozenset(ENGINES.get("text", {}))
    except Exception:  # noqa: BLE001 - a library layout change must not stop the search
        backends = frozenset()
    return DDGS, exceptions, backends


def _one_line(text: Any, limit: int = 160) -> str:
    """The first line of *text*, shortened (a library message may hold a whole traceback);
    keys are redacted before the cut (:func:`one_line`)."""
    lines = str(text).strip().splitlines()
    return one_line(lines[0] if lines else "", limit)


def _blocked(exc: BaseException, exceptions: Any) -> bool:
    """Whether the library's error means the engine refused us (rate limit, CAPTCHA)."""
    ratelimit = getattr(exceptions, "RatelimitException", None)
    if ratelimit is not None and isinstance(exc, ratelimit):
        return True
    text = str(exc).lower()
    return any(word in text for word in _BLOCKED_WORDS)


class DdgsProvider:
    """Keyless search: the configured backends are tried in order until one answers."""

    def __init__(self, name: str, options: DdgsOptions):
        self.name = name
        self.options = options
        self.backends = tuple(options.backends or ())
        self.timeout = options.timeout_seconds or DEFAULT_TIMEOUT
        self.label = f"ddgs ({name})" if name != PROVIDER else PROVIDER
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT)

    def close(self) -> None:
        """Nothing to release (the library opens a client per query)."""

    def __repr__(self) -> str:
        return f"DdgsProvider(name={self.name!r}, backends={self.backends!r})"

    def _error(self, message: str, **facts: Any) -> ProviderError:
        return ProviderError(f"{self.label}: {message}", provider=self.label, **facts)

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query on the first backend that answers; the answer's notice names it."""
        library, exceptions, known = _library()
        backends = self._backends(known)
        limit = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        terms = [request.query]
        if request.include_domains:
            sites = " OR ".join(f"site:{domain}" for domain in request.include_domains)
            terms.append(f"({sites})" if len(request.include_domains) > 1 else sites)
        terms += [f"-site:{domain}" for domain in request.exclude_domains]
        query = " ".join(terms)
        kwargs: dict = {"max_results": limit}
        if self.options.region:
            kwargs["region"] = self.options.region
        if self.options.safesearch:
            kwargs["safesearch"] = self.options.safesearch
        cancel = getattr(ctx, "cancel", None)
        deadline = time.monotonic() + self.timeout
        failures: list[str] = []
        blocked = empty = 0
        for backend in backends:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                failures.append(f"{backend}: not tried, no time left")
                continue
            seconds = max(1, math.ceil(remaining))

            def work(backend: str = backend, seconds: int = seconds) -> Any:
                with self._slots:  # waiting here counts against the call's deadline
                    if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                        return []  # the caller has given up: do not query for nobody
                    return library(timeout=seconds).text(query, backend=backend, **kwargs)

            try:
                results = run_interruptible(work, cancel=cancel, deadline=deadline)
            except InterruptedError:
                raise self._error("cancelled") from None
            except TimeoutError:
                raise self._error(
                    f"timed out after {self.timeout:g} s waiting for the {backend} backend",
                    retryable=True,
                    kind=ErrorKind.TIMEOUT,
                ) from None
            except Exception as exc:  # noqa: BLE001 - the library's errors, in words
                if _blocked(exc, exceptions):
                    blocked += 1
                    failures.append(f"{backend}: rate limited or asked for a CAPTCHA")
                elif "no results" in str(exc).lower():
                    empty += 1
                    failures.append(f"{backend}: no results")
                elif isinstance(exc, getattr(exceptions, "TimeoutException", ())):
                    failures.append(f"{backend}: timed out")
                else:
                    failures.append(f"{backend}: {_one_line(exc) or type(exc).__name__}")
                continue
            hits = self._hits(results, limit)
            if hits:
                notice = f"Keyless results from the {backend} backend (ddgs library)."
                return SearchResponse(hits=hits, notices=(notice,), warnings=tuple(failures))
            empty += 1
            failures.append(f"{backend}: no results")
        tried = "; ".join(failures)
        if blocked:
            raise self._error(
                f"the search engines refused the query ({tried}). {KEYED_HINT}",
                code="rate_limited",
                retryable=True,
                kind=ErrorKind.RATE_LIMIT,
            )
        if empty == len(backends):
            # An engine that blocks us often answers with an empty page, so say so.
            return SearchResponse(
                notices=(
                    f"No keyless backend returned results ({', '.join(backends)}); "
                    f"engines also answer nothing when they block automated queries. {KEYED_HINT}",
                ),
            )
        raise self._error(
            f"no backend answered ({tried}). {KEYED_HINT}", retryable=True, kind=ErrorKind.OUTAGE
        )

    def _backends(self, known: frozenset) -> tuple[str, ...]:
        """The backends to try: the configured ones (checked against the library's), else the
        defaults the installed library has."""
        if self.backends:
            unknown = [b for b in self.backends if known and b not in known]
            if unknown:
                raise self._error(
                    f"unknown backend(s) {', '.join(map(repr, unknown))} in options.backends; "
                    f"known: {', '.join(sorted(known))}"
                )
            return self.backends
        return tuple(b for b in DEFAULT_BACKENDS if not known or b in known) or ("auto",)

    def _hits(self, results: Any, limit: int) -> tuple[SearchHit, ...]:
        if not isinstance(results, list):
            return ()
        hits = []
        for item in results:
            if not isinstance(item, dict):
                continue
            url = item.get("href") or item.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            title = item.get("title") if isinstance(item.get("title"), str) else ""
            body = item.get("body") if isinstance(item.get("body"), str) else ""
            hits.append(
                SearchHit(
                    title=" ".join(title.split()) or url,
                    url=url,
                    snippet=" ".join(body.split()),
                )
            )
        return tuple(hits[:limit])


def _create(config: ProviderConfig) -> DdgsProvider:
    return DdgsProvider(config.name, config.options or DdgsOptions())


DDGS = ProviderType(
    name="ddgs",
    label="ddgs (keyless)",
    factory=_create,
    options_class=DdgsOptions,
    setup_hint='To search without a key, add {"name": "free", "type": "ddgs"} to "providers" and run: '
    f"{INSTALL} (free, but the search engines it reads rate-limit it).",
    search=Search(filters=DOMAIN_FILTERS, default_limit=DEFAULT_LIMIT),
)


@hookimpl
def register_provider_types(register):
    """Register the ``ddgs`` provider type."""
    register(DDGS)
