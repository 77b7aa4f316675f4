"""The SearXNG provider against responses of the shape searx/webutils.get_json_response writes
(``responses``; never the network)."""

from __future__ import annotations

from datetime import date

import pytest
import responses
from pi_web_tools.api import ProviderError, RetryPolicy, SearchRequest
from pi_web_tools.providers.searxng import (
    SEARXNG,
    SearxngOptions,
    SearxngProvider,
    instance_root,
    time_range,
)
from responses import matchers

BASE = "https://searx.example.org"
URL = f"{BASE}/search"


def result(url: str, title: str, content: str = "", **extra) -> dict:
    """One merged result as SearXNG serializes it (a LegacyResult / MainResult as_dict)."""
    from urllib.parse import urlparse

    return {
        "template": "default.html",
        "url": url,
        "title": title,
        "content": content,
        "engine": "duckduckgo",
        "parsed_url": list(urlparse(url)),
        "img_src": "",
        "thumbnail": "",
        "priority": "",
        "engines": ["duckduckgo", "brave"],
        "positions": [1, 2],
        "score": 3.0,
        "category": "general",
        "publishedDate": None,
        **extra,
    }


BODY = {
    "query": "tokio runtime",
    "results": [
        result(
            "https://tokio.rs/",
            "Tokio - An asynchronous Rust runtime",
            "Tokio is an event-driven, non-blocking I/O platform",
            publishedDate="2025-11-02T08:14:37",
        ),
        result("https://docs.rs/tokio", "tokio - Rust", "A runtime for writing reliable apps"),
        result("magnet:?xt=urn:btih:abc", "not a web page"),
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["tokio tutorial", "tokio vs async-std"],
    "unresponsive_engines": [["google", "CAPTCHA"], ["bing", "timeout"]],
}


def provider(**options) -> SearxngProvider:
    return SearxngProvider("searx", SearxngOptions(base_url=BASE, **options))


@responses.activate
def test_a_query_is_a_json_get_on_the_search_path():
    """GET {base}/search?q=…&format=json&pageno=1, asking for JSON."""
    responses.get(
        URL,
        json=BODY,
        match=[
            matchers.query_param_matcher({"q": "tokio runtime", "format": "json", "pageno": "1"}),
            matchers.header_matcher({"Accept": "application/json"}),
        ],
    )
    found = provider().search(SearchRequest(query="tokio runtime"), None)
    assert [h.url for h in found.hits] == ["https://tokio.rs/", "https://docs.rs/tokio"]
    assert found.hits[0].title == "Tokio - An asynchronous Rust runtime"
    assert found.hits[0].snippet == "Tokio is an event-driven, non-blocking I/O platform"
    assert found.hits[0].published == "2025-11-02T08:14:37"
    assert found.related == ("tokio tutorial", "tokio vs async-std")
    assert found.warnings == (
        "SearXNG engines that did not answer: google: CAPTCHA; bing: timeout",
    )


@responses.activate
def test_options_become_searxng_parameters():
    """categories, engines, language (also as Accept-Language) and safesearch are SearXNG's own."""
    responses.get(
        URL,
        json=BODY,
        match=[
            matchers.query_param_matcher(
                {
                    "q": "tokio",
                    "format": "json",
                    "pageno": "1",
                    "categories": "it,general",
                    "engines": "duckduckgo,wikipedia",
                    "language": "de-DE",
                    "safesearch": "2",
                }
            ),
            matchers.header_matcher({"Accept-Language": "de-DE"}),
        ],
    )
    chosen = provider(
        categories=["it", "general"],
        engines=["duckduckgo", "wikipedia"],
        language="de-DE",
        safesearch=2,
    )
    assert len(chosen.search(SearchRequest(query="tokio"), None).hits) == 2


@responses.activate
def test_the_limit_cuts_the_merged_list():
    responses.get(URL, json=BODY)
    assert len(provider().search(SearchRequest(query="x", limit=1), None).hits) == 1
    assert len(provider(default_search_limit=1).search(SearchRequest(query="x"), None).hits) == 1


@responses.activate
def test_a_disabled_json_format_says_the_exact_settings_change():
    """SearXNG answers 403 (Flask's page) when settings.yml's search.formats lacks json."""
    responses.get(
        URL,
        status=403,
        content_type="text/html; charset=utf-8",
        body="<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>",
    )
    with pytest.raises(ProviderError) as caught:
        provider().search(SearchRequest(query="x"), None)
    assert caught.value.status == 403
    assert str(caught.value) == (
        "SearXNG (searx): HTTP 403 Forbidden for format=json, which SearXNG answers when its "
        'JSON format is not enabled: in the instance\'s settings.yml, under "search:", set '
        '"formats: [html, json]" (keep any other format listed there) and restart SearXNG'
    )
    assert len(responses.calls) == 1  # never retried


@responses.activate
def test_the_limiters_429_names_the_setting(monkeypatch):
    """The bot detection's plain 429 says how a self-hosted instance lets an API client in."""
    responses.get(URL, status=429, body="Too Many Requests", content_type="text/html")
    chosen = provider()
    chosen.http.retry = RetryPolicy(total=0)
    with pytest.raises(ProviderError) as caught:
        chosen.search(SearchRequest(query="x"), None)
    assert caught.value.status == 429
    assert "HTTP 429 Too Many Requests: Too Many Requests" in str(caught.value)
    assert '"server: limiter: false"' in str(caught.value)


@responses.activate
def test_a_redirect_is_named_and_never_followed():
    """The instance's address is the user's: a redirect elsewhere (an internal address) is not
    followed; the error says where it pointed."""
    responses.get(URL, status=302, headers={"Location": "http://169.254.169.254/latest/meta-data"})
    responses.get("http://169.254.169.254/latest/meta-data", json=BODY)
    with pytest.raises(ProviderError) as caught:
        provider().search(SearchRequest(query="x"), None)
    assert str(caught.value) == (
        "SearXNG (searx): HTTP 302: the API redirected to http://169.254.169.254/latest/meta-data, "
        "which is not followed; set baseUrl to the address it moved to"
    )
    assert [call.request.url.split("?")[0] for call in responses.calls] == [URL]


@responses.activate
def test_searxngs_own_error_words_are_kept():
    responses.get(URL, status=400, json={"error": "Invalid value 2 for parameter safesearch"})
    with pytest.raises(ProviderError, match="HTTP 400 Bad Request: Invalid value 2 for parameter"):
        provider().search(SearchRequest(query="x"), None)


@responses.activate
def test_no_results_because_engines_failed_is_a_failure():
    """An empty list with failed engines is an outage of the instance, not an empty web."""
    responses.get(URL, json={**BODY, "results": []})
    with pytest.raises(ProviderError) as caught:
        provider().search(SearchRequest(query="x"), None)
    assert str(caught.value) == (
        "SearXNG (searx): no results, and these engines failed: google: CAPTCHA; bing: timeout"
    )


@responses.activate
def test_no_results_with_every_engine_answering_is_an_empty_list():
    responses.get(URL, json={**BODY, "results": [], "unresponsive_engines": []})
    assert provider().search(SearchRequest(query="x"), None).hits == ()


@responses.activate
def test_domain_filters_are_operators_and_are_checked_on_every_result():
    """One included domain is a site: operator; every result off the included domains, or on an
    excluded one, is removed whatever the engines did."""
    responses.get(
        URL,
        json=BODY,
        match=[
            matchers.query_param_matcher(
                {"q": "tokio site:docs.rs -site:reddit.com", "format": "json", "pageno": "1"}
            )
        ],
    )
    found = provider().search(
        SearchRequest(query="tokio", include_domains=("docs.rs",), exclude_domains=("reddit.com",)),
        None,
    )
    assert [h.url for h in found.hits] == ["https://docs.rs/tokio"]


def test_a_start_date_becomes_the_smallest_time_range_that_reaches_it():
    today = date(2026, 11, 20)
    assert time_range("2026-11-19", today) == "day"
    assert time_range("2026-11-14", today) == "week"
    assert time_range("2026-10-25", today) == "month"
    assert time_range("2026-01-01", today) == "year"
    assert time_range("2020-01-01", today) is None
    assert time_range(None, today) is None


@responses.activate
def test_dated_results_outside_the_dates_are_removed_and_the_answer_says_so():
    responses.get(URL, json=BODY)
    found = provider().search(
        SearchRequest(
            query="x", start_published_date="2020-01-01", end_published_date="2024-12-31"
        ),
        None,
    )
    assert [h.url for h in found.hits] == ["https://docs.rs/tokio"]  # undated: kept
    assert found.notices == (
        "SearXNG filters dates by a time range only (any time); results dated outside the "
        "dates asked were removed, undated ones kept.",
    )


@responses.activate
def test_categories_map_to_searxngs():
    responses.get(
        URL,
        json=BODY,
        match=[
            matchers.query_param_matcher(
                {"q": "x", "format": "json", "pageno": "1", "categories": "science"}
            )
        ],
    )
    provider().search(SearchRequest(query="x", category="research paper"), None)
    with pytest.raises(ProviderError, match="category 'company' has no SearXNG counterpart"):
        provider().search(SearchRequest(query="x", category="company"), None)


def test_the_base_url_may_be_pasted_with_the_search_path():
    assert instance_root("https://searx.example.org/search?q=x") == BASE
    assert instance_root("http://127.0.0.1:8888/") == "http://127.0.0.1:8888"


def test_without_base_url_the_call_and_pi_web_config_say_what_to_add():
    with pytest.raises(ProviderError, match='no baseUrl: add "options": {"baseUrl"'):
        SearxngProvider("searx", SearxngOptions()).search(SearchRequest(query="x"), None)
    assert "no baseUrl" in SEARXNG.setup_check(SearxngOptions())
    assert SEARXNG.setup_check(SearxngOptions(base_url=BASE)) is None


def test_the_type_is_keyless_self_hosted_search():
    assert SEARXNG.key is None and SEARXNG.self_hosted
    assert SEARXNG.capabilities == {"search"}


def test_nothing_configured_offers_a_searxng_instance_after_the_seed_sentence():
    from pi_web_tools.api.errors import ConfigError
    from pi_web_tools.runtime.registry import resolve_provider

    with pytest.raises(ConfigError) as info:
        resolve_provider("search")
    message = str(info.value)
    assert message.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
    )
    assert '{"name": "searx", "type": "searxng", "options": {"baseUrl": ' in message
