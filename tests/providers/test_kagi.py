"""The Kagi provider against realistic Kagi bodies (responses, strict)."""

from __future__ import annotations

import json

import pytest
import responses
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.retry import RetryPolicy
from pi_web_tools.api.types import SearchRequest, SummarizeRequest
from pi_web_tools.providers.kagi import KagiOptions, KagiProvider, clean_snippet
from responses import matchers

from tests.support import SECRET

V0 = "https://kagi.com/api/v0"

SEARCH_OK = {
    "meta": {
        "id": "69c3f5c4168f66b860e951c585550f1c",
        "node": "us-central1",
        "ms": 213,
        "api_balance": 123.456,
    },
    "data": [
        {
            "t": 0,
            "url": "https://en.wikipedia.org/wiki/Steve_Jobs",
            "title": "Steve Jobs - Wikipedia",
            "snippet": "Steven Paul <b>Jobs</b> (February 24, 1955 &ndash; October 5, 2011) was an American&nbsp;businessman ...",
            "thumbnail": {
                "url": "/proxy/310px-Steve_Jobs.jpg?c=9cn5",
                "width": None,
                "height": None,
            },
        },
        {
            "t": 0,
            "url": "https://www.britannica.com/money/Steve-Jobs",
            "title": "Steve Jobs | Biography, Education, Apple, &amp; Facts | Britannica Money",
            "snippet": "Steve Jobs, the visionary co-founder of Apple Inc. &#39;revolutionized&#39; technology ...",
            "published": "2024-09-30T00:00:00Z",
        },
        {
            "t": 0,
            "url": "https://www.apple.com/stevejobs/",
            "title": "Remembering Steve Jobs - Apple",
            "snippet": "He was a visionary that had the amazing ability to breath life into his ideas. ...",
            "thumbnail": {"url": "/proxy/x", "width": "121", "height": "121"},
        },
        {"t": 1, "list": ["steve jobs death", "steve jobs net worth", "steve jobs quotes"]},
    ],
}


def _kagi(**options) -> KagiProvider:
    """A Kagi provider on v0 unless *options* say otherwise (these tests pin v0's contract;
    the auto version is tested end to end), with no backoff delay."""
    provider = KagiProvider("kagi", SECRET, KagiOptions(**{"api_version": "v0", **options}))
    for client in provider.clients:
        client.retry = RetryPolicy(backoff_factor=0.001, backoff_jitter=0.001 / 2)
    return provider


@pytest.fixture
def mock():
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def _error_body(code, msg, balance=None):
    meta = {"id": "5f0e7c3a", "node": "us-east4", "ms": 0}
    if balance is not None:
        meta["api_balance"] = balance
    return {"meta": meta, "data": None, "error": [{"code": code, "msg": msg, "ref": None}]}


def test_search_sends_v0_get_with_bot_auth(mock):
    """GET /search?q=..&limit=.. with Authorization: Bot <key>."""
    mock.get(
        f"{V0}/search",
        json=SEARCH_OK,
        match=[
            matchers.query_param_matcher({"q": "steve jobs", "limit": "10"}),
            matchers.header_matcher({"Authorization": f"Bot {SECRET}"}),
        ],
    )
    response = _kagi().search(SearchRequest(query="steve jobs"), None)
    assert [hit.url for hit in response.hits] == [
        "https://en.wikipedia.org/wiki/Steve_Jobs",
        "https://www.britannica.com/money/Steve-Jobs",
        "https://www.apple.com/stevejobs/",
    ]
    assert response.related == ("steve jobs death", "steve jobs net worth", "steve jobs quotes")
    assert response.balance == 123.456


def test_search_cleans_html_snippets_and_titles(mock):
    """Tags are stripped and entities unescaped; a missing published stays None."""
    mock.get(f"{V0}/search", json=SEARCH_OK)
    hits = _kagi().search(SearchRequest(query="q"), None).hits
    assert hits[0].snippet.startswith(
        "Steven Paul Jobs (February 24, 1955 – October 5, 2011) was an American businessman"
    )
    assert hits[1].title == "Steve Jobs | Biography, Education, Apple, & Facts | Britannica Money"
    assert "'revolutionized'" in hits[1].snippet
    assert hits[0].published is None and hits[1].published == "2024-09-30T00:00:00Z"


def test_search_limit_and_default_limit_option(mock):
    """The request limit wins; else options.defaultSearchLimit."""
    mock.get(
        f"{V0}/search",
        json=SEARCH_OK,
        match=[matchers.query_param_matcher({"q": "q", "limit": "3"})],
    )
    mock.get(
        f"{V0}/search",
        json=SEARCH_OK,
        match=[matchers.query_param_matcher({"q": "q", "limit": "7"})],
    )
    _kagi().search(SearchRequest(query="q", limit=3), None)
    _kagi(default_search_limit=7).search(SearchRequest(query="q"), None)


def test_domain_filters_become_site_operators(mock):
    """include/exclude domains are sent as site: and -site: operators."""
    mock.get(
        f"{V0}/search",
        json=SEARCH_OK,
        match=[
            matchers.query_param_matcher(
                {"q": "async site:docs.rs -site:reddit.com", "limit": "10"}
            )
        ],
    )
    _kagi().search(
        SearchRequest(query="async", include_domains=("docs.rs",), exclude_domains=("reddit.com",)),
        None,
    )


def test_base_url_override(mock):
    """options.baseUrl replaces the production base."""
    mock.get("http://127.0.0.1:9/api/v0/search", json=SEARCH_OK)
    _kagi(base_url="http://127.0.0.1:9/api/v0/").search(SearchRequest(query="q"), None)


def test_401_adds_v1_hint_and_never_the_key(mock):
    """A forced v0's 401 says Unauthorized, suggests dropping apiVersion and hides the key."""
    mock.get(f"{V0}/search", status=401, json=_error_body(2, f"Unauthorized key {SECRET}"))
    with pytest.raises(ProviderError) as info:
        _kagi().search(SearchRequest(query="q"), None)
    message = str(info.value)
    assert "HTTP 401" in message and "Unauthorized" in message and "(code 2)" in message
    assert 'remove "apiVersion"' in message and 'set it to "v1"' in message
    assert SECRET not in message


def test_400_code_1_malformed(mock):
    """Kagi's own message and code appear with the status."""
    mock.get(f"{V0}/search", status=400, json=_error_body(1, "Missing q parameter", 123.4))
    with pytest.raises(
        ProviderError, match=r"HTTP 400 Bad Request: Missing q parameter \(code 1\)"
    ):
        _kagi().search(SearchRequest(query="q"), None)


@pytest.mark.parametrize("status", [400, 402])
def test_insufficient_credit_code_101(mock, status):
    """Code 101 is reported with Kagi's exact words, at 400 or 402, without retrying."""
    mock.get(
        f"{V0}/search",
        status=status,
        json=_error_body(101, "Insufficient credit to perform this request.", 0.0),
    )
    with pytest.raises(
        ProviderError, match="Insufficient credit to perform this request. \\(code 101\\)"
    ) as info:
        _kagi().search(SearchRequest(query="q"), None)
    assert info.value.status == status and info.value.code == "101"
    assert info.value.kind == "quota"  # a value search failover decides on


def test_html_error_page(mock):
    """An HTML 502 page becomes a short, tag-free message after the retries."""
    page = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
    for _ in range(3):
        mock.get(f"{V0}/search", status=502, body=page, content_type="text/html")
    with pytest.raises(ProviderError, match="HTTP 502 Bad Gateway: 502 Bad Gateway$"):
        _kagi().search(SearchRequest(query="q"), None)


def test_truncated_json(mock):
    """A cut-off JSON body is a clean 'not valid JSON' error."""
    mock.get(f"{V0}/search", body=json.dumps(SEARCH_OK)[:80], content_type="application/json")
    with pytest.raises(ProviderError, match="not valid JSON"):
        _kagi().search(SearchRequest(query="q"), None)


@pytest.mark.parametrize("data", [None, "results", {"a": 1}])
def test_wrong_shape_names_the_field(mock, data):
    """data that is not a list is an error naming 'data', never an AttributeError."""
    mock.get(f"{V0}/search", json={"meta": {}, "data": data})
    with pytest.raises(ProviderError, match="'data'"):
        _kagi().search(SearchRequest(query="q"), None)


def test_error_envelope_with_200(mock):
    """A 200 that carries error[] and no data is an error with Kagi's message."""
    mock.get(f"{V0}/search", json=_error_body(0, "Internal error"))
    with pytest.raises(ProviderError, match="Internal error"):
        _kagi().search(SearchRequest(query="q"), None)


def test_junk_items_are_skipped(mock):
    """Items without a URL or of unknown kinds are skipped, not crashed on."""
    mock.get(
        f"{V0}/search",
        json={
            "data": [
                None,
                3,
                {"t": 0},
                {"t": 5, "url": "x"},
                {"t": 0, "url": "https://a.b/", "title": None},
            ]
        },
    )
    hits = _kagi().search(SearchRequest(query="q"), None).hits
    assert [(h.title, h.url) for h in hits] == [("https://a.b/", "https://a.b/")]


def test_v1_search_posts_json(mock):
    """apiVersion v1 POSTs JSON to /api/v1/search with Bearer auth and reads data.search."""
    mock.post(
        "https://kagi.com/api/v1/search",
        json={
            "meta": {"trace": "t"},
            "data": {
                "search": [
                    {
                        "url": "https://x.y/",
                        "title": "X",
                        "snippet": "<b>s</b>",
                        "time": "2026-01-02",
                    }
                ],
                "related_search": ["more x"],
            },
        },
        match=[
            matchers.json_params_matcher(
                {"query": "x", "workflow": "search", "format": "json", "limit": 10}
            ),
            matchers.header_matcher({"Authorization": f"Bearer {SECRET}"}),
        ],
    )
    response = _kagi(api_version="v1").search(SearchRequest(query="x"), None)
    assert response.hits[0].snippet == "s" and response.hits[0].published == "2026-01-02"
    assert response.related == ("more x",)


def test_v1_error_envelope(mock):
    """v1 errors use errors[].message; they are shown too."""
    mock.post(
        "https://kagi.com/api/v1/search",
        status=402,
        json={"errors": [{"code": "billing.insufficient_credit", "message": "No credit"}]},
    )
    with pytest.raises(
        ProviderError,
        match="HTTP 402 Payment Required: No credit \\(code billing.insufficient_credit\\)",
    ):
        _kagi(api_version="v1").search(SearchRequest(query="q"), None)


def test_summarize_posts_json_and_returns_output_verbatim(mock):
    """POST /summarize with url, summary_type, engine; output and tokens come back."""
    output = 'Brothertiger\'s song "Mainsail" is a reflective and hopeful track ...\n\n- point'
    mock.post(
        f"{V0}/summarize",
        json={
            "meta": {"id": "55fc", "node": "us-east", "ms": 10868},
            "data": {"output": output, "tokens": 543},
        },
        match=[
            matchers.json_params_matcher(
                {
                    "url": "https://a.b/c",
                    "summary_type": "takeaway",
                    "engine": "agnes",
                    "target_language": "DE",
                }
            ),
            matchers.header_matcher({"Authorization": f"Bot {SECRET}"}),
        ],
    )
    response = _kagi().summarize(
        SummarizeRequest(
            url="https://a.b/c", summary_type="takeaway", engine="agnes", target_language="DE"
        ),
        None,
    )
    assert response.output == output and response.tokens == 543


def test_summarize_cached_hit_zero_tokens(mock):
    """A cached summary reports 0 tokens."""
    mock.post(
        f"{V0}/summarize", json={"meta": {"api_balance": 4.0}, "data": {"output": "x", "tokens": 0}}
    )
    response = _kagi().summarize(SummarizeRequest(url="https://a.b/"), None)
    assert response.tokens == 0 and response.balance == 4.0


def test_summarize_failed_code_200_http_500(mock):
    """Summarize failed (code 200 at HTTP 500) shows Kagi's message."""
    mock.post(f"{V0}/summarize", status=500, json=_error_body(200, "Summarize failed", 9.87))
    with pytest.raises(
        ProviderError, match="HTTP 500 Internal Server Error: Summarize failed \\(code 200\\)"
    ):
        _kagi().summarize(SummarizeRequest(url="https://paywalled.example/"), None)


@pytest.mark.parametrize("data", [None, {"tokens": 3}, {"output": 5}])
def test_summarize_wrong_shape(mock, data):
    """A summary body without a string output is an error naming the field."""
    mock.post(f"{V0}/summarize", json={"meta": {}, "data": data})
    with pytest.raises(ProviderError, match="'data"):
        _kagi().summarize(SummarizeRequest(url="https://a.b/"), None)


def test_v1_provider_summarizes_on_v0(mock):
    """The summarizer is v0-only, even for a v1-configured provider."""
    mock.post(f"{V0}/summarize", json={"data": {"output": "ok", "tokens": 1}})
    assert (
        _kagi(api_version="v1").summarize(SummarizeRequest(url="https://a.b/"), None).output == "ok"
    )


def test_clean_snippet():
    """clean_snippet strips tags, unescapes entities and folds whitespace."""
    assert clean_snippet("<b>a</b>&nbsp;&amp;\n b") == "a & b"
    assert clean_snippet(None) == ""


def test_repr_hides_key():
    """The provider's repr never shows the key."""
    assert SECRET not in repr(_kagi())


def test_base_url_maps_each_version_onto_the_api_root():
    """A baseUrl is the API root; a trailing /v0 or /v1 is replaced per request."""
    from pi_web_tools.providers.kagi import api_root

    assert api_root(None) == "https://kagi.com/api"
    assert api_root("http://gw.example/kagi/api/v1/") == "http://gw.example/kagi/api"
    assert api_root("http://gw.example/kagi") == "http://gw.example/kagi"
    provider = _kagi(base_url="http://127.0.0.1:9/api/v0")
    assert provider.v1.base_url == "http://127.0.0.1:9/api/v1"
    assert provider.v0.base_url == "http://127.0.0.1:9/api/v0"


def test_v0_search_with_date_filters_says_they_were_not_applied(mock):
    """v0 cannot filter by date: the results come with a notice for the model."""
    mock.get(f"{V0}/search", json=SEARCH_OK)
    response = _kagi().search(SearchRequest(query="q", start_published_date="2025-01-01"), None)
    assert response.hits and "cannot filter by publication date" in response.notices[0]


def test_v1_error_in_a_200_envelope_is_an_error(mock):
    """A 200 whose data is empty and whose error list is set is an error with the trace."""
    mock.post(
        "https://kagi.com/api/v1/search",
        json={"meta": {"trace": "abc"}, "data": [], "error": [{"code": "x.y", "message": "No"}]},
    )
    with pytest.raises(ProviderError, match="No \\(code x.y\\); trace abc"):
        _kagi(api_version="v1").search(SearchRequest(query="q"), None)
