"""Tavily: web search (``POST /search``) and page extraction (``POST /extract``), with
``Authorization: Bearer <key>``."""

from __future__ import annotations

import time
from typing import Any

from attrs import frozen

from ..api import (
    ErrorKind,
    DATE_FILTERS,
    DEFAULT_TEXT_MAX_CHARACTERS,
    DOMAIN_FILTERS,
    ApiKey,
    ApiOptions,
    Fetch,
    FetchedPage,
    FetchRequest,
    FetchResponse,
    HttpClient,
    ProviderConfig,
    ProviderError,
    ProviderType,
    Search,
    SearchHit,
    SearchRequest,
    SearchResponse,
    between,
    hookimpl,
    number_field,
    one_line,
    one_of,
    option,
    text_field,
    url_key,
)

__all__ = ["TavilyOptions", "TavilyProvider", "tavily_error_text"]

DEFAULT_BASE = "https://api.tavily.com"
DEFAULT_TIMEOUT = 30.0
DEFAULT_FETCH_TIMEOUT = 60.0
DEFAULT_LIMIT = 5
MAX_RESULTS = 20
MAX_EXTRACT_URLS = 20  # per /extract request
SNIPPET_MAX = 500
#: Tavily's own statuses, in words (its bodies say little more than the status).
PLAN_LIMITS = {
    432: "your Tavily plan's credit limit is used up; upgrade the plan or wait for the "
    "monthly reset (https://app.tavily.com)",
    433: "your pay-as-you-go spending limit is reached; raise it on the Tavily dashboard "
    "(https://app.tavily.com)",
}


@frozen(kw_only=True)
class TavilyOptions(ApiOptions):
    """Options of a ``tavily`` provider."""

    default_search_limit: int | None = option(None, validator=between(1, MAX_RESULTS))
    default_fetch_text_max_characters: int | None = option(None, validator=between(1, 10_000_000))
    search_depth: str | None = option(None, validator=one_of("basic", "advanced"))
    topic: str | None = option(None, validator=one_of("general", "news", "finance"))
    extract_depth: str | None = option(None, validator=one_of("basic", "advanced"))


def tavily_error_text(body: Any) -> str | None:
    """Tavily's own error words: ``{detail: {error}}``, ``{detail: "..."}`` or a validation
    list ``{detail: [{loc, msg}]}``."""
    if not isinstance(body, dict):
        return None
    detail = body.get("detail", body.get("error"))
    if isinstance(detail, dict):
        detail = detail.get("error") or detail.get("message")
    if isinstance(detail, list):
        found = []
        for item in detail[:5]:
            if isinstance(item, dict) and isinstance(item.get("msg"), str):
                loc = item.get("loc")
                where = loc[-1] if isinstance(loc, list) and loc else None
                found.append(f"{where}: {item['msg']}" if where is not None else item["msg"])
        detail = "; ".join(found)
    if isinstance(detail, str) and detail.strip():
        return " ".join(detail.split())
    return None


def _day(value: str | None) -> str | None:
    return value[:10] if value else None


class TavilyProvider:
    """A configured Tavily account."""

    def __init__(self, name: str, api_key: str, options: TavilyOptions):
        self.name = name
        self.options = options
        self.base_url = (options.base_url or DEFAULT_BASE).rstrip("/")
        self.http = HttpClient(
            provider=f"Tavily ({name})" if name != "tavily" else "Tavily",
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {api_key}"},
            secrets=[api_key],
            timeout=options.timeout_seconds or DEFAULT_TIMEOUT,
            error_text=tavily_error_text,
        )

    def close(self) -> None:
        """Close the HTTP session (the registry does when this entry is replaced)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"TavilyProvider(name={self.name!r}, base_url={self.base_url!r})"

    def _post(self, path: str, body: dict, ctx: Any, timeout: float | None = None) -> Any:
        try:
            result, _ = self.http.request_json(
                "POST", path, json_body=body, ctx=ctx, timeout=timeout
            )
        except ProviderError as exc:
            if exc.status in PLAN_LIMITS:
                exc.message = f"{exc.message} ({PLAN_LIMITS[exc.status]})"
                exc.kind = ErrorKind.QUOTA
            raise
        if not isinstance(result, dict):
            raise self.http.shape_error("the body is not an object")
        return result

    def _list(self, body: dict, key: str, required: bool = True) -> list:
        value = body.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            raise self.http.shape_error(f"'{key}' should be a list, got {type(value).__name__}")
        return value

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query; domain and date filters are Tavily's own fields."""
        limit = min(
            request.limit or self.options.default_search_limit or DEFAULT_LIMIT, MAX_RESULTS
        )
        body: dict = {"query": request.query, "max_results": limit, "include_answer": False}
        if request.include_domains:
            body["include_domains"] = list(request.include_domains)
        if request.exclude_domains:
            body["exclude_domains"] = list(request.exclude_domains)
        if request.start_published_date:
            body["start_date"] = _day(request.start_published_date)
        if request.end_published_date:
            body["end_date"] = _day(request.end_published_date)
        if self.options.search_depth:
            body["search_depth"] = self.options.search_depth
        if self.options.topic:
            body["topic"] = self.options.topic
        result = self._post("/search", body, ctx)
        hits = []
        for item in self._list(result, "results"):
            if not isinstance(item, dict):
                continue
            url = text_field(item.get("url"))
            if url is None:
                continue
            hits.append(
                SearchHit(
                    title=" ".join((text_field(item.get("title")) or url).split()),
                    url=url,
                    snippet=one_line(text_field(item.get("content")) or "", SNIPPET_MAX),
                    published=text_field(item.get("published_date")),
                    score=number_field(item.get("score")),
                )
            )
        notices = ()
        if (request.limit or 0) > MAX_RESULTS:
            notices = (f"Tavily returns at most {MAX_RESULTS} results per query.",)
        return SearchResponse(hits=tuple(hits[:limit]), notices=notices)

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Extract every URL's text (markdown), at most 20 URLs per request; Tavily's
        ``failed_results`` become per-URL failures."""
        max_chars = (
            request.text_max_characters
            or self.options.default_fetch_text_max_characters
            or DEFAULT_TEXT_MAX_CHARACTERS
        )
        budget = self.options.timeout_seconds or DEFAULT_FETCH_TIMEOUT
        deadline = time.monotonic() + budget
        found: dict[str, dict] = {}
        failed: dict[str, str] = {}
        urls = list(dict.fromkeys(request.urls))
        for start in range(0, len(urls), MAX_EXTRACT_URLS):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.http.error(f"timed out after {budget:g} s")
            body: dict = {"urls": urls[start : start + MAX_EXTRACT_URLS], "format": "markdown"}
            if self.options.extract_depth:
                body["extract_depth"] = self.options.extract_depth
            result = self._post("/extract", body, ctx, timeout=remaining)
            for item in self._list(result, "results"):
                if isinstance(item, dict) and isinstance(item.get("url"), str):
                    found.setdefault(item["url"], item)
                    found.setdefault(url_key(item["url"]), item)
            for item in self._list(result, "failed_results", required=False):
                if isinstance(item, dict) and isinstance(item.get("url"), str):
                    error = text_field(item.get("error")) or "Tavily could not extract this URL"
                    failed.setdefault(item["url"], error)
                    failed.setdefault(url_key(item["url"]), error)
        pages = []
        for url in request.urls:
            item = found.get(url) or found.get(url_key(url))
            if item is not None:
                pages.append(self._page(url, item, max_chars))
                continue
            error = failed.get(url) or failed.get(url_key(url))
            pages.append(
                FetchedPage(
                    url=url,
                    ok=False,
                    error=" ".join((error or "no result returned by Tavily").split()),
                )
            )
        return FetchResponse(pages=tuple(pages))

    def _page(self, url: str, item: dict, max_chars: int) -> FetchedPage:
        notes = []
        text = item.get("raw_content") if isinstance(item.get("raw_content"), str) else None
        if text is None:
            notes.append("Tavily returned no text for this URL")
        elif len(text) > max_chars:
            text = text[:max_chars]
            notes.append(f"text cut at {max_chars} characters; pass text_max_characters for more")
        final_url = text_field(item.get("url"))
        return FetchedPage(
            url=url,
            ok=True,
            title=text_field(item.get("title")),
            final_url=final_url if final_url and final_url != url else None,
            text=text,
            notes=tuple(notes),
        )


def _create(config: ProviderConfig) -> TavilyProvider:
    return TavilyProvider(config.name, config.api_key, config.options or TavilyOptions())


TAVILY = ProviderType(
    name="tavily",
    label="Tavily",
    factory=_create,
    options_class=TavilyOptions,
    precedence=40,
    search=Search(
        filters=DOMAIN_FILTERS | DATE_FILTERS,
        default_limit=DEFAULT_LIMIT,
    ),
    fetch=Fetch(),
    key=ApiKey(
        env="TAVILY_API_KEY",
        env_implies_provider=True,
        shared_file_key="tavilyApiKey",
        url="https://app.tavily.com/home",
    ),
)


@hookimpl
def register_provider_types(register):
    """Register the ``tavily`` provider type."""
    register(TAVILY)
