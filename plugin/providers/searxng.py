"""SearXNG: keyless web search from a self-hosted metasearch instance
(``GET {baseUrl}/search?q=…&format=json``).

SearXNG answers JSON only when its ``settings.yml`` lists ``json`` under ``search.formats``; it
answers 403 otherwise (``searx/webapp.py``), and that is what the error says to change. Its
base URL is the user's own server, often on the LAN: the type is ``self_hosted``, so the runtime
checks that host with the network guard before each call, and its answers are never followed
through a redirect.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from ..api import (
    DATE_FILTERS,
    DOMAIN_FILTERS,
    ApiOptions,
    ErrorKind,
    HttpClient,
    ProviderError,
    ProviderType,
    Search,
    SearchHit,
    SearchRequest,
    SearchResponse,
    between,
    hookimpl,
    list_field,
    one_line,
    one_of,
    option,
    text_field,
)

__all__ = [
    "JSON_FORMAT_FIX",
    "SEARXNG",
    "SearxngOptions",
    "SearxngProvider",
    "searxng_error_text",
    "time_range",
]

DEFAULT_TIMEOUT = 20.0
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
SNIPPET_MAX = 500
#: SearXNG's tab categories (``categories_as_tabs`` in its default settings.yml).
CATEGORIES = (
    "general",
    "news",
    "science",
    "it",
    "images",
    "videos",
    "music",
    "files",
    "map",
    "social media",
)
#: ``category`` values of ``web_search`` (Exa's words) that have a SearXNG category.
CATEGORY_OF = {"news": "news", "research paper": "science"}
#: SearXNG's time ranges and the days each reaches back.
TIME_RANGES = (("day", 1), ("week", 7), ("month", 31), ("year", 366))
#: The one change to SearXNG's settings.yml that enables the JSON API.
JSON_FORMAT_FIX = (
    'in the instance\'s settings.yml, under "search:", set "formats: [html, json]" '
    "(keep any other format listed there) and restart SearXNG"
)


@frozen(kw_only=True)
class SearxngOptions(ApiOptions):
    """Options of a ``searxng`` provider: ``baseUrl`` (required) is the instance's root."""

    default_search_limit: int | None = option(None, validator=between(1, MAX_LIMIT))
    categories: list[str] | None = option(None)
    engines: list[str] | None = option(None)
    language: str | None = option(None)
    safesearch: int | None = option(None, validator=one_of(0, 1, 2))


def searxng_error_text(body: Any) -> str | None:
    """SearXNG's own words on a 400 or 500: ``{"error": "No query"}``."""
    if isinstance(body, dict):
        return text_field(body.get("error"))
    return None


def instance_root(base_url: str) -> str:
    """The instance's root from what a user pastes: no trailing slash, no ``/search`` path."""
    root = base_url.strip().split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return root.removesuffix("/search").rstrip("/")


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def time_range(start: str | None, today: date | None = None) -> str | None:
    """The smallest SearXNG time range (day, week, month, year) reaching back to *start*
    (``None``: no start, or one more than a year ago, which no range covers)."""
    first = _day(start)
    if first is None:
        return None
    days = ((today or datetime.now(timezone.utc).date()) - first).days
    return next((name for name, reach in TIME_RANGES if days <= reach), None)


def _host(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.lower().rstrip(".")


def _on(host: str, domain: str) -> bool:
    domain = domain.lower().strip().rstrip(".").removeprefix("www.")
    return host == domain or host.endswith("." + domain) or host == "www." + domain


class SearxngProvider:
    """A configured SearXNG instance."""

    def __init__(self, name: str, options: SearxngOptions):
        self.name = name
        self.options = options
        self.base_url = instance_root(options.base_url) if options.base_url else None
        self.label = f"SearXNG ({name})" if name != "searxng" else "SearXNG"
        self.http = HttpClient(
            provider=self.label,
            base_url=self.base_url or "",
            headers={"Accept": "application/json"},
            timeout=options.timeout_seconds or DEFAULT_TIMEOUT,
            error_text=searxng_error_text,
            follow_redirects=False,
        )

    def close(self) -> None:
        """Close the HTTP session (the registry does when this entry is replaced)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"SearxngProvider(name={self.name!r}, base_url={self.base_url!r})"

    def _category(self, request: SearchRequest) -> str | None:
        if request.category is None:
            return ",".join(self.options.categories) if self.options.categories else None
        wanted = request.category.strip().lower()
        if wanted in CATEGORY_OF:
            return CATEGORY_OF[wanted]
        if wanted in CATEGORIES:
            return wanted
        raise ProviderError(
            f"{self.label}: category {one_line(request.category, 60)!r} has no SearXNG "
            f"counterpart; use news, research paper (SearXNG's science) or one of SearXNG's "
            f"own: {', '.join(CATEGORIES)}",
            provider=self.label,
            code="category",
        )

    def params(self, request: SearchRequest) -> tuple[dict, str | None]:
        """The query parameters for *request*, and the time range used (if any)."""
        terms = [request.query]
        if len(request.include_domains) == 1:
            terms.append(f"site:{request.include_domains[0]}")
        terms += [f"-site:{domain}" for domain in request.exclude_domains]
        params: dict = {"q": " ".join(terms), "format": "json", "pageno": 1}
        category = self._category(request)
        if category:
            params["categories"] = category
        if self.options.engines:
            params["engines"] = ",".join(self.options.engines)
        if self.options.language:
            params["language"] = self.options.language
        if self.options.safesearch is not None:
            params["safesearch"] = self.options.safesearch
        span = time_range(request.start_published_date)
        if span:
            params["time_range"] = span
        return params, span

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query: domains as ``site:`` operators and checked on every result, dates as
        SearXNG's time range and checked on every dated result."""
        if not self.base_url:
            raise ProviderError(
                f'{self.label}: no baseUrl: add "options": {{"baseUrl": '
                '"http://127.0.0.1:8888"}} (your instance\'s address) to its entry',
                provider=self.label,
                code="config",
            )
        limit = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        params, span = self.params(request)
        headers = {"Accept-Language": self.options.language} if self.options.language else None
        try:
            body, _ = self.http.request_json(
                "GET", "/search", params=params, headers=headers, ctx=ctx
            )
        except ProviderError as exc:
            if exc.status == 403:  # the only 403 of searx/webapp.py
                exc.message = (
                    f"{self.label}: HTTP 403 Forbidden for format=json, which SearXNG answers "
                    f"when its JSON format is not enabled: {JSON_FORMAT_FIX}"
                )
            elif exc.status == 429:
                exc.message = (
                    f"{exc.message} (on your own instance: SearXNG's limiter refuses API "
                    'clients; set "server: limiter: false" in its settings.yml, or list this '
                    "machine under botdetection.ip_lists.pass_ip in limiter.toml)"
                )
            exc.args = (exc.message,)
            raise
        return self._parse(body, request, limit, span)

    def _parse(
        self, body: Any, request: SearchRequest, limit: int, span: str | None
    ) -> SearchResponse:
        if not isinstance(body, dict):
            raise self.http.shape_error("the body is not an object")
        results = body.get("results")
        if not isinstance(results, list):
            raise self.http.shape_error(f"'results' should be a list, got {type(results).__name__}")
        start, end = _day(request.start_published_date), _day(request.end_published_date)
        hits, dropped = [], 0
        for item in results:
            if not isinstance(item, dict):
                continue
            url = text_field(item.get("url"))
            if url is None or not url.lower().startswith(("http://", "https://")):
                continue
            host = _host(url)
            if request.include_domains and not any(_on(host, d) for d in request.include_domains):
                dropped += 1
                continue
            if any(_on(host, d) for d in request.exclude_domains):
                dropped += 1
                continue
            published = text_field(item.get("publishedDate"))
            day = _day(published)
            if day is not None and ((start and day < start) or (end and day > end)):
                dropped += 1
                continue
            hits.append(
                SearchHit(
                    title=" ".join((text_field(item.get("title")) or url).split()),
                    url=url,
                    snippet=one_line(text_field(item.get("content")) or "", SNIPPET_MAX),
                    published=published,
                    author=text_field(item.get("author")),
                )
            )
        silent = self._unresponsive(body)
        if not hits and silent and not dropped:  # nothing found because engines failed
            raise ProviderError(
                f"{self.label}: no results, and these engines failed: {'; '.join(silent)}",
                provider=self.label,
                code="engines",
                kind=ErrorKind.OUTAGE,
            )
        notices = [
            f"Did you mean: {one_line(c, 200)}"
            for c in list_field(body.get("corrections"))
            if text_field(c)
        ][:1]
        for answer in list_field(body.get("answers"))[:2]:
            text = answer.get("answer") if isinstance(answer, dict) else answer
            if text_field(text):
                notices.append(f"SearXNG answer: {one_line(text, 300)}")
        if request.start_published_date or request.end_published_date:
            window = f"the past {span}" if span else "any time"
            notices.append(
                f"SearXNG filters dates by a time range only ({window}); results dated outside "
                "the dates asked were removed, undated ones kept."
            )
        warnings = [f"SearXNG engines that did not answer: {'; '.join(silent)}"] if silent else []
        related = tuple(
            s for s in (text_field(x) for x in list_field(body.get("suggestions"))) if s
        )
        return SearchResponse(
            hits=tuple(hits[:limit]),
            related=related[:8],
            notices=tuple(notices),
            warnings=tuple(warnings),
        )

    @staticmethod
    def _unresponsive(body: dict) -> list[str]:
        """``unresponsive_engines`` (``[[engine, reason], …]``) as ``engine: reason``."""
        found = []
        for pair in list_field(body.get("unresponsive_engines")):
            if isinstance(pair, list) and pair and text_field(pair[0]):
                reason = text_field(pair[1]) if len(pair) > 1 else None
                found.append(
                    f"{one_line(pair[0], 40)}: {one_line(reason, 80)}" if reason else pair[0]
                )
        return found[:10]


def _setup_check(options: Any) -> str | None:
    """What ``pi-web config`` says when the entry cannot search yet."""
    if not getattr(options, "base_url", None):
        return (
            'no baseUrl: add "options": {"baseUrl": "http://127.0.0.1:8888"} (your '
            "instance's address) to its entry"
        )
    return None


def _create(config: Any) -> SearxngProvider:
    return SearxngProvider(config.name, config.options or SearxngOptions())


SEARXNG = ProviderType(
    name="searxng",
    label="SearXNG",
    factory=_create,
    options_class=SearxngOptions,
    precedence=50,
    search=Search(
        filters=DOMAIN_FILTERS | DATE_FILTERS | {"category"},
        default_limit=DEFAULT_LIMIT,
    ),
    setup_check=_setup_check,
    setup_hint='To search through your own SearXNG instance (keyless), add {"name": "searx", '
    '"type": "searxng", "options": {"baseUrl": "http://127.0.0.1:8888"}} to "providers" (with '
    '"allowPrivateNetwork": true for an instance on this machine or your network); its '
    'settings.yml must list json under "search: formats".',
    self_hosted=True,
)


@hookimpl
def register_provider_types(register):
    """Register the ``searxng`` provider type."""
    register(SEARXNG)
