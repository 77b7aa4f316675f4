"""Exa: metadata-only web search (``POST /search``), page contents (``POST /contents``) and
summaries (``POST /contents`` with ``summary: {query}``), with ``x-api-key: <key>``.

Exa's ``notices`` (text meant for the model) are shown under the query; its ``warnings``
(fields that had no effect) go to the details.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import frozen

from ..api import (
    DATE_FILTERS,
    DOMAIN_FILTERS,
    ApiKey,
    ApiOptions,
    Fetch,
    FetchedPage,
    FetchRequest,
    FetchResponse,
    HttpClient,
    ProviderConfig,
    ProviderType,
    Search,
    SearchHit,
    SearchRequest,
    SearchResponse,
    Summarize,
    SummarizeRequest,
    SummaryResponse,
    between,
    hookimpl,
    list_field,
    number_field,
    one_line,
    one_of,
    option,
    text_field,
    url_key,
)

__all__ = ["ExaOptions", "ExaProvider", "LANGUAGE_NAMES", "exa_error_text", "exa_messages"]

DEFAULT_BASE = "https://api.exa.ai"
DEFAULT_TIMEOUT = 30.0
DEFAULT_LIMIT = 5
SNIPPET_MAX = 300
#: Page text asked of /contents by default, and the most Exa accepts.
TEXT_CHARACTERS = 100_000
MAX_TEXT_CHARACTERS = 1_000_000
SUMMARIZE_TIMEOUT = 120.0
#: The summary questions asked of Exa for each ``summary_type``.
SUMMARY_QUERIES = {
    "summary": (
        "Summarize this page in a few concise paragraphs of prose, keeping its key facts, "
        "figures and conclusions."
    ),
    "takeaway": (
        "List the key takeaways of this page as a bulleted list: one short point per line, "
        'each line starting with "- ".'
    ),
}
#: Languages a summary can be asked in (the codes the summarize tool documents), by code.
LANGUAGE_NAMES = {
    "BG": "Bulgarian", "CS": "Czech", "DA": "Danish", "DE": "German", "EL": "Greek",
    "EN": "English", "ES": "Spanish", "ET": "Estonian", "FI": "Finnish", "FR": "French",
    "HU": "Hungarian", "ID": "Indonesian", "IT": "Italian", "JA": "Japanese", "KO": "Korean",
    "LT": "Lithuanian", "LV": "Latvian", "NB": "Norwegian Bokmål", "NL": "Dutch",
    "PL": "Polish", "PT": "Portuguese", "RO": "Romanian", "RU": "Russian", "SK": "Slovak",
    "SL": "Slovenian", "SV": "Swedish", "TR": "Turkish", "UK": "Ukrainian",
    "ZH": "Simplified Chinese", "ZH-HANT": "Traditional Chinese",
}  # fmt: skip


@frozen(kw_only=True)
class ExaOptions(ApiOptions):
    """Options of an ``exa`` provider."""

    default_search_limit: int | None = option(None, validator=between(1, 100))
    default_fetch_text_max_characters: int | None = option(None, validator=between(1, 10_000_000))
    #: Exa's search ``type``: ``auto`` (the default), ``lite`` (cached pages only, cheaper) or
    #: ``deep`` (slower, more thorough).
    search_type: str = option("auto", validator=one_of("auto", "lite", "deep"))
    #: Fill each result's snippet line from Exa's highlights (free on search); off by default,
    #: so search stays metadata only.
    search_highlights: bool = option(False)
    #: Page freshness for ``web_fetch`` and ``summarize``: 0 always crawls live, -1 uses the
    #: cache only, N crawls live when the cached page is older than N hours. Unset: Exa decides.
    max_age_hours: int | None = option(None, validator=between(-1, 87_600))


def exa_error_text(body: Any) -> tuple[str, str | None] | None:
    """Exa's own error words from ``{requestId?, error, tag?}``: ``"TAG: message"`` and the tag."""
    if not isinstance(body, dict):
        return None
    message = body.get("error")
    tag = body.get("tag")
    tag = tag if isinstance(tag, str) and tag else None
    if not isinstance(message, str) or not message.strip():
        return (tag, tag) if tag else None
    message = " ".join(message.split())
    return (f"{tag}: {message}" if tag else message), tag


def exa_messages(value: Any) -> tuple[str, ...]:
    """Exa's ``notices`` or ``warnings`` as one-line strings: a string, a list of strings, or
    a list of objects with ``message`` (or ``text``/``notice``/``warning``, and ``field``)."""
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        return ()
    found = []
    for item in value[:20]:
        if isinstance(item, dict):
            text = next(
                (
                    item[key]
                    for key in ("message", "text", "notice", "warning", "detail")
                    if isinstance(item.get(key), str)
                ),
                None,
            )
            field = item.get("field") or item.get("path")
            if text and isinstance(field, str) and field not in text:
                text = f"{field}: {text}"
            item = text
        if isinstance(item, str) and item.strip():
            found.append(one_line(item, 500))
    return tuple(dict.fromkeys(found))


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str) and item.strip())


class ExaProvider:
    """A configured Exa account."""

    def __init__(self, name: str, api_key: str, options: ExaOptions):
        self.name = name
        self.options = options
        self.base_url = (options.base_url or DEFAULT_BASE).rstrip("/")
        self.http = HttpClient(
            provider=f"Exa ({name})" if name != "exa" else "Exa",
            base_url=self.base_url,
            headers={"x-api-key": api_key},
            secrets=[api_key],
            timeout=options.timeout_seconds or DEFAULT_TIMEOUT,
            error_text=exa_error_text,
        )

    def close(self) -> None:
        """Close the HTTP session (the registry does when this entry is replaced)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"ExaProvider(name={self.name!r}, base_url={self.base_url!r})"

    def _results(self, body: Any) -> list:
        if not isinstance(body, dict):
            raise self.http.shape_error("the body is not an object")
        results = body.get("results")
        if not isinstance(results, list):
            raise self.http.shape_error(f"'results' should be a list, got {type(results).__name__}")
        return results

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query for metadata only (no ``contents``): title, URL, date, author, score."""
        limit = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        body: dict = {"query": request.query, "type": self.options.search_type, "numResults": limit}
        if self.options.search_highlights:
            body["contents"] = {"highlights": True}
        if request.include_domains:
            body["includeDomains"] = list(request.include_domains)
        if request.exclude_domains:
            body["excludeDomains"] = list(request.exclude_domains)
        if request.start_published_date:
            body["startPublishedDate"] = request.start_published_date
        if request.end_published_date:
            body["endPublishedDate"] = request.end_published_date
        if request.category:
            body["category"] = request.category
        result, _ = self.http.request_json("POST", "/search", json_body=body, ctx=ctx)
        hits = []
        for item in self._results(result):
            if not isinstance(item, dict):
                continue
            url = text_field(item.get("url"))
            if url is None:
                continue
            snippet = ""
            highlights = _strings(item.get("highlights"))
            if highlights:
                snippet = one_line(" … ".join(highlights), SNIPPET_MAX)
            elif text_field(item.get("text")):
                snippet = one_line(item["text"], SNIPPET_MAX)
            hits.append(
                SearchHit(
                    title=" ".join((text_field(item.get("title")) or url).split()),
                    url=url,
                    snippet=snippet,
                    published=text_field(item.get("publishedDate")),
                    author=text_field(item.get("author")),
                    score=number_field(item.get("score")),
                )
            )
        return SearchResponse(
            hits=tuple(hits[:limit]),
            notices=exa_messages(result.get("notices")),
            warnings=exa_messages(result.get("warnings")),
        )

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Fetch contents for every URL; per-URL failures come from Exa's ``statuses``.

        Exa is asked for at least what the call needs and at least ``defaultFetchTextMaxCharacters``
        (default 100,000) so that later windows of a page come from the cache.
        """
        want_text = request.text or not (request.highlights or request.summary)
        max_chars = min(
            MAX_TEXT_CHARACTERS,
            max(
                request.text_max_characters or 0,
                self.options.default_fetch_text_max_characters or TEXT_CHARACTERS,
            ),
        )
        body: dict = {"urls": list(request.urls)}
        if want_text:
            body["text"] = {"maxCharacters": max_chars}
        if request.highlights:
            body["highlights"] = True
        if request.summary:
            body["summary"] = True
        if self.options.max_age_hours is not None:
            body["maxAgeHours"] = self.options.max_age_hours
        result, _ = self.http.request_json("POST", "/contents", json_body=body, ctx=ctx)
        results = self._results(result)
        statuses = result.get("statuses")
        if statuses is None:
            statuses = []
        if not isinstance(statuses, list):
            raise self.http.shape_error(
                f"'statuses' should be a list, got {type(statuses).__name__}"
            )

        found: dict[str, dict] = {}
        for item in results:
            if not isinstance(item, dict):
                continue
            for key in (item.get("id"), item.get("url")):
                if isinstance(key, str) and key:
                    found.setdefault(key, item)
                    found.setdefault(url_key(key), item)
        errors: dict[str, dict] = {}
        for status in statuses:
            if not isinstance(status, dict) or not isinstance(status.get("id"), str):
                continue
            if status.get("status") == "error":
                errors.setdefault(status["id"], status)
                errors.setdefault(url_key(status["id"]), status)

        pages = []
        for url in request.urls:
            item = found.get(url) or found.get(url_key(url))
            if item is not None:
                pages.append(self._page(url, item, request, want_text, max_chars))
                continue
            status = errors.get(url) or errors.get(url_key(url))
            if status is not None:
                pages.append(self._failure(url, status))
            else:
                pages.append(FetchedPage(url=url, ok=False, error="no result returned by Exa"))
        notices = exa_messages(result.get("notices"))
        if notices:  # text meant for the model: shown in each page's section
            pages = [
                attrs.evolve(page, notes=page.notes + notices) if page.ok else page
                for page in pages
            ]
        return FetchResponse(pages=tuple(pages), warnings=exa_messages(result.get("warnings")))

    def summarize(self, request: SummarizeRequest, ctx: Any) -> SummaryResponse:
        """Summarize one URL with ``/contents`` and ``summary: {query}``: the summary type
        becomes the question, the target language an instruction in it. Exa reports no token
        count, so ``tokens`` is ``None``."""
        query = SUMMARY_QUERIES.get(request.summary_type, SUMMARY_QUERIES["summary"])
        if request.target_language:
            code = request.target_language.upper()
            name = LANGUAGE_NAMES.get(code, code)
            query += f" Write it in {name}, whatever the page's language."
        body: dict = {"urls": [request.url], "summary": {"query": query}}
        if self.options.max_age_hours is not None:
            body["maxAgeHours"] = self.options.max_age_hours
        timeout = self.options.timeout_seconds or SUMMARIZE_TIMEOUT
        result, _ = self.http.request_json(
            "POST", "/contents", json_body=body, ctx=ctx, timeout=timeout
        )
        results = self._results(result)
        item = next((r for r in results if isinstance(r, dict)), None)
        summary = text_field(item.get("summary")) if item is not None else None
        if summary is not None:
            return SummaryResponse(output=summary.strip())
        for status in list_field(result.get("statuses")):
            if isinstance(status, dict) and status.get("status") == "error":
                failed = self._failure(request.url, status)
                raise self.http.error(
                    f"could not summarize {request.url}: {failed.error}",
                    status=failed.status,
                    code=failed.code,
                )
        if item is not None:
            raise self.http.error(f"Exa returned no summary for {request.url}")
        raise self.http.error(f"could not summarize {request.url}: no result returned")

    def _page(
        self, url: str, item: dict, request: FetchRequest, want_text: bool, max_chars: int
    ) -> FetchedPage:
        notes = []
        text = None
        more_text = False
        if want_text:
            text = item.get("text") if isinstance(item.get("text"), str) else None
            if text is None:
                notes.append("Exa returned no text for this URL")
            else:
                more_text = len(text) >= max_chars
        highlights = _strings(item.get("highlights")) if request.highlights else ()
        summary = text_field(item.get("summary")) if request.summary else None
        final_url = text_field(item.get("url"))
        return FetchedPage(
            url=url,
            ok=True,
            title=text_field(item.get("title")),
            final_url=final_url if final_url and final_url != url else None,
            text=text,
            highlights=highlights,
            summary=summary,
            published=text_field(item.get("publishedDate")),
            author=text_field(item.get("author")),
            notes=tuple(notes),
            more_text=more_text,
        )

    def _failure(self, url: str, status: dict) -> FetchedPage:
        error = status.get("error")
        error = error if isinstance(error, dict) else {}
        tag = text_field(error.get("tag"))
        code = error.get("httpStatusCode")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        message = tag or "Exa could not fetch this URL"
        if code is not None:
            message += f" (HTTP {code})"
        return FetchedPage(url=url, ok=False, error=message, code=tag, status=code)


def _create(config: ProviderConfig) -> ExaProvider:
    return ExaProvider(config.name, config.api_key, config.options or ExaOptions())


EXA = ProviderType(
    name="exa",
    label="Exa",
    factory=_create,
    options_class=ExaOptions,
    precedence=20,
    search=Search(
        filters=DOMAIN_FILTERS | DATE_FILTERS | {"category"},
        default_limit=DEFAULT_LIMIT,
    ),
    fetch=Fetch(modes={"text", "highlights", "summary"}),
    summarize=Summarize(languages=tuple(LANGUAGE_NAMES)),
    key=ApiKey(shared_file_key="exaApiKey", url="https://dashboard.exa.ai/api-keys"),
)


@hookimpl
def register_provider_types(register):
    """Register the ``exa`` provider type."""
    register(EXA)
