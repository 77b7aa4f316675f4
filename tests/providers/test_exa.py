"""The Exa provider against recorded-shape responses (``responses``; never the network)."""

from __future__ import annotations

import pytest
import responses
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.retry import RetryPolicy
from pi_web_tools.api.types import FetchRequest, ProviderConfig, SearchRequest
from pi_web_tools.providers.exa import ExaOptions, ExaProvider, exa_error_text
from responses import matchers

KEY = "exa-test-key-0123456789abcdef"
BASE = "https://api.exa.ai"

AUTO_SEARCH = {
    "requestId": "a3c1f0d9e8b74c2a9f1e0b6d5c4a3b21",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://example-startup.com",
            "url": "https://example-startup.com",
            "title": "Example AI Startup",
            "publishedDate": "2024-01-15",
            "author": "John Doe",
        },
        {
            "id": "https://example.com/llm-2026",
            "url": "https://example.com/llm-2026",
            "title": None,
            "publishedDate": None,
            "author": None,
        },
    ],
    "costDollars": {"total": 0.005},
}

NEURAL_SEARCH = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://arxiv.org/abs/2307.06435",
            "url": "https://arxiv.org/pdf/2307.06435.pdf",
            "title": "A Comprehensive Overview of Large Language Models",
            "publishedDate": "2023-11-16T01:36:32.547Z",
            "author": "Humza  Naveed, University of Engineering and Technology (UET), Lahore, Pakistan",
            "score": 0.3872,
            "image": "https://arxiv.org/pdf/2307.06435.pdf/page_1.png",
            "favicon": "https://arxiv.org/favicon.ico",
        }
    ],
    "costDollars": {"total": 0.005, "search": {"neural": 0.005}},
    "searchTime": 412.6,
}

PARTIAL_CONTENTS = {
    "requestId": "e492118ccdedcba5088bfc4357a8a125",
    "results": [
        {
            "id": "https://arxiv.org/abs/2307.06435",
            "url": "https://arxiv.org/abs/2307.06435",
            "title": "A Comprehensive Overview of Large Language Models",
            "publishedDate": "2023-07-12T00:00:00.000Z",
            "author": "Humza Naveed",
            "text": "Abstract Large Language Models (LLMs) have recently demonstrated remarkable "
            "capabilities in natural language processing tasks and beyond...",
        }
    ],
    "statuses": [
        {"id": "https://arxiv.org/abs/2307.06435", "status": "success", "source": "cached"},
        {
            "id": "https://example.com/missing",
            "status": "error",
            "error": {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404},
        },
    ],
    "costDollars": {"total": 0.001, "contents": {"text": 0.001}},
}

ALL_FAILED_CONTENTS = {
    "requestId": "9f2d4c1b0a8e7d6c5b4a3f2e1d0c9b8a",
    "results": [],
    "statuses": [
        {
            "id": "https://paywalled.example/article",
            "status": "error",
            "error": {"tag": "SOURCE_NOT_AVAILABLE", "httpStatusCode": 403},
        },
        {
            "id": "https://unsupported.example/doc.bin",
            "status": "error",
            "error": {"tag": "UNSUPPORTED_URL", "httpStatusCode": None},
        },
        {
            "id": "https://slow.example/",
            "status": "error",
            "error": {"tag": "CRAWL_LIVECRAWL_TIMEOUT", "httpStatusCode": 408},
        },
    ],
}


@pytest.fixture
def mock():
    """A strict mock: every registered response must be used."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def make_provider(**options) -> ExaProvider:
    """An Exa provider with no backoff delay, so retry tests run instantly."""
    provider = ExaProvider("exa", KEY, ExaOptions(**options))
    provider.http.retry = RetryPolicy(backoff_factor=0.0, backoff_jitter=0.0 / 2)
    return provider


def expect(mock, path: str, body: dict, *, json=None, status: int = 200, **kwargs):
    """Register one POST whose headers and exact JSON body are pinned (a search's ``type`` is
    ``auto`` unless *body* says otherwise)."""
    if path == "/search":
        body = {"type": "auto", **body}
    return mock.add(
        responses.POST,
        f"{BASE}{path}",
        json=json,
        status=status,
        match=[
            matchers.header_matcher({"x-api-key": KEY, "Content-Type": "application/json"}),
            matchers.json_params_matcher(body, strict_match=True),
        ],
        **kwargs,
    )


def test_search_sends_metadata_only_request_and_maps_auto_results(mock):
    """A plain search posts query and numResults without contents, and maps hits (no score for auto)."""
    expect(mock, "/search", {"query": "ai startups", "numResults": 5}, json=AUTO_SEARCH)
    response = make_provider().search(SearchRequest(query="ai startups"), ctx=None)
    first, second = response.hits
    assert first.title == "Example AI Startup"
    assert first.url == "https://example-startup.com"
    assert first.published == "2024-01-15"
    assert first.author == "John Doe"
    assert first.score is None
    assert first.snippet == ""
    assert second.title == "https://example.com/llm-2026"
    assert second.published is None and second.author is None


def test_search_sends_every_filter_in_camel_case(mock):
    """Limit, domains, dates and category become Exa's camelCase fields, and scores are kept."""
    body = {
        "query": "llm capabilities",
        "numResults": 3,
        "includeDomains": ["arxiv.org"],
        "excludeDomains": ["reddit.com", "x.com"],
        "startPublishedDate": "2023-01-01",
        "endPublishedDate": "2024-01-01T00:00:00.000Z",
        "category": "research paper",
    }
    expect(mock, "/search", body, json=NEURAL_SEARCH)
    request = SearchRequest(
        query="llm capabilities",
        limit=3,
        include_domains=("arxiv.org",),
        exclude_domains=("reddit.com", "x.com"),
        start_published_date="2023-01-01",
        end_published_date="2024-01-01T00:00:00.000Z",
        category="research paper",
    )
    (hit,) = make_provider().search(request, ctx=None).hits
    assert hit.score == pytest.approx(0.3872)
    assert hit.url == "https://arxiv.org/pdf/2307.06435.pdf"
    assert hit.published == "2023-11-16T01:36:32.547Z"


def test_search_uses_configured_default_limit(mock):
    """Without a request limit, options.defaultSearchLimit sets numResults."""
    expect(mock, "/search", {"query": "q", "numResults": 12}, json={"results": []})
    assert (
        make_provider(default_search_limit=12).search(SearchRequest(query="q"), ctx=None).hits == ()
    )


def test_search_keeps_unrequested_text_short_as_snippet(mock):
    """Text or highlights the server sends anyway become a short snippet."""
    body = {
        "results": [
            {"url": "https://a.example", "title": "A", "text": "word " * 500},
            {"url": "https://b.example", "title": "B", "highlights": ["first bit", "second bit"]},
        ]
    }
    expect(mock, "/search", {"query": "q", "numResults": 5}, json=body)
    first, second = make_provider().search(SearchRequest(query="q"), ctx=None).hits
    assert 0 < len(first.snippet) <= 300
    assert second.snippet == "first bit … second bit"


def test_search_skips_malformed_items(mock):
    """Items that are not objects or have no URL are skipped instead of crashing."""
    body = {
        "results": [
            "junk",
            None,
            {"title": "no url"},
            {"url": "https://ok.example", "title": 5, "score": True},
        ]
    }
    expect(mock, "/search", {"query": "q", "numResults": 5}, json=body)
    (hit,) = make_provider().search(SearchRequest(query="q"), ctx=None).hits
    assert hit.title == "https://ok.example"
    assert hit.score is None


def test_search_results_not_a_list_is_a_shape_error(mock):
    """A 'results' that is not a list raises a ProviderError naming the shape problem."""
    expect(mock, "/search", {"query": "q", "numResults": 5}, json={"results": {"oops": 1}})
    with pytest.raises(
        ProviderError, match="unexpected response shape: 'results' should be a list"
    ):
        make_provider().search(SearchRequest(query="q"), ctx=None)


def test_search_body_not_an_object_is_a_shape_error(mock):
    """A JSON array body raises a shape error rather than AttributeError."""
    expect(mock, "/search", {"query": "q", "numResults": 5}, json=[1, 2])
    with pytest.raises(ProviderError, match="the body is not an object"):
        make_provider().search(SearchRequest(query="q"), ctx=None)


def test_invalid_json_body_is_a_clean_error(mock):
    """A 200 with an HTML body raises a ProviderError saying it is not JSON."""
    mock.add(
        responses.POST,
        f"{BASE}/search",
        body="<html><title>Gateway</title></html>",
        status=200,
        content_type="text/html",
    )
    with pytest.raises(ProviderError, match="not valid JSON") as info:
        make_provider().search(SearchRequest(query="q"), ctx=None)
    assert KEY not in str(info.value)


def test_fetch_partial_failure_maps_results_and_statuses(mock):
    """A /contents 200 with one success and one CRAWL_NOT_FOUND gives one page and one failure, in order."""
    body = {
        "urls": ["https://example.com/missing", "https://arxiv.org/abs/2307.06435"],
        "text": {"maxCharacters": 100000},
    }
    expect(mock, "/contents", body, json=PARTIAL_CONTENTS)
    request = FetchRequest(urls=("https://example.com/missing", "https://arxiv.org/abs/2307.06435"))
    missing, found = make_provider().fetch(request, ctx=None).pages
    assert missing.url == "https://example.com/missing"
    assert missing.ok is False
    assert missing.error == "CRAWL_NOT_FOUND (HTTP 404)"
    assert missing.code == "CRAWL_NOT_FOUND"
    assert missing.status == 404
    assert found.ok is True
    assert found.title == "A Comprehensive Overview of Large Language Models"
    assert found.text.startswith("Abstract Large Language Models")
    assert found.published == "2023-07-12T00:00:00.000Z"
    assert found.author == "Humza Naveed"
    assert found.final_url is None


def test_fetch_sends_modes_and_text_cap(mock):
    """Highlights and summary are top-level /contents fields; text asks for at least 100,000 characters."""
    body = {
        "urls": ["https://a.example/"],
        "text": {"maxCharacters": 100000},
        "highlights": True,
        "summary": True,
    }
    reply = {
        "results": [
            {
                "id": "https://a.example/",
                "url": "https://a.example/",
                "title": "A",
                "text": "body",
                "highlights": ["h1", 3],
                "summary": "short",
            }
        ],
        "statuses": [{"id": "https://a.example/", "status": "success", "source": "cached"}],
    }
    expect(mock, "/contents", body, json=reply)
    request = FetchRequest(
        urls=("https://a.example/",), highlights=True, summary=True, text_max_characters=500
    )
    (page,) = make_provider().fetch(request, ctx=None).pages
    assert (page.text, page.highlights, page.summary) == ("body", ("h1",), "short")


def test_fetch_without_text_omits_text_and_uses_option_default(mock):
    """text=False with highlights sends no text; the option default caps text when it is asked for."""
    expect(
        mock,
        "/contents",
        {"urls": ["https://a.example/"], "highlights": True},
        json={
            "results": [
                {"id": "https://a.example/", "url": "https://a.example/", "highlights": ["x"]}
            ]
        },
    )
    expect(
        mock,
        "/contents",
        {"urls": ["https://a.example/"], "text": {"maxCharacters": 777}},
        json={"results": [{"id": "https://a.example/", "url": "https://a.example/", "text": "t"}]},
    )
    provider = make_provider(default_fetch_text_max_characters=777)
    (page,) = provider.fetch(
        FetchRequest(urls=("https://a.example/",), text=False, highlights=True), ctx=None
    ).pages
    assert page.ok and page.text is None and page.highlights == ("x",)
    (page,) = provider.fetch(FetchRequest(urls=("https://a.example/",)), ctx=None).pages
    assert page.text == "t"


def test_fetch_matches_results_by_url_with_trailing_slash(mock):
    """A result whose id differs only by a trailing slash still matches the requested URL."""
    expect(
        mock,
        "/contents",
        {"urls": ["https://example.com"], "text": {"maxCharacters": 100000}},
        json={
            "results": [
                {"id": "https://example.com/", "url": "https://www.example.com/", "text": "hi"}
            ]
        },
    )
    (page,) = make_provider().fetch(FetchRequest(urls=("https://example.com",)), ctx=None).pages
    assert page.ok and page.text == "hi"
    assert page.final_url == "https://www.example.com/"


def test_fetch_all_failed(mock):
    """Every URL failing in statuses gives one failure per URL, with tag and HTTP code when known."""
    urls = (
        "https://paywalled.example/article",
        "https://unsupported.example/doc.bin",
        "https://slow.example/",
    )
    expect(
        mock,
        "/contents",
        {"urls": list(urls), "text": {"maxCharacters": 100000}},
        json=ALL_FAILED_CONTENTS,
    )
    pages = make_provider().fetch(FetchRequest(urls=urls), ctx=None).pages
    assert [p.ok for p in pages] == [False, False, False]
    assert [p.error for p in pages] == [
        "SOURCE_NOT_AVAILABLE (HTTP 403)",
        "UNSUPPORTED_URL",
        "CRAWL_LIVECRAWL_TIMEOUT (HTTP 408)",
    ]
    assert [p.status for p in pages] == [403, None, 408]


def test_fetch_url_missing_from_results_and_statuses(mock):
    """A URL Exa says nothing about is a failure 'no result returned by Exa'."""
    expect(
        mock,
        "/contents",
        {"urls": ["https://a.example/", "https://b.example/"], "text": {"maxCharacters": 100000}},
        json={
            "results": [{"id": "https://a.example/", "url": "https://a.example/", "text": "a"}],
            "statuses": [{"id": "https://a.example/", "status": "success"}],
        },
    )
    first, second = (
        make_provider()
        .fetch(FetchRequest(urls=("https://a.example/", "https://b.example/")), ctx=None)
        .pages
    )
    assert first.ok is True
    assert (second.ok, second.error) == (False, "no result returned by Exa")


def test_fetch_results_not_a_list_is_a_shape_error(mock):
    """A /contents body whose 'results' is not a list raises a shape error."""
    expect(
        mock,
        "/contents",
        {"urls": ["https://a.example/"], "text": {"maxCharacters": 100000}},
        json={"results": "nope"},
    )
    with pytest.raises(ProviderError, match="unexpected response shape"):
        make_provider().fetch(FetchRequest(urls=("https://a.example/",)), ctx=None)


def test_401_invalid_key(mock):
    """A 401 raises with the status, the tag and Exa's words, never the key."""
    expect(
        mock,
        "/search",
        {"query": "q", "numResults": 5},
        status=401,
        json={
            "requestId": "2e2745fb5066969f5ed51841d014efbd",
            "error": "Invalid API key",
            "tag": "INVALID_API_KEY",
        },
    )
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), ctx=None)
    assert str(info.value) == "Exa: HTTP 401 Unauthorized: INVALID_API_KEY: Invalid API key"
    assert (info.value.status, info.value.code) == (401, "INVALID_API_KEY")
    assert KEY not in str(info.value)


def test_402_without_request_id(mock):
    """A 402 body with only error and tag reads 'NO_MORE_CREDITS: ...' and is not retried."""
    expect(
        mock,
        "/contents",
        {"urls": ["https://a.example/"], "text": {"maxCharacters": 100000}},
        status=402,
        json={
            "error": "You have exceeded your credits limit. Please top up to keep using Exa at dashboard.exa.ai",
            "tag": "NO_MORE_CREDITS",
        },
    )
    with pytest.raises(ProviderError) as info:
        make_provider().fetch(FetchRequest(urls=("https://a.example/",)), ctx=None)
    assert "HTTP 402" in str(info.value)
    assert "NO_MORE_CREDITS: You have exceeded your credits limit" in str(info.value)
    assert info.value.code == "NO_MORE_CREDITS"
    assert info.value.retryable is False
    assert len(mock.calls) == 1


def test_429_with_only_error_is_retried_then_reported(mock):
    """A 429 with only 'error' is retried twice (three calls) and then reported as rate limited."""
    body = {
        "error": "You've exceeded your Exa rate limit of 10 requests per second. "
        "If you want this increased, please email hello@exa.ai :)"
    }
    expect(mock, "/search", {"query": "q", "numResults": 5}, status=429, json=body)
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), ctx=None)
    assert len(mock.calls) == 3
    message = str(info.value)
    assert (
        "HTTP 429" in message
        and "exceeded your Exa rate limit" in message
        and "rate limited" in message
    )
    assert info.value.code is None
    assert info.value.retryable is True


def test_429_then_success(mock):
    """A single 429 followed by a 200 returns the results."""
    expect(
        mock, "/search", {"query": "q", "numResults": 5}, status=429, json={"error": "slow down"}
    )
    expect(mock, "/search", {"query": "q", "numResults": 5}, json=AUTO_SEARCH)
    assert len(make_provider().search(SearchRequest(query="q"), ctx=None).hits) == 2


def test_400_validation_error(mock):
    """A 400 validation body surfaces the tag and the validation message."""
    body = {
        "requestId": "67207943fab9832d162b5317f4cca830",
        "error": 'Invalid request body | Validation error: Invalid input: expected string, received undefined at "query"',
        "tag": "INVALID_REQUEST_BODY",
    }
    expect(mock, "/search", {"query": "q", "numResults": 5}, status=400, json=body)
    with pytest.raises(
        ProviderError, match=r"HTTP 400 Bad Request: INVALID_REQUEST_BODY: Invalid request body"
    ):
        make_provider().search(SearchRequest(query="q"), ctx=None)
    assert len(mock.calls) == 1


def test_key_echoed_by_server_is_redacted(mock):
    """An error body that echoes the key never shows it."""
    expect(
        mock,
        "/search",
        {"query": "q", "numResults": 5},
        status=401,
        json={"error": f"bad key {KEY}", "tag": "INVALID_API_KEY"},
    )
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), ctx=None)
    assert KEY not in str(info.value) and "***" in str(info.value)


def test_base_url_option_is_used(mock):
    """options.baseUrl replaces the default endpoint."""
    mock.add(responses.POST, "https://exa.proxy.example/v1/search", json={"results": []})
    provider = ExaProvider("exa", KEY, ExaOptions(base_url="https://exa.proxy.example/v1/"))
    assert provider.search(SearchRequest(query="q"), ctx=None).hits == ()


def test_error_text_shapes():
    """exa_error_text reads {error, tag} with or without requestId, and ignores other shapes."""
    assert exa_error_text({"error": "x", "tag": "T"}) == ("T: x", "T")
    assert exa_error_text({"error": "only words"}) == ("only words", None)
    assert exa_error_text({"tag": "T"}) == ("T", "T")
    assert exa_error_text(["not", "a", "dict"]) is None
    assert exa_error_text({"error": {"nested": 1}}) is None


def test_registered_type_builds_provider():
    """The exa type registers with search and fetch, a required key and ExaOptions."""
    from pi_web_tools.providers.exa import EXA as exa

    assert exa.capabilities == {"search", "fetch", "summarize"}
    assert exa.needs_api_key is True and exa.options_class is ExaOptions
    provider = exa.factory(
        ProviderConfig(name="work", type="exa", api_key=KEY, options=ExaOptions())
    )
    assert isinstance(provider, ExaProvider)
    assert exa.fetch_modes == {"text", "highlights", "summary"}
    assert KEY not in repr(provider)
