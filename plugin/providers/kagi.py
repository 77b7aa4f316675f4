"""Kagi: web search (API v1 ``POST /search`` with ``Authorization: Bearer``, or the older v0
``GET /search`` with ``Authorization: Bot``), page text through Kagi Extract (v1
``POST /extract``) and the Universal Summarizer (v0 ``POST /summarize``, Bot).

``apiVersion`` ``"auto"`` (the default) tries v1 first; when v1 answers 401 the key may be an
older v0 key, so v0 is tried once, and the version that worked is remembered for that provider
for the life of the process. ``"v0"`` or ``"v1"`` forces one.

``baseUrl`` replaces the API root ``https://kagi.com/api``: requests go to
``{baseUrl}/v1/search``, ``{baseUrl}/v1/extract``, ``{baseUrl}/v0/search`` and
``{baseUrl}/v0/summarize``. A ``baseUrl`` ending in ``/v0`` or ``/v1`` (the older form) has
that segment replaced by the version each request needs.
"""

from __future__ import annotations

import html
import re
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from attrs import frozen

from ..api import (
    ErrorKind,
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
    ProviderError,
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
    one_of,
    option,
    url_key,
)

__all__ = [
    "KagiOptions",
    "KagiProvider",
    "SUMMARY_LANGUAGES",
    "api_root",
    "kagi_error_text",
]

DEFAULT_ROOT = "https://kagi.com/api"
V0 = "v0"
V1 = "v1"
SEARCH_TIMEOUT = 30.0
SUMMARIZE_TIMEOUT = 120.0
EXTRACT_TIMEOUT = 60.0
DEFAULT_LIMIT = 10
#: Kagi v0's "no billing information" and "insufficient credit" codes (v1's are billing.*).
CREDIT_CODES = ("100", "101")
#: Kagi Extract takes at most this many pages per request.
MAX_EXTRACT_PAGES = 10
SUMMARY_LANGUAGES = (
    "BG CS DA DE EL EN ES ET FI FR HU ID IT JA KO LT LV NB NL PL PT RO RU SK SL SV TR UK ZH ZH-HANT"
).split()
V1_KEY_HINT = (
    "If this key was made for Kagi's v1 API, remove \"apiVersion\" from this provider's options "
    '(the default, "auto", tries v1 first) or set it to "v1".'
)
V0_KEY_HINT = (
    'If this is an older v0 key, remove "apiVersion" from this provider\'s options (the default, '
    '"auto", falls back to v0) or set it to "v0".'
)


@frozen(kw_only=True)
class KagiOptions(ApiOptions):
    """Options of a ``kagi`` provider."""

    api_version: str = option("auto", validator=one_of("auto", "v0", "v1"))
    default_search_limit: int | None = option(None, validator=between(1, 50))


_TAG = re.compile(r"<[^>]+>")
_VERSION_TAIL = re.compile(r"/v[01]$")


def api_root(base_url: str | None) -> str:
    """The API root for *base_url* (``baseUrl``): without a trailing slash or a trailing
    ``/v0`` or ``/v1``; ``https://kagi.com/api`` when none is given."""
    root = (base_url or DEFAULT_ROOT).rstrip("/")
    return _VERSION_TAIL.sub("", root)


def clean_snippet(text: Any) -> str:
    """Strip HTML tags and unescape entities (``&nbsp;`` becomes a plain space)."""
    if not isinstance(text, str):
        return ""
    text = html.unescape(_TAG.sub("", text)).replace("\xa0", " ")
    return " ".join(text.split())


def kagi_error_text(body: Any) -> tuple[str, str | None] | None:
    """Kagi's own error words: v0 ``error[].msg`` (with its code) or v1 ``error[]`` /
    ``errors[]`` ``.message`` (with its namespaced code), then ``meta.trace`` when the answer
    has one (Kagi support asks for it)."""
    if not isinstance(body, dict):
        return None
    errors = body.get("error") or body.get("errors")
    if isinstance(errors, dict):
        errors = [errors]
    if not isinstance(errors, list):
        return None
    messages, codes = [], []
    for item in errors[:5]:
        if not isinstance(item, dict):
            continue
        message = item.get("msg") or item.get("message")
        code = item.get("code")
        code = code if isinstance(code, (str, int)) and not isinstance(code, bool) else None
        if isinstance(message, str) and message.strip():
            messages.append(f"{message} (code {code})" if code is not None else message)
        if code is not None:
            codes.append(str(code))
    if not messages and not codes:
        return None
    text = "; ".join(messages) if messages else f"code {codes[0]}"
    meta = body.get("meta")
    trace = meta.get("trace") if isinstance(meta, dict) else None
    if isinstance(trace, (str, int)) and not isinstance(trace, bool) and str(trace).strip():
        text += f"; trace {str(trace).strip()[:80]}"
    return text, (codes[0] if codes else None)


def _balance(body: Any) -> float | None:
    meta = body.get("meta") if isinstance(body, dict) else None
    value = meta.get("api_balance") if isinstance(meta, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _date(value: str | None) -> str | None:
    """The ``YYYY-MM-DD`` part of an ISO 8601 date, for Kagi's ``filters.after/before``."""
    return value[:10] if value else None


def _title(markdown: str) -> str | None:
    """The page title: the first line when it is a Markdown heading."""
    for line in markdown.lstrip().splitlines()[:1]:
        if line.startswith("#"):
            title = " ".join(line.lstrip("#").split())
            return title[:300] or None
    return None


def _strip_prefix(error: ProviderError, prefix: str) -> str:
    text = error.message
    return text[len(prefix) + 2 :] if text.startswith(f"{prefix}: ") else text


class KagiProvider:
    """A configured Kagi account."""

    def __init__(self, name: str, api_key: str, options: KagiOptions):
        self.name = name
        self.options = options
        self.api_version = options.api_version
        self.root = api_root(options.base_url)
        label = f"Kagi ({name})" if name != "kagi" else "Kagi"
        self.label = label
        common = {
            "provider": label,
            "secrets": [api_key],
            "timeout": options.timeout_seconds or SEARCH_TIMEOUT,
            "error_text": kagi_error_text,
        }
        self.v1 = HttpClient(
            base_url=f"{self.root}/v1", headers={"Authorization": f"Bearer {api_key}"}, **common
        )
        self.v0 = HttpClient(
            base_url=f"{self.root}/v0", headers={"Authorization": f"Bot {api_key}"}, **common
        )
        #: The search version that worked (``auto``), kept while the registry keeps this
        #: provider: for the process, until its config entry changes.
        self._worked: str | None = None
        self._lock = threading.Lock()

    @property
    def http(self) -> HttpClient:
        """The v1 client (search, Extract); :attr:`v0` serves the summarizer and old keys."""
        return self.v1

    @property
    def clients(self) -> tuple[HttpClient, HttpClient]:
        """Both HTTP clients (v1, v0)."""
        return self.v1, self.v0

    def close(self) -> None:
        """Close both HTTP sessions (the registry does when this entry is replaced)."""
        for client in self.clients:
            client.close()

    def __repr__(self) -> str:
        return f"KagiProvider(name={self.name!r}, root={self.root!r}, api_version={self.api_version!r})"

    @property
    def search_version(self) -> str | None:
        """The search version this provider uses: forced, or remembered (``None``: not known yet)."""
        if self.api_version != "auto":
            return self.api_version
        with self._lock:
            return self._worked

    def _remember(self, version: str) -> None:
        if self.api_version == "auto":
            with self._lock:
                self._worked = version

    def _check_envelope(self, client: HttpClient, body: Any) -> Any:
        """An error envelope in a 2xx answer is an error too."""
        if isinstance(body, dict):
            found = kagi_error_text(body)
            data = body.get("data")
            if found and (data is None or data == []):
                raise client.error(f"API error: {found[0]}", code=found[1])
        return body

    # --- search ---------------------------------------------------------------------------

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query; Kagi's rank order is kept, related searches collected.

        In ``auto`` mode a 401 from the version tried first (v1, or the one remembered) is
        followed by one try of the other; when both fail, one error says what each answered.
        Kagi's credit codes (v0 answers them in a 400) make the error's kind ``QUOTA``.
        """
        try:
            return self._search_any(request, ctx)
        except ProviderError as exc:
            if exc.code in CREDIT_CODES or (exc.code or "").startswith("billing."):
                exc.kind = ErrorKind.QUOTA
            raise

    def _search_any(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        limit = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        if self.api_version != "auto":
            try:
                return self._search(self.api_version, request, limit, ctx)
            except ProviderError as exc:
                if exc.status == 401:
                    exc.message = (
                        f"{exc.message}. {V1_KEY_HINT if self.api_version == V0 else V0_KEY_HINT}"
                    )
                raise
        first = self.search_version or V1
        second = V0 if first == V1 else V1
        try:
            response = self._search(first, request, limit, ctx)
        except ProviderError as exc:
            if exc.status != 401:
                raise
            refused = exc
        else:
            self._remember(first)
            return response
        try:
            response = self._search(second, request, limit, ctx)
        except ProviderError as exc:
            raise self._both_failed((first, refused), (second, exc)) from None
        self._remember(second)
        return response

    def _both_failed(self, *answers: tuple[str, ProviderError]) -> ProviderError:
        said = "; ".join(
            f"{version} answered {_strip_prefix(exc, self.label)}" for version, exc in answers
        )
        first = answers[0][1]
        return ProviderError(
            f"{self.label}: both search APIs failed: {said}. "
            "Check the key at https://kagi.com/settings/api.",
            provider=self.label,
            status=first.status,
            code=first.code,
        )

    def _search(self, version: str, request: SearchRequest, limit: int, ctx: Any) -> SearchResponse:
        if version == V1:
            body = self._v1_body(request, limit)
            result, _ = self.v1.request_json("POST", "/search", json_body=body, ctx=ctx)
            return self._parse_v1(self._check_envelope(self.v1, result), limit)
        query = " ".join(
            [request.query]
            + [f"site:{domain}" for domain in request.include_domains]
            + [f"-site:{domain}" for domain in request.exclude_domains]
        )
        result, _ = self.v0.request_json(
            "GET", "/search", params={"q": query, "limit": limit}, ctx=ctx
        )
        response = self._parse_v0(self._check_envelope(self.v0, result), limit)
        if request.start_published_date or request.end_published_date:
            notice = (
                "Kagi's v0 search cannot filter by publication date (this key works on v0 only), "
                "so these results are not limited to the dates asked for."
            )
            response = SearchResponse(
                hits=response.hits,
                related=response.related,
                notices=(notice,),
                balance=response.balance,
            )
        return response

    @staticmethod
    def _v1_body(request: SearchRequest, limit: int) -> dict:
        body: dict = {
            "query": request.query,
            "workflow": "search",
            "format": "json",
            "limit": limit,
        }
        lens: dict = {}
        if request.include_domains:
            lens["sites_included"] = list(request.include_domains)
        if request.exclude_domains:
            lens["sites_excluded"] = list(request.exclude_domains)
        if lens:
            body["lens"] = lens
        filters = {
            key: value
            for key, value in (
                ("after", _date(request.start_published_date)),
                ("before", _date(request.end_published_date)),
            )
            if value
        }
        if filters:
            body["filters"] = filters
        return body

    def _shape_error(self, what: str, client: HttpClient | None = None) -> ProviderError:
        return (client or self.v1).shape_error(what)

    def _parse_v0(self, body: Any, limit: int) -> SearchResponse:
        if not isinstance(body, dict):
            raise self._shape_error("the body is not an object", self.v0)
        data = body.get("data")
        if not isinstance(data, list):
            raise self._shape_error(
                f"'data' should be a list of results, got {type(data).__name__}", self.v0
            )
        hits, related = [], []
        for item in data:
            if not isinstance(item, dict):
                continue
            if item.get("t") == 1:
                related += [
                    clean_snippet(s) for s in list_field(item.get("list")) if isinstance(s, str)
                ]
                continue
            if item.get("t", 0) != 0:
                continue
            url = item.get("url")
            if not isinstance(url, str) or not url:
                continue
            title = item.get("title") if isinstance(item.get("title"), str) else ""
            published = item.get("published") if isinstance(item.get("published"), str) else None
            hits.append(
                SearchHit(
                    title=clean_snippet(title) or url,
                    url=url,
                    snippet=clean_snippet(item.get("snippet")),
                    published=published,
                )
            )
        return SearchResponse(
            hits=tuple(hits[:limit]), related=tuple(related), balance=_balance(body)
        )

    def _parse_v1(self, body: Any, limit: int) -> SearchResponse:
        if not isinstance(body, dict):
            raise self._shape_error("the body is not an object")
        data = body.get("data")
        if not isinstance(data, dict):
            raise self._shape_error(f"'data' should be an object, got {type(data).__name__}")
        items = data.get("search") or []
        if not isinstance(items, list):
            raise self._shape_error("'data.search' should be a list")
        hits = []
        for item in items:
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("url"), str)
                or not item["url"]
            ):
                continue
            title = item.get("title") if isinstance(item.get("title"), str) else ""
            published = item.get("time") if isinstance(item.get("time"), str) else None
            hits.append(
                SearchHit(
                    title=clean_snippet(title) or item["url"],
                    url=item["url"],
                    snippet=clean_snippet(item.get("snippet")),
                    published=published,
                )
            )
        related = []
        for entry in list_field(data.get("related_search")):
            if isinstance(entry, str):
                text = entry
            elif isinstance(entry, dict):
                found = entry.get("title") or entry.get("query") or entry.get("snippet")
                text = found if isinstance(found, str) else ""
            else:
                text = ""
            text = clean_snippet(text)
            if text:
                related.append(text)
        return SearchResponse(
            hits=tuple(hits[:limit]), related=tuple(related), balance=_balance(body)
        )

    # --- Extract --------------------------------------------------------------------------

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Every URL's text as Markdown through Kagi Extract (v1): https URLs only, at most 10
        per request; a URL Kagi could not read is a failed page, not an exception.

        Kagi returns whole pages, so ``more_text`` is never set.
        """
        budget = self.options.timeout_seconds or EXTRACT_TIMEOUT
        deadline = time.monotonic() + budget
        urls = list(dict.fromkeys(request.urls))
        https = [url for url in urls if urlsplit(url).scheme.lower() == "https"]
        found: dict[str, dict] = {}
        failed: dict[str, str] = {}
        batches = [
            https[i : i + MAX_EXTRACT_PAGES] for i in range(0, len(https), MAX_EXTRACT_PAGES)
        ]
        errors: list[ProviderError] = []
        for batch in batches:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise self.v1.error(f"timed out after {budget:g} s")
                self._extract(batch, ctx, remaining, found, failed)
            except ProviderError as exc:
                if exc.status == 401:
                    exc.message += " (Kagi Extract is a v1 API and needs a v1 key)"
                errors.append(exc)
                for url in batch:
                    failed.setdefault(url_key(url), _strip_prefix(exc, self.label))
        if errors and len(errors) == len(batches) and len(https) == len(urls):
            raise errors[0]  # the whole request failed (key, credit, outage): said once
        pages = []
        for url in request.urls:
            item = found.get(url_key(url))
            if item is not None:
                text = item["markdown"]
                pages.append(FetchedPage(url=url, ok=True, title=_title(text), text=text))
            elif urlsplit(url).scheme.lower() != "https":
                pages.append(
                    FetchedPage(
                        url=url,
                        ok=False,
                        error="Kagi Extract reads https URLs only",
                        code="other-fetcher",
                    )
                )
            else:
                error = failed.get(url_key(url)) or "no result returned by Kagi"
                pages.append(FetchedPage(url=url, ok=False, error=" ".join(error.split())))
        return FetchResponse(pages=tuple(pages))

    def _extract(
        self, batch: list[str], ctx: Any, timeout: float, found: dict, failed: dict
    ) -> None:
        body = {"pages": [{"url": url} for url in batch], "format": "markdown"}
        result, _ = self.v1.request_json(
            "POST", "/extract", json_body=body, ctx=ctx, timeout=timeout
        )
        if not isinstance(result, dict):
            raise self._shape_error("the body is not an object")
        data = result.get("data")
        if data is None:
            data = []
        if not isinstance(data, list):
            raise self._shape_error(f"'data' should be a list of pages, got {type(data).__name__}")
        for item in data:
            if (
                isinstance(item, dict)
                and isinstance(item.get("url"), str)
                and isinstance(item.get("markdown"), str)
            ):
                found.setdefault(url_key(item["url"]), item)
        for item in list_field(result.get("errors")) + list_field(result.get("error")):
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                continue
            message = item.get("message") or item.get("msg") or "Kagi could not extract this URL"
            code = item.get("code")
            text = f"{message} (code {code})" if isinstance(code, (str, int)) else str(message)
            failed.setdefault(url_key(item["url"]), text)
        if not data and not failed:
            found_error = kagi_error_text(result)
            if found_error:
                raise self.v1.error(f"API error: {found_error[0]}", code=found_error[1])

    # --- summarizer -----------------------------------------------------------------------

    def summarize(self, request: SummarizeRequest, ctx: Any) -> SummaryResponse:
        """Summarize a URL with the Universal Summarizer (API v0, Bot); output verbatim."""
        body: dict = {
            "url": request.url,
            "summary_type": request.summary_type,
            "engine": request.engine or "cecil",
        }
        if request.target_language:
            body["target_language"] = request.target_language
        timeout = self.options.timeout_seconds or SUMMARIZE_TIMEOUT
        result, _ = self.v0.request_json(
            "POST", "/summarize", json_body=body, ctx=ctx, timeout=timeout
        )
        result = self._check_envelope(self.v0, result)
        if not isinstance(result, dict):
            raise self._shape_error("the body is not an object", self.v0)
        data = result.get("data")
        if not isinstance(data, dict):
            raise self._shape_error(
                f"'data' should be an object with 'output', got {type(data).__name__}", self.v0
            )
        output = data.get("output")
        if not isinstance(output, str):
            raise self._shape_error(
                f"'data.output' should be a string, got {type(output).__name__}", self.v0
            )
        tokens = data.get("tokens")
        tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
        return SummaryResponse(output=output, tokens=tokens, balance=_balance(result))


def _create(config: ProviderConfig) -> KagiProvider:
    return KagiProvider(config.name, config.api_key, config.options or KagiOptions())


KAGI = ProviderType(
    name="kagi",
    label="Kagi",
    on_request={"fetch"},
    factory=_create,
    options_class=KagiOptions,
    precedence=10,
    search=Search(
        filters=DOMAIN_FILTERS | DATE_FILTERS,
        default_limit=DEFAULT_LIMIT,
    ),
    fetch=Fetch(),
    summarize=Summarize(languages=tuple(SUMMARY_LANGUAGES), engines=("cecil", "agnes")),
    key=ApiKey(
        env="KAGI_API_KEY",
        env_implies_provider=True,
        shared_file_key="kagiApiKey",
        url="https://kagi.com/settings/api",
    ),
)


@hookimpl
def register_provider_types(register):
    """Register the ``kagi`` provider type."""
    register(KAGI)
