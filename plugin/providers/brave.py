"""Brave: web search from Brave's own index (``GET /res/v1/web/search``), with
``X-Subscription-Token: <key>``."""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from typing import Any

from attrs import frozen

from ..api import (
    DATE_FILTERS,
    DOMAIN_FILTERS,
    ApiKey,
    ApiOptions,
    HttpClient,
    ProviderConfig,
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
)

__all__ = ["BraveOptions", "BraveProvider", "brave_error_text", "brave_rate_limit_text"]

DEFAULT_BASE = "https://api.search.brave.com/res/v1"
DEFAULT_TIMEOUT = 30.0
DEFAULT_LIMIT = 10
MAX_COUNT = 20  # Brave's largest page
SNIPPET_MAX = 500
#: The start of a freshness range when only an end date is given (Brave wants both ends).
EARLIEST = "1970-01-01"


@frozen(kw_only=True)
class BraveOptions(ApiOptions):
    """Options of a ``brave`` provider."""

    default_search_limit: int | None = option(None, validator=between(1, MAX_COUNT))
    country: str | None = option(None)
    search_lang: str | None = option(None)
    safesearch: str | None = option(None, validator=one_of("off", "moderate", "strict"))
    extra_snippets: bool = option(True)


_TAG = re.compile(r"<[^<>]*>")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


def clean_text(text: Any) -> str:
    """Brave's description markup (``<strong>``) removed and entities unescaped, on one line."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", text)).replace("\xa0", " ").split())


def brave_error_text(body: Any) -> tuple[str, str | None] | None:
    """Brave's own error words from ``{type: "ErrorResponse", error: {code, detail, meta}}``,
    with the parameter problems of a 422 (``meta.errors[].loc/msg``)."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    error = body["error"]
    detail = error.get("detail") if isinstance(error.get("detail"), str) else None
    code = error.get("code") if isinstance(error.get("code"), str) and error["code"] else None
    meta = error.get("meta") if isinstance(error.get("meta"), dict) else {}
    problems = []
    for item in meta.get("errors") or []:
        if not isinstance(item, dict) or not isinstance(item.get("msg"), str):
            continue
        loc = item.get("loc")
        where = loc[-1] if isinstance(loc, list) and loc and isinstance(loc[-1], str) else None
        problems.append(f"{where}: {item['msg']}" if where else item["msg"])
    parts = [" ".join(detail.split())] if detail and detail.strip() else []
    if problems:
        parts.append("; ".join(problems[:5]))
    if not parts:
        return (code, code) if code else None
    message = ": ".join(parts)
    return (f"{message} (code {code})" if code else message), code


def _span(seconds: float) -> str:
    if seconds >= 86400 * 2:
        return f"{seconds / 86400:.0f} days"
    if seconds >= 7200:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _numbers(value: str | None) -> list[float | None]:
    out: list[float | None] = []
    for part in (value or "").split(","):
        part = part.split(";")[0].strip()
        try:
            out.append(float(part))
        except ValueError:
            out.append(None)
    return out


def brave_rate_limit_text(status: int, headers: Any) -> str | None:
    """What Brave's ``X-RateLimit-*`` headers say on a 429: each window (per second, per month)
    with what is left and when it resets."""
    if status != 429:
        return None
    limits = _numbers(headers.get("X-RateLimit-Limit"))
    remaining = _numbers(headers.get("X-RateLimit-Remaining"))
    resets = _numbers(headers.get("X-RateLimit-Reset"))
    windows = [
        float(match) for match in re.findall(r"w=(\d+)", headers.get("X-RateLimit-Policy") or "")
    ]
    parts = []
    for index, limit in enumerate(limits):
        if limit is None:
            continue
        left = remaining[index] if index < len(remaining) else None
        window = windows[index] if index < len(windows) else None
        text = f"{left:.0f} of {limit:.0f} left" if left is not None else f"limit {limit:.0f}"
        if window:
            text += f" per {_span(window)}" if window != 1 else " per second"
        reset = resets[index] if index < len(resets) else None
        if reset is not None:
            text += f", resets in {_span(reset)}"
        parts.append(text)
    return "quota: " + "; ".join(parts) if parts else None


def brave_query(request: SearchRequest) -> str:
    """The query with the domain filters as operators: ``site:a OR site:b`` (several included
    domains are alternatives) and ``-site:c``."""
    terms = [request.query]
    if request.include_domains:
        sites = " OR ".join(f"site:{domain}" for domain in request.include_domains)
        terms.append(f"({sites})" if len(request.include_domains) > 1 else sites)
    terms += [f"-site:{domain}" for domain in request.exclude_domains]
    return " ".join(terms)


def _day(value: str | None) -> str | None:
    return value[:10] if value and _DAY.match(value) else None


def freshness(request: SearchRequest) -> str | None:
    """The published-date filters as Brave's ``freshness`` range ``YYYY-MM-DDtoYYYY-MM-DD``
    (an open end becomes today, an open start :data:`EARLIEST`)."""
    start, end = _day(request.start_published_date), _day(request.end_published_date)
    if start is None and end is None:
        return None
    today = datetime.now(timezone.utc).date().isoformat()
    return f"{start or EARLIEST}to{end or today}"


class BraveProvider:
    """A configured Brave Search API subscription."""

    def __init__(self, name: str, api_key: str, options: BraveOptions):
        self.name = name
        self.options = options
        self.base_url = (options.base_url or DEFAULT_BASE).rstrip("/")
        self.http = HttpClient(
            provider=f"Brave ({name})" if name != "brave" else "Brave",
            base_url=self.base_url,
            headers={"X-Subscription-Token": api_key, "Accept": "application/json"},
            secrets=[api_key],
            timeout=options.timeout_seconds or DEFAULT_TIMEOUT,
            error_text=brave_error_text,
            error_headers=brave_rate_limit_text,
        )

    def close(self) -> None:
        """Close the HTTP session (the registry does when this entry is replaced)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"BraveProvider(name={self.name!r}, base_url={self.base_url!r})"

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query: domains as ``site:`` / ``-site:``, dates as a ``freshness`` range,
        at most 20 results (Brave's largest page)."""
        wanted = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        count = min(wanted, MAX_COUNT)
        params: dict = {"q": brave_query(request), "count": count}
        fresh = freshness(request)
        if fresh:
            params["freshness"] = fresh
        if self.options.extra_snippets:
            params["extra_snippets"] = "true"
        for key, value in (
            ("country", self.options.country),
            ("search_lang", self.options.search_lang),
            ("safesearch", self.options.safesearch),
        ):
            if value:
                params[key] = value
        body, _ = self.http.request_json("GET", "/web/search", params=params, ctx=ctx)
        response = self._parse(body, count)
        if wanted > MAX_COUNT:
            response = SearchResponse(
                hits=response.hits,
                notices=response.notices
                + (f"Brave returns at most {MAX_COUNT} results per query.",),
            )
        return response

    def _parse(self, body: Any, count: int) -> SearchResponse:
        if not isinstance(body, dict):
            raise self.http.shape_error("the body is not an object")
        web = body.get("web")
        if web is None:
            items: list = []  # Brave leaves "web" out when nothing matched
        elif not isinstance(web, dict):
            raise self.http.shape_error(f"'web' should be an object, got {type(web).__name__}")
        else:
            items = web.get("results", [])
            if not isinstance(items, list):
                raise self.http.shape_error(
                    f"'web.results' should be a list, got {type(items).__name__}"
                )
        hits = []
        for item in items:
            if not isinstance(item, dict):
                continue
            url = item.get("url")
            if not isinstance(url, str) or not url.strip():
                continue
            pieces = [clean_text(item.get("description"))]
            extra = item.get("extra_snippets")
            if isinstance(extra, list):
                pieces += [clean_text(s) for s in extra if isinstance(s, str)]
            snippet = one_line(" … ".join(p for p in dict.fromkeys(pieces) if p), SNIPPET_MAX)
            published = item.get("page_age") if isinstance(item.get("page_age"), str) else None
            if not published and isinstance(item.get("age"), str):
                published = item["age"]
            hits.append(
                SearchHit(
                    title=clean_text(item.get("title")) or url,
                    url=url,
                    snippet=snippet,
                    published=published or None,
                )
            )
        notices = []
        query = body.get("query") if isinstance(body.get("query"), dict) else {}
        altered = query.get("altered")
        if isinstance(altered, str) and altered.strip():
            notices.append(f'Brave searched for "{" ".join(altered.split())}" instead.')
        return SearchResponse(hits=tuple(hits[:count]), notices=tuple(notices))


def _create(config: ProviderConfig) -> BraveProvider:
    return BraveProvider(config.name, config.api_key, config.options or BraveOptions())


BRAVE = ProviderType(
    name="brave",
    label="Brave",
    factory=_create,
    options_class=BraveOptions,
    precedence=30,
    search=Search(
        filters=DOMAIN_FILTERS | DATE_FILTERS,
        default_limit=DEFAULT_LIMIT,
    ),
    key=ApiKey(
        env="BRAVE_API_KEY",
        env_implies_provider=True,
        shared_file_key="braveApiKey",
        url="https://api-dashboard.search.brave.com/app/keys",
    ),
)


@hookimpl
def register_provider_types(register):
    """Register the ``brave`` provider type."""
    register(BRAVE)
