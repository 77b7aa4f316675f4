"""The provider interface: normalized requests and responses, options, and the Protocol.

Tools never see a provider's JSON and providers never format for the model; these classes are
the only seam between them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import attrs
from attrs import field, frozen

from ..tools.web_fetch import DEFAULT_TEXT_MAX_CHARACTERS  # the default web_fetch documents

__all__ = [
    "DEFAULT_TEXT_MAX_CHARACTERS",
    "ApiOptions",
    "CommonOptions",
    "FetchRequest",
    "FetchResponse",
    "FetchedPage",
    "Provider",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "SummarizeRequest",
    "SummaryResponse",
    "option",
]

SEARCH = "search"
FETCH = "fetch"
SUMMARIZE = "summarize"


def option(default: Any, *, key: str, kind: str, check: Callable[[Any], str | None] | None = None):
    """Declare one provider option: its JSON key, JSON kind and an optional value check.

    *kind* is ``string``, ``number``, ``integer``, ``boolean`` or ``string-list``; *check*
    returns an error sentence for a bad value, or ``None``.
    """
    return field(default=default, metadata={"key": key, "kind": kind, "check": check})


def _http_url(value: str) -> str | None:
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "must be an absolute http or https URL"
    return None


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be greater than 0"


def limit_between(low: int, high: int) -> Callable[[int], str | None]:
    """A check that an integer option lies in ``low..high``."""

    def check(value: int) -> str | None:
        return None if low <= value <= high else f"must be between {low} and {high}"

    return check


@frozen(kw_only=True)
class CommonOptions:
    """Options every provider understands."""

    timeout_seconds: float | None = option(
        None, key="timeoutSeconds", kind="number", check=_positive
    )


@frozen(kw_only=True)
class ApiOptions(CommonOptions):
    """Options of a provider that calls an API: ``baseUrl`` for proxies, gateways and tests."""

    base_url: str | None = option(None, key="baseUrl", kind="string", check=_http_url)


@frozen(kw_only=True)
class SearchRequest:
    """One query to run, with the optional filters of ``web_search``."""

    query: str
    limit: int | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    start_published_date: str | None = None
    end_published_date: str | None = None
    category: str | None = None


@frozen(kw_only=True)
class SearchHit:
    """One search result, normalized."""

    title: str
    url: str
    snippet: str = ""
    published: str | None = None
    author: str | None = None
    score: float | None = None


@frozen(kw_only=True)
class SearchResponse:
    """The results of one query, plus related searches and account facts when known."""

    hits: tuple[SearchHit, ...] = ()
    related: tuple[str, ...] = ()
    balance: float | None = None


@frozen(kw_only=True)
class FetchRequest:
    """URLs to fetch and which contents to return."""

    urls: tuple[str, ...]
    text: bool = True
    highlights: bool = False
    summary: bool = False
    text_max_characters: int | None = None


@frozen(kw_only=True)
class FetchedPage:
    """One URL's outcome: contents on success, ``error`` (one line) on failure."""

    url: str
    ok: bool
    title: str | None = None
    final_url: str | None = None
    content_type: str | None = None
    text: str | None = None
    highlights: tuple[str, ...] = ()
    summary: str | None = None
    published: str | None = None
    author: str | None = None
    error: str | None = None
    status: int | None = None
    code: str | None = None
    notes: tuple[str, ...] = ()


@frozen(kw_only=True)
class FetchResponse:
    """Every requested URL's outcome, in request order."""

    pages: tuple[FetchedPage, ...]


@frozen(kw_only=True)
class SummarizeRequest:
    """A URL to summarize and how."""

    url: str
    summary_type: str = "summary"
    engine: str = "cecil"
    target_language: str | None = None


@frozen(kw_only=True)
class SummaryResponse:
    """The summary text verbatim, the token count, and the balance when known."""

    output: str
    tokens: int | None = None
    balance: float | None = None


class Provider(Protocol):
    """What a configured provider offers; it implements the methods of its capabilities.

    Each method raises :class:`~pi_web_tools.errors.ProviderError` on failure and receives the
    call's :class:`~pi_hostspec.ToolContext` so it can stop when the call is cancelled.
    """

    name: str

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query."""

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Fetch every URL of the request; per-URL failures are pages with ``ok=False``."""

    def summarize(self, request: SummarizeRequest, ctx: Any) -> SummaryResponse:
        """Summarize one URL."""


def options_fields(cls: type) -> list[attrs.Attribute]:
    """The declared options of an options class (fields with a JSON key)."""
    return [f for f in attrs.fields(cls) if "key" in f.metadata]
