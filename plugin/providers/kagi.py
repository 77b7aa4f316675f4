"""Kagi: web search (API v0 ``GET /search``, or v1 ``POST /search``) and the Universal
Summarizer (``POST /summarize``), with ``Authorization: Bot <key>``."""

from __future__ import annotations

import html
import re
from typing import Any

from attrs import frozen

from ..api import (
    ApiOptions,
    ProviderType,
    SearchHit,
    SearchRequest,
    SearchResponse,
    SummarizeRequest,
    SummaryResponse,
    between,
    one_of,
    option,
)
from ..errors import ProviderError
from ..hookspecs import hookimpl
from ..http import HttpClient

__all__ = ["KagiOptions", "KagiProvider", "SUMMARY_LANGUAGES"]

V0_BASE = "https://kagi.com/api/v0"
V1_BASE = "https://kagi.com/api/v1"
SEARCH_TIMEOUT = 30.0
SUMMARIZE_TIMEOUT = 120.0
DEFAULT_LIMIT = 10
SUMMARY_LANGUAGES = (
    "BG CS DA DE EL EN ES ET FI FR HU ID IT JA KO LT LV NB NL PL PT RO RU SK SL SV TR UK ZH ZH-HANT"
).split()
V1_KEY_HINT = (
    'If this key was made for Kagi\'s v1 API, set "apiVersion": "v1" in this provider\'s options.'
)


@frozen(kw_only=True)
class KagiOptions(ApiOptions):
    """Options of a ``kagi`` provider."""

    api_version: str = option("v0", validator=one_of("v0", "v1"))
    default_search_limit: int | None = option(None, validator=between(1, 50))


_TAG = re.compile(r"<[^>]+>")


def clean_snippet(text: Any) -> str:
    """Strip HTML tags and unescape entities (``&nbsp;`` becomes a plain space)."""
    if not isinstance(text, str):
        return ""
    text = html.unescape(_TAG.sub("", text)).replace("\xa0", " ")
    return " ".join(text.split())


def kagi_error_text(body: Any) -> tuple[str, str | None] | None:
    """Kagi's own error words: v0 ``error[].msg`` (with code) or v1 ``error(s)[].message``."""
    if not isinstance(body, dict):
        return None
    errors = body.get("error") or body.get("errors")
    if not isinstance(errors, list):
        return None
    messages, codes = [], []
    for item in errors:
        if not isinstance(item, dict):
            continue
        message = item.get("msg") or item.get("message")
        code = item.get("code")
        if message:
            messages.append(f"{message} (code {code})" if code is not None else str(message))
        if code is not None:
            codes.append(str(code))
    if not messages:
        return None
    return "; ".join(messages), (codes[0] if codes else None)


def _list(value: Any) -> list:
    """*value* when it is a list, else empty (a string is not a list of strings to split)."""
    return value if isinstance(value, list) else []


def _balance(body: Any) -> float | None:
    meta = body.get("meta") if isinstance(body, dict) else None
    value = meta.get("api_balance") if isinstance(meta, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class KagiProvider:
    """A configured Kagi account."""

    def __init__(self, name: str, api_key: str, options: KagiOptions):
        self.name = name
        self.options = options
        self.api_version = options.api_version
        default_base = V1_BASE if self.api_version == "v1" else V0_BASE
        self.base_url = (options.base_url or default_base).rstrip("/")
        self._api_key = api_key
        self.http = HttpClient(
            provider=f"Kagi ({name})" if name != "kagi" else "Kagi",
            base_url=self.base_url,
            headers={"Authorization": f"Bot {api_key}"},
            secrets=[api_key],
            timeout=options.timeout_seconds or SEARCH_TIMEOUT,
            error_text=kagi_error_text,
        )

    def close(self) -> None:
        """Close the HTTP session (the registry does when this entry is replaced)."""
        self.http.close()

    def __repr__(self) -> str:
        return f"KagiProvider(name={self.name!r}, base_url={self.base_url!r}, api_version={self.api_version!r})"

    def _query(self, request: SearchRequest) -> str:
        parts = [request.query]
        parts += [f"site:{domain}" for domain in request.include_domains]
        parts += [f"-site:{domain}" for domain in request.exclude_domains]
        return " ".join(parts)

    def _shape_error(self, what: str):
        return self.http.error(f"unexpected response shape: {what}")

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            body, _ = self.http.request_json(method, path, **kwargs)
        except ProviderError as exc:
            if exc.status == 401 and self.api_version == "v0":
                exc.message = f"{exc.message}. {V1_KEY_HINT}"
            raise
        if isinstance(body, dict):
            found = kagi_error_text(body)
            if found and body.get("data") is None:
                raise self.http.error(f"API error: {found[0]}", code=found[1])
        return body

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query; Kagi's rank order is kept, related searches collected."""
        limit = request.limit or self.options.default_search_limit or DEFAULT_LIMIT
        query = self._query(request)
        if self.api_version == "v1":
            body = self._call(
                "POST", "/search", json_body={"query": query, "limit": limit}, ctx=ctx
            )
            return self._parse_v1(body, limit)
        body = self._call("GET", "/search", params={"q": query, "limit": limit}, ctx=ctx)
        return self._parse_v0(body, limit)

    def _parse_v0(self, body: Any, limit: int) -> SearchResponse:
        if not isinstance(body, dict):
            raise self._shape_error("the body is not an object")
        data = body.get("data")
        if not isinstance(data, list):
            raise self._shape_error(
                f"'data' should be a list of results, got {type(data).__name__}"
            )
        hits, related = [], []
        for item in data:
            if not isinstance(item, dict):
                continue
            if item.get("t") == 1:
                related += [clean_snippet(s) for s in _list(item.get("list")) if isinstance(s, str)]
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
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
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
        for entry in _list(data.get("related_search")):
            if isinstance(entry, str):
                related.append(entry)
            elif isinstance(entry, dict) and isinstance(
                entry.get("title") or entry.get("query"), str
            ):
                related.append(entry.get("title") or entry.get("query"))
        return SearchResponse(
            hits=tuple(hits[:limit]), related=tuple(related), balance=_balance(body)
        )

    def _summarize_base(self) -> str:
        """The summarizer lives on v0 only: a v1 base URL ending in /v1 maps to /v0."""
        if self.api_version == "v0":
            return self.base_url
        if not self.options.base_url:
            return V0_BASE
        return re.sub(r"/v1$", "/v0", self.base_url)

    def summarize(self, request: SummarizeRequest, ctx: Any) -> SummaryResponse:
        """Summarize a URL with the Universal Summarizer (always API v0); output verbatim."""
        body: dict = {
            "url": request.url,
            "summary_type": request.summary_type,
            "engine": request.engine or "cecil",
        }
        if request.target_language:
            body["target_language"] = request.target_language
        base = self._summarize_base()
        timeout = self.options.timeout_seconds or SUMMARIZE_TIMEOUT
        result = self._call("POST", f"{base}/summarize", json_body=body, ctx=ctx, timeout=timeout)
        if not isinstance(result, dict):
            raise self._shape_error("the body is not an object")
        data = result.get("data")
        if not isinstance(data, dict):
            raise self._shape_error(
                f"'data' should be an object with 'output', got {type(data).__name__}"
            )
        output = data.get("output")
        if not isinstance(output, str):
            raise self._shape_error(
                f"'data.output' should be a string, got {type(output).__name__}"
            )
        tokens = data.get("tokens")
        tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
        return SummaryResponse(output=output, tokens=tokens, balance=_balance(result))


def _create(config: Any) -> KagiProvider:
    return KagiProvider(config.name, config.api_key, config.options or KagiOptions())


KAGI = ProviderType(
    name="kagi",
    label="Kagi",
    capabilities={"search", "summarize"},
    factory=_create,
    options_class=KagiOptions,
    api_key_env="KAGI_API_KEY",
    env_key_implies_provider=True,
    shared_file_key="kagiApiKey",
    precedence=10,
    search_filters={"include_domains", "exclude_domains"},
    summary_languages=tuple(SUMMARY_LANGUAGES),
    summary_engines=("cecil", "agnes"),
    default_search_limit=DEFAULT_LIMIT,
    key_url="https://kagi.com/settings/api",
)


@hookimpl
def register_provider_types(register):
    """Register the ``kagi`` provider type."""
    register(KAGI)
