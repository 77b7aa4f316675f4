"""The Brave provider against recorded-shape responses (``responses``; never the network)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
import responses
from pi_web_tools import testing
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.retry import RetryPolicy
from pi_web_tools.api.types import SearchRequest
from pi_web_tools.providers.brave import (
    BRAVE,
    BraveOptions,
    BraveProvider,
    brave_error_text,
    brave_rate_limit_text,
    freshness,
)
from responses import matchers

KEY = "BSA-test-key-0123456789abcdef"
URL = "https://api.search.brave.com/res/v1/web/search"

SEARCH = {
    "type": "search",
    "query": {
        "original": "rust async runtime",
        "show_strict_warning": False,
        "is_navigational": False,
        "is_news_breaking": False,
        "spellcheck_off": True,
        "country": "us",
        "bad_results": False,
        "should_fallback": False,
        "postal_code": "",
        "city": "",
        "header_country": "",
        "more_results_available": True,
        "state": "",
    },
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Tokio - An asynchronous <strong>Rust</strong> runtime",
                "url": "https://tokio.rs/",
                "is_source_local": False,
                "is_source_both": False,
                "description": "Tokio is an <strong>asynchronous</strong> <strong>runtime</strong> for the <strong>Rust</strong> programming language. It provides the building blocks&#x27;s needed&nbsp;for writing network applications.",
                "page_age": "2025-11-02T08:14:37",
                "profile": {"name": "Tokio", "url": "https://tokio.rs/", "long_name": "tokio.rs"},
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "meta_url": {
                    "scheme": "https",
                    "netloc": "tokio.rs",
                    "hostname": "tokio.rs",
                    "path": "",
                },
                "age": "November 2, 2025",
                "extra_snippets": [
                    "Tokio is fast, built on the Rust language.",
                    "Reliable: Tokio's APIs are memory-safe, thread-safe, and misuse-resistant.",
                ],
            },
            {
                "title": "async-std",
                "url": "https://async.rs/",
                "description": "Async version of the <strong>Rust</strong> standard library",
                "age": "3 days ago",
                "type": "search_result",
            },
        ],
        "family_friendly": True,
    },
}

ERROR_401 = {
    "type": "ErrorResponse",
    "error": {
        "id": "0a4d8f3c-8b7e-4b8e-9f0a-6e2d1c0b9a87",
        "status": 401,
        "code": "SUBSCRIPTION_TOKEN_INVALID",
        "detail": "The provided subscription token is invalid.",
        "meta": {"component": "authentication"},
    },
    "time": 1764000000,
}
ERROR_403 = {
    "type": "ErrorResponse",
    "error": {
        "id": "5f6e7d8c-1a2b-4c3d-9e8f-0a1b2c3d4e5f",
        "status": 403,
        "code": "RESOURCE_NOT_ALLOWED",
        "detail": "Your subscription plan does not allow this resource.",
        "meta": {"component": "authorization"},
    },
    "time": 1764000000,
}
ERROR_422 = {
    "type": "ErrorResponse",
    "error": {
        "id": "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
        "status": 422,
        "code": "VALIDATION",
        "detail": "Unable to validate request parameter(s)",
        "meta": {
            "errors": [
                {
                    "type": "less_than_equal",
                    "loc": ["query", "count"],
                    "msg": "Input should be less than or equal to 20",
                    "input": "50",
                    "ctx": {"le": 20},
                }
            ]
        },
    },
    "time": 1764000000,
}
ERROR_429 = {
    "type": "ErrorResponse",
    "error": {
        "id": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
        "status": 429,
        "code": "RATE_LIMITED",
        "detail": "Request rate limit exceeded for plan.",
        "meta": {
            "plan": "Free",
            "rate_limit": 1,
            "rate_current": 1,
            "quota_limit": 2000,
            "quota_current": 47,
            "component": "rate_limiter",
        },
    },
    "time": 1764000000,
}
RATE_HEADERS = {
    "X-RateLimit-Limit": "1, 2000",
    "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
    "X-RateLimit-Remaining": "0, 1953",
    "X-RateLimit-Reset": "1, 2419200",
}


@pytest.fixture
def mock():
    """A strict mock: every registered response must be used."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def make_provider(**options) -> BraveProvider:
    """A Brave provider with no backoff delay, so retry tests run instantly."""
    provider = BraveProvider("brave", KEY, BraveOptions(**options))
    provider.http.retry = RetryPolicy(backoff_factor=0.0, backoff_jitter=0.0)
    return provider


def expect(mock, params: dict, *, json=None, status: int = 200, **kwargs):
    """Register one GET whose token header and exact query string are pinned."""
    return mock.add(
        responses.GET,
        URL,
        json=json,
        status=status,
        match=[
            matchers.header_matcher({"X-Subscription-Token": KEY, "Accept": "application/json"}),
            matchers.query_param_matcher(params),
        ],
        **kwargs,
    )


def test_the_type_follows_the_provider_contract():
    """check_provider_type accepts the brave type with every option set."""
    options = {
        "baseUrl": "http://127.0.0.1:9/res/v1",
        "defaultSearchLimit": 20,
        "country": "DE",
        "searchLang": "de",
        "safesearch": "strict",
        "extraSnippets": False,
        "timeoutSeconds": 5,
    }
    provider = testing.check_provider_type(BRAVE, options=options)
    assert provider.base_url == "http://127.0.0.1:9/res/v1"


def test_search_maps_results_with_clean_text_and_extra_snippets(mock):
    """Markup and entities leave titles and snippets; extra snippets follow the description."""
    expect(mock, {"q": "rust async runtime", "count": "10", "extra_snippets": "true"}, json=SEARCH)
    first, second = make_provider().search(SearchRequest(query="rust async runtime"), None).hits
    assert first.title == "Tokio - An asynchronous Rust runtime"
    assert first.url == "https://tokio.rs/"
    assert first.snippet == (
        "Tokio is an asynchronous runtime for the Rust programming language. It provides the "
        "building blocks's needed for writing network applications. … Tokio is fast, built on "
        "the Rust language. … Reliable: Tokio's APIs are memory-safe, thread-safe, and "
        "misuse-resistant."
    )
    assert first.published == "2025-11-02T08:14:37"
    assert second.snippet == "Async version of the Rust standard library"
    assert second.published == "3 days ago"


def test_domains_become_site_operators_and_dates_a_freshness_range(mock):
    """Included domains are alternatives, excluded ones -site:, dates one freshness range."""
    expect(
        mock,
        {
            "q": "tokio (site:docs.rs OR site:tokio.rs) -site:reddit.com",
            "count": "20",
            "freshness": "2025-01-01to2025-06-30",
            "country": "DE",
            "safesearch": "off",
        },
        json=SEARCH,
    )
    request = SearchRequest(
        query="tokio",
        limit=20,
        include_domains=("docs.rs", "tokio.rs"),
        exclude_domains=("reddit.com",),
        start_published_date="2025-01-01T00:00:00Z",
        end_published_date="2025-06-30",
    )
    provider = make_provider(extra_snippets=False, country="DE", safesearch="off")
    assert len(provider.search(request, None).hits) == 2


def test_an_open_date_range_is_closed_with_today_or_the_earliest_date():
    """Brave wants both ends: a lone start runs to today, a lone end starts at 1970-01-01."""
    today = datetime.now(timezone.utc).date().isoformat()
    start_only = SearchRequest(query="q", start_published_date="2025-03-01")
    assert freshness(start_only) == f"2025-03-01to{today}"
    end_only = SearchRequest(query="q", end_published_date="2024-12-31")
    assert freshness(end_only) == "1970-01-01to2024-12-31"
    assert freshness(SearchRequest(query="q")) is None


def test_a_limit_above_twenty_asks_for_twenty_and_says_so(mock):
    """Brave's page holds 20 results: a larger limit is capped and the model told why."""
    expect(mock, {"q": "q", "count": "20", "extra_snippets": "true"}, json=SEARCH)
    response = make_provider().search(SearchRequest(query="q", limit=50), None)
    assert response.notices == ("Brave returns at most 20 results per query.",)


def test_no_web_section_means_no_results(mock):
    """Brave leaves out "web" when nothing matched: an empty answer, not an error."""
    body = {"type": "search", "query": {"original": "zxqv"}, "mixed": {"main": []}}
    expect(mock, {"q": "zxqv", "count": "10", "extra_snippets": "true"}, json=body)
    assert make_provider().search(SearchRequest(query="zxqv"), None).hits == ()


def test_an_altered_query_is_a_notice(mock):
    """When Brave corrects the spelling, the model is told what was searched."""
    body = {"type": "search", "query": {"original": "pyhton", "altered": "python"}, **{"web": {}}}
    body["web"] = {"results": SEARCH["web"]["results"][:1]}
    expect(mock, {"q": "pyhton", "count": "10", "extra_snippets": "true"}, json=body)
    response = make_provider().search(SearchRequest(query="pyhton"), None)
    assert response.notices == ('Brave searched for "python" instead.',)


@pytest.mark.parametrize(
    ("web", "needle"),
    [
        ({"results": None}, "'web.results' should be a list, got NoneType"),
        ("oops", "'web' should be an object, got str"),
    ],
)
def test_wrong_shapes_name_the_field(mock, web, needle):
    """A body of the right kind with the wrong types inside is an error naming the field."""
    expect(mock, {"q": "q", "count": "10", "extra_snippets": "true"}, json={"web": web})
    with pytest.raises(ProviderError, match=needle):
        make_provider().search(SearchRequest(query="q"), None)


def test_malformed_items_are_skipped(mock):
    """Items without a URL or not objects are skipped; a title-less item shows its URL."""
    body = {"web": {"results": [None, "x", {"title": "no url"}, {"url": "https://a.example/"}]}}
    expect(mock, {"q": "q", "count": "10", "extra_snippets": "true"}, json=body)
    (hit,) = make_provider().search(SearchRequest(query="q"), None).hits
    assert hit.title == "https://a.example/" and hit.snippet == ""


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            ERROR_401,
            "Brave: HTTP 401 Unauthorized: The provided subscription token is invalid. "
            "(code SUBSCRIPTION_TOKEN_INVALID)",
        ),
        (
            403,
            ERROR_403,
            "Brave: HTTP 403 Forbidden: Your subscription plan does not allow this resource. "
            "(code RESOURCE_NOT_ALLOWED)",
        ),
        (
            422,
            ERROR_422,
            "Brave: HTTP 422 Unprocessable Entity: Unable to validate request parameter(s): "
            "count: Input should be less than or equal to 20 (code VALIDATION)",
        ),
    ],
)
def test_error_statuses_give_brave_words_once(mock, status, body, expected):
    """401, 403 and 422 are not retried and carry Brave's detail, code and parameter problems."""
    expect(mock, {"q": "q", "count": "10", "extra_snippets": "true"}, json=body, status=status)
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    assert str(info.value) == expected
    assert info.value.status == status and not info.value.retryable


def test_429_is_retried_then_reports_the_quota_headers(mock):
    """A 429 is retried (twice) and then names the per-second and monthly quotas."""
    for _ in range(3):
        expect(
            mock,
            {"q": "q", "count": "10", "extra_snippets": "true"},
            json=ERROR_429,
            status=429,
            headers=RATE_HEADERS,
        )
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    assert str(info.value) == (
        "Brave: HTTP 429 Too Many Requests: Request rate limit exceeded for plan. "
        "(code RATE_LIMITED) (quota: 0 of 1 left per second, resets in 1 s; 1953 of 2000 left "
        "per 30 days, resets in 28 days) (rate limited; try again shortly)"
    )
    assert len(mock.calls) == 3


def test_429_then_success_returns_the_results(mock):
    """A passing rate limit is absorbed by one retry."""
    params = {"q": "q", "count": "10", "extra_snippets": "true"}
    expect(mock, params, json=ERROR_429, status=429, headers=RATE_HEADERS)
    expect(mock, params, json=SEARCH)
    assert len(make_provider().search(SearchRequest(query="q"), None).hits) == 2


def test_a_key_echoed_in_an_error_is_redacted(mock):
    """The token never reaches the message, even when Brave's detail repeats it."""
    body = {"type": "ErrorResponse", "error": {"status": 401, "detail": f"Token {KEY} unknown"}}
    expect(mock, {"q": "q", "count": "10", "extra_snippets": "true"}, json=body, status=401)
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_error_text_reads_only_brave_error_bodies():
    """Anything but Brave's ErrorResponse gives no words of its own."""
    assert brave_error_text({"message": "x"}) is None
    assert brave_error_text([1]) is None
    assert brave_error_text({"error": {"code": "X"}}) == ("X", "X")


def test_rate_limit_text_only_for_429_and_tolerates_junk_headers():
    """Only a 429 is annotated; unparseable values are skipped."""
    assert brave_rate_limit_text(401, RATE_HEADERS) is None
    assert brave_rate_limit_text(429, {}) is None
    assert brave_rate_limit_text(429, {"X-RateLimit-Limit": "x, 5"}) == "quota: limit 5"
