"""The Tavily provider against recorded-shape responses (``responses``; never the network)."""

from __future__ import annotations

import pytest
import responses
from pi_web_tools import testing
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.retry import RetryPolicy
from pi_web_tools.api.types import FetchRequest, SearchRequest
from pi_web_tools.providers.tavily import (
    TAVILY,
    TavilyOptions,
    TavilyProvider,
    tavily_error_text,
)
from responses import matchers

KEY = "tvly-dev-test0123456789abcdef"
BASE = "https://api.tavily.com"

SEARCH = {
    "query": "Who is Leo Messi?",
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
            "title": "Lionel Messi - Wikipedia",
            "content": 'Lionel Andrés "Leo" Messi (born 24 June 1987) is an Argentine\n'
            "professional footballer who plays as a forward for and captains both Major League "
            "Soccer club Inter Miami and the Argentina national team.",
            "score": 0.81025416,
            "raw_content": None,
        },
        {
            "url": "https://www.espn.com/soccer/player/_/id/45843/lionel-messi",
            "title": "Lionel Messi - Inter Miami CF Forward - ESPN",
            "content": "View the profile of Inter Miami CF Forward Lionel Messi on ESPN.",
            "score": 0.6,
            "raw_content": None,
            "published_date": "Sun, 02 Nov 2025 10:00:00 GMT",
        },
    ],
    "response_time": 1.67,
    "request_id": "123e4567-e89b-12d3-a456-426614174111",
}
EXTRACT = {
    "results": [
        {
            "url": "https://en.wikipedia.org/wiki/Artificial_intelligence",
            "raw_content": "# Artificial intelligence\n\n**Artificial intelligence** (**AI**) is the "
            "capability of computational systems to perform tasks typically associated with "
            "human intelligence.",
            "images": [],
            "favicon": "https://en.wikipedia.org/static/favicon/wikipedia.ico",
        }
    ],
    "failed_results": [
        {"url": "https://paywalled.example/story", "error": "Failed to fetch url"},
    ],
    "response_time": 0.02,
    "request_id": "a9c1d3e5-7f90-4b2c-8d4e-6f8a0b2c4d6e",
}


@pytest.fixture
def mock():
    """A strict mock: every registered response must be used."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def make_provider(**options) -> TavilyProvider:
    """A Tavily provider with no backoff delay, so retry tests run instantly."""
    provider = TavilyProvider("tavily", KEY, TavilyOptions(**options))
    provider.http.retry = RetryPolicy(backoff_factor=0.0, backoff_jitter=0.0)
    return provider


def expect(mock, path: str, body: dict, *, json=None, status: int = 200, **kwargs):
    """Register one POST whose Bearer header and exact JSON body are pinned."""
    return mock.add(
        responses.POST,
        f"{BASE}{path}",
        json=json,
        status=status,
        match=[
            matchers.header_matcher({"Authorization": f"Bearer {KEY}"}),
            matchers.json_params_matcher(body, strict_match=True),
        ],
        **kwargs,
    )


PLAIN = {"query": "q", "max_results": 5, "include_answer": False}


def test_the_type_follows_the_provider_contract():
    """check_provider_type accepts the tavily type with every option set."""
    options = {
        "baseUrl": "http://127.0.0.1:9",
        "defaultSearchLimit": 20,
        "defaultFetchTextMaxCharacters": 5000,
        "searchDepth": "advanced",
        "topic": "news",
        "extractDepth": "advanced",
        "timeoutSeconds": 5,
    }
    assert testing.check_provider_type(TAVILY, options=options).base_url == "http://127.0.0.1:9"


def test_search_maps_results_with_scores_and_dates(mock):
    """Title, URL, content as snippet (one line), score and published date are kept."""
    expect(mock, "/search", {**PLAIN, "query": "Who is Leo Messi?"}, json=SEARCH)
    first, second = make_provider().search(SearchRequest(query="Who is Leo Messi?"), None).hits
    assert first.title == "Lionel Messi - Wikipedia"
    assert first.snippet.startswith(
        'Lionel Andrés "Leo" Messi (born 24 June 1987) is an Argentine professional'
    )
    assert first.score == pytest.approx(0.81025416)
    assert first.published is None
    assert second.published == "Sun, 02 Nov 2025 10:00:00 GMT"


def test_filters_are_native_fields(mock):
    """Domains and dates (day part only) go in Tavily's own fields; depth and topic from options."""
    body = {
        "query": "q",
        "max_results": 20,
        "include_answer": False,
        "include_domains": ["arxiv.org"],
        "exclude_domains": ["reddit.com"],
        "start_date": "2025-01-01",
        "end_date": "2025-06-30",
        "search_depth": "advanced",
        "topic": "news",
    }
    expect(mock, "/search", body, json=SEARCH)
    request = SearchRequest(
        query="q",
        limit=50,
        include_domains=("arxiv.org",),
        exclude_domains=("reddit.com",),
        start_published_date="2025-01-01T00:00:00Z",
        end_published_date="2025-06-30",
    )
    response = make_provider(search_depth="advanced", topic="news").search(request, None)
    assert response.notices == ("Tavily returns at most 20 results per query.",)


def test_search_with_no_results_is_empty(mock):
    """An empty results list is an empty answer."""
    expect(mock, "/search", PLAIN, json={"query": "q", "results": [], "response_time": 0.4})
    assert make_provider().search(SearchRequest(query="q"), None).hits == ()


def test_search_results_not_a_list_is_a_shape_error(mock):
    """A 'results' that is not a list raises an error naming the field."""
    expect(mock, "/search", PLAIN, json={"results": "nope"})
    with pytest.raises(ProviderError, match="'results' should be a list, got str"):
        make_provider().search(SearchRequest(query="q"), None)


def test_fetch_maps_results_and_failed_results_in_request_order(mock):
    """Each URL gets its page or its failure, in the order asked."""
    urls = [
        "https://paywalled.example/story",
        "https://en.wikipedia.org/wiki/Artificial_intelligence",
    ]
    expect(mock, "/extract", {"urls": urls, "format": "markdown"}, json=EXTRACT)
    failed, page = make_provider().fetch(FetchRequest(urls=tuple(urls)), None).pages
    assert not failed.ok and failed.error == "Failed to fetch url"
    assert page.ok and page.text.startswith("# Artificial intelligence")
    assert page.final_url is None and page.notes == ()


def test_fetch_cuts_long_text_and_notes_it(mock):
    """Text beyond text_max_characters is cut, with a note saying how to get more."""
    url = "https://long.example/"
    body = {"results": [{"url": url, "raw_content": "x" * 50}], "failed_results": []}
    expect(
        mock,
        "/extract",
        {"urls": [url], "format": "markdown", "extract_depth": "advanced"},
        json=body,
    )
    request = FetchRequest(urls=(url,), text_max_characters=10)
    (page,) = make_provider(extract_depth="advanced").fetch(request, None).pages
    assert page.text == "x" * 10
    assert page.notes == ("text cut at 10 characters; pass text_max_characters for more",)


def test_fetch_sends_at_most_twenty_urls_per_request(mock):
    """25 URLs are two /extract requests (20, then 5); a URL Tavily never mentions fails."""
    urls = [f"https://site.example/{i}" for i in range(25)]
    expect(
        mock,
        "/extract",
        {"urls": urls[:20], "format": "markdown"},
        json={"results": [{"url": u, "raw_content": "t"} for u in urls[:20]]},
    )
    expect(
        mock,
        "/extract",
        {"urls": urls[20:], "format": "markdown"},
        json={"results": [{"url": u, "raw_content": "t"} for u in urls[20:24]]},
    )
    pages = make_provider().fetch(FetchRequest(urls=tuple(urls)), None).pages
    assert [p.ok for p in pages] == [True] * 24 + [False]
    assert pages[-1].error == "no result returned by Tavily"


def test_fetch_matches_a_url_tavily_normalized(mock):
    """A trailing slash or host case changed by Tavily still matches the URL asked for."""
    body = {"results": [{"url": "https://example.com/a", "raw_content": "text"}]}
    expect(mock, "/extract", {"urls": ["https://EXAMPLE.com/a/"], "format": "markdown"}, json=body)
    (page,) = make_provider().fetch(FetchRequest(urls=("https://EXAMPLE.com/a/",)), None).pages
    assert page.ok and page.final_url == "https://example.com/a"


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            400,
            {"detail": {"error": "Query is invalid."}},
            "Tavily: HTTP 400 Bad Request: Query is invalid.",
        ),
        (
            401,
            {"detail": {"error": "Unauthorized: missing or invalid API key."}},
            "Tavily: HTTP 401 Unauthorized: Unauthorized: missing or invalid API key.",
        ),
        (
            432,
            {
                "detail": {
                    "error": "This request exceeds your plan's set usage limit. Please upgrade "
                    "your plan or contact support@tavily.com"
                }
            },
            "Tavily: HTTP 432: This request exceeds your plan's set usage limit. Please upgrade "
            "your plan or contact support@tavily.com (your Tavily plan's credit limit is used "
            "up; upgrade the plan or wait for the monthly reset (https://app.tavily.com))",
        ),
        (
            433,
            {"detail": {"error": "This request exceeds the pay-as-you-go limit."}},
            "Tavily: HTTP 433: This request exceeds the pay-as-you-go limit. (your "
            "pay-as-you-go spending limit is reached; raise it on the Tavily dashboard "
            "(https://app.tavily.com))",
        ),
        (
            422,
            {"detail": [{"loc": ["body", "max_results"], "msg": "Input should be less than 21"}]},
            "Tavily: HTTP 422 Unprocessable Entity: max_results: Input should be less than 21",
        ),
    ],
)
def test_error_statuses_are_explained_once(mock, status, body, expected):
    """Client errors and the plan statuses are not retried and are said in words."""
    expect(mock, "/search", PLAIN, json=body, status=status)
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    assert str(info.value) == expected
    assert info.value.status == status
    expected_kind = {401: "authentication", 432: "quota", 433: "quota"}.get(status)
    assert info.value.kind == expected_kind


def test_plan_status_on_extract_is_explained_too(mock):
    """A 432 from /extract fails the whole fetch with the same words."""
    expect(
        mock,
        "/extract",
        {"urls": ["https://a.example/"], "format": "markdown"},
        json={"detail": {"error": "limit"}},
        status=432,
    )
    with pytest.raises(ProviderError, match="credit limit is used up"):
        make_provider().fetch(FetchRequest(urls=("https://a.example/",)), None)


def test_429_is_retried_then_reported(mock):
    """A rate limit is retried twice, then reported as rate limited."""
    for _ in range(3):
        expect(
            mock,
            "/search",
            PLAIN,
            json={"detail": {"error": "Your request has been blocked due to excessive requests."}},
            status=429,
        )
    with pytest.raises(
        ProviderError, match=r"HTTP 429 Too Many Requests: Your request has been blocked"
    ):
        make_provider().search(SearchRequest(query="q"), None)
    assert len(mock.calls) == 3


def test_a_key_echoed_in_an_error_is_redacted(mock):
    """The key never reaches the message."""
    expect(
        mock, "/search", PLAIN, json={"detail": {"error": f"Invalid API key: {KEY}"}}, status=401
    )
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_error_text_reads_tavily_bodies_only():
    """Tavily's shapes give words; anything else gives none."""
    assert tavily_error_text({"detail": "Not Found"}) == "Not Found"
    assert tavily_error_text({"error": "x"}) == "x"
    assert tavily_error_text({"other": 1}) is None
    assert tavily_error_text("text") is None
