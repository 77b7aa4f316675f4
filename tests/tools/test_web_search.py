"""The web_search tool beyond the seed scenarios."""

from __future__ import annotations

import pytest
import responses
from pi_hostspec import ToolContext
from pi_web_tools.api.retry import RetryPolicy
from responses import matchers

from tests.support import SECRET
from tests.support.kagi_mock import kagi_search

V0 = "https://kagi.com/api/v0"


@pytest.fixture
def mock(monkeypatch):
    monkeypatch.setenv("KAGI_API_KEY", SECRET)
    monkeypatch.setattr(
        "pi_web_tools.api.retry.DEFAULT_RETRY",
        RetryPolicy(backoff_factor=0.001, backoff_jitter=0.001 / 2),
    )
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def _body(*titles, related=None, balance=None):
    data = [
        {"t": 0, "url": f"https://e.com/{t}", "title": t, "snippet": f"about {t}"} for t in titles
    ]
    if related:
        data.append({"t": 1, "list": related})
    meta = {"api_balance": balance} if balance is not None else {}
    return {"meta": meta, "data": data}


def test_lone_query_is_folded_into_queries(host, mock):
    """A lone `query` string is accepted."""
    kagi_search(
        mock,
        json=_body("a"),
        match=[matchers.json_params_matcher({"query": "solo", "limit": 10}, strict_match=False)],
    )
    result = host.call("web_search", {"query": "solo"})
    assert not result.is_error and result.details["queries"] == ["solo"]


def test_one_failed_query_does_not_sink_the_others(host, mock):
    """A failing query reports its error in place; the call succeeds."""
    kagi_search(
        mock,
        json=_body("a1", "a2"),
        match=[matchers.json_params_matcher({"query": "good", "limit": 10}, strict_match=False)],
    )
    kagi_search(
        mock,
        status=400,
        json={"data": None, "error": [{"code": 1, "msg": "Bad query", "ref": None}]},
        match=[matchers.json_params_matcher({"query": "bad", "limit": 10}, strict_match=False)],
    )
    result = host.call("web_search", {"queries": ["good", "bad"]})
    assert not result.is_error
    assert 'Query: "bad"\nError: Kagi: HTTP 400 Bad Request: Bad query (code 1)' in result.text
    assert result.details["perQuery"] == [
        {"query": "good", "count": 2},
        {"query": "bad", "count": 0, "error": "Kagi: HTTP 400 Bad Request: Bad query (code 1)"},
    ]


def test_every_query_failing_is_an_error(host, mock):
    """When every query fails the call is an error listing each one."""
    for query in ("a", "b"):
        kagi_search(
            mock,
            status=401,
            json={"data": None, "error": [{"code": 2, "msg": "Unauthorized", "ref": None}]},
            match=[matchers.json_params_matcher({"query": query, "limit": 10}, strict_match=False)],
        )
    for _ in ("a", "b"):  # auto: a v1 401 is tried once on v0
        mock.get(
            "https://kagi.com/api/v0/search",
            status=401,
            json={"data": None, "error": [{"code": 2, "msg": "Unauthorized", "ref": None}]},
        )
    result = host.call("web_search", {"queries": ["a", "b"]})
    assert result.is_error
    assert result.text.startswith(
        'web_search failed for every query:\n- "a": Kagi: both search APIs failed: v1 answered '
        "HTTP 401"
    )
    assert len(result.details["perQuery"]) == 2


def test_no_results_is_a_plain_sentence(host, mock):
    """No results at all is not an error."""
    kagi_search(mock, json={"meta": {}, "data": []})
    result = host.call("web_search", {"queries": ["zzqx"]})
    assert not result.is_error and result.text == 'No results found for "zzqx".'


def test_related_searches_follow_the_list(host, mock):
    """Kagi's related searches come after the list, one line per query."""
    kagi_search(mock, json=_body("a", related=["x y", "z"]))
    text = host.call("web_search", {"queries": ["q"]}).text
    assert text.endswith('Related searches for "q": x y; z')


def test_published_date_is_an_extra_line(host, mock):
    """A published date adds an indented line after the snippet."""
    kagi_search(
        mock,
        json={
            "data": [
                {
                    "t": 0,
                    "url": "https://e.com/",
                    "title": "T",
                    "snippet": "S",
                    "published": "2023-01-18T03:05:23+00:00",
                }
            ]
        },
    )
    assert (
        host.call("web_search", {"queries": ["q"]}).text
        == "1. T\n   https://e.com/\n   S\n   Published: 2023-01-18"
    )


def test_details_hold_balance_provider_and_counts(host, mock, write_config):
    """details carry the queries, counts, provider and balance (which only v0 tells)."""
    write_config(
        {
            "providers": [
                {"name": "kagi", "type": "kagi", "apiKey": SECRET, "options": {"apiVersion": "v0"}}
            ]
        }
    )
    mock.get("https://kagi.com/api/v0/search", json=_body("a", balance=12.5))
    details = host.call("web_search", {"queries": ["q"]}).details
    assert details["provider"] == "kagi" and details["providerType"] == "kagi"
    assert details["apiBalance"] == 12.5 and details["totalResults"] == 1


def test_default_limit_from_options(host, mock, write_config):
    """options.defaultSearchLimit is the default limit; the argument overrides it."""
    write_config(
        {
            "providers": [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": SECRET,
                    "options": {"defaultSearchLimit": 4},
                }
            ]
        }
    )
    kagi_search(
        mock,
        json=_body("a"),
        match=[matchers.json_params_matcher({"query": "q", "limit": 4}, strict_match=False)],
    )
    kagi_search(
        mock,
        json=_body("a"),
        match=[matchers.json_params_matcher({"query": "q", "limit": 2}, strict_match=False)],
    )
    host.call("web_search", {"queries": ["q"]})
    host.call("web_search", {"queries": ["q"], "limit": 2})


def test_kagi_refuses_filters_it_cannot_honour(host, mock):
    """Kagi cannot filter by category: a clear error, no request sent."""
    result = host.call(
        "web_search", {"queries": ["q"], "category": "news", "start_published_date": "2025-01-01"}
    )
    assert result.is_error
    assert "cannot filter by category" in result.text


@pytest.mark.parametrize(
    "args, field",
    [
        ({"queries": []}, "queries: needs at least 1"),
        ({"queries": [""]}, "queries[0]: must not be empty"),
        ({"queries": ["   "]}, "queries[0]: does not match"),
        ({"queries": ["q"] * 11}, "queries: allows at most 10"),
        ({"queries": ["q"], "limit": 0}, "limit: must be at least 1"),
        ({"queries": ["q"], "limit": 51}, "limit: must be at most 50"),
        ({"queries": "q"}, "queries: expected array"),
        ({}, "queries: required field is missing"),
        ({"queries": ["q"], "colour": 1}, "unknown field(s) 'colour'"),
    ],
)
def test_bad_arguments_are_rejected_before_any_request(host, mock, args, field):
    """Schema problems name the field; no request is made (strict mock)."""
    result = host.call("web_search", args)
    assert result.is_error and field in result.text


def test_partial_updates_are_sent(host, mock):
    """The tool reports progress through on_update while queries run."""
    kagi_search(mock, json=_body("a"))
    kagi_search(mock, json=_body("b"))
    updates = []
    host.call("web_search", {"queries": ["q1", "q2"]}, ToolContext(on_update=updates.append))
    assert updates and all(u.details.get("partial") for u in updates)
    assert updates[0].text == "Searching..."


def test_web_text_is_cleaned_of_control_characters(host, mock):
    """ANSI escapes and control characters from results never reach the model."""
    kagi_search(
        mock,
        json={
            "data": [
                {
                    "t": 0,
                    "url": "https://e.com/\x1b[2J",
                    "title": "T\x1b]0;pwned\x07itle",
                    "snippet": "a\x1b[31mred\x1b[0m\x08b",
                }
            ]
        },
    )
    text = host.call("web_search", {"queries": ["q"]}).text
    assert "\x1b" not in text and "\x07" not in text and "\x08" not in text
    assert text == "1. Title\n   https://e.com/\n   aredb"


def test_description_mentions_sources_limits_and_untrusted(host):
    """The description is seed 000's, plus truncation limits and the untrusted-content note."""
    description = host.get_tool("web_search").description
    assert description.startswith(
        "Search the web for real-time information using one or more queries."
    )
    assert 'include a "Sources" section' in description
    assert "2000 lines or 50KB" in description and "untrusted web content" in description


def test_timeout_bounds_the_whole_call_with_ten_queries(host, write_config):
    """Ten queries against a server that never answers end within one timeout, not several."""
    import socket
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # accepts connections, never answers
    try:
        port = listener.getsockname()[1]
        write_config(
            {
                "providers": [
                    {
                        "name": "kagi",
                        "type": "kagi",
                        "apiKey": SECRET,
                        "options": {
                            "baseUrl": f"http://127.0.0.1:{port}/api/v0",
                            "timeoutSeconds": 1,
                        },
                    }
                ]
            }
        )
        start = time.monotonic()
        result = host.call("web_search", {"queries": [f"q{i}" for i in range(10)]})
        elapsed = time.monotonic() - start
    finally:
        listener.close()
    assert result.is_error and "timed out after 1 s" in result.text
    assert elapsed < 2.0


@pytest.mark.parametrize("fused", [False, True], ids=["failover", "fusion"])
def test_a_searxng_403_names_the_whole_settings_change_when_another_provider_answers(
    host, mock, write_config, fused
):
    """When SearXNG's JSON format is off and Kagi answers instead (failover, or a fused call),
    the line that says why still holds the exact settings.yml change, not a clipped one."""
    from pi_web_tools.providers.searxng import JSON_FORMAT_FIX

    write_config(
        {
            "providers": [
                {
                    "name": "searx",
                    "type": "searxng",
                    "options": {"baseUrl": "http://127.0.0.1:9", "allowPrivateNetwork": True},
                },
                {"name": "kagi", "type": "kagi", "apiKey": SECRET},
            ]
        }
    )
    mock.get("http://127.0.0.1:9/search", status=403, body="<h1>Forbidden</h1>")
    kagi_search(mock, json=_body("a"))
    args = {"queries": ["q"], **({"provider": "all"} if fused else {})}
    result = host.call("web_search", args)
    assert not result.is_error, result.text
    [note] = [line for line in result.text.splitlines() if line.startswith("Note:")]
    assert note.startswith(
        "Note: answered by kagi because searx failed" if not fused else "Note: searx failed"
    )
    assert JSON_FORMAT_FIX in note, note


def test_a_fused_call_does_not_wait_out_a_providers_rate_limit(host, mock, write_config):
    """In a fused call the other providers are answering: a 429 (here with Retry-After: 20) is
    not retried, the provider is named as failed at once and the rest are kept."""
    import time

    write_config(
        {
            "providers": [
                {"name": "kagi", "type": "kagi", "apiKey": SECRET},
                {"name": "brave", "type": "brave", "apiKey": SECRET},
            ]
        }
    )
    limited = kagi_search(
        mock,
        json={"meta": {}, "error": [{"code": "general.rate_limited", "msg": "slow down"}]},
        status=429,
        headers={"Retry-After": "20"},
    )
    mock.get(
        "https://api.search.brave.com/res/v1/web/search",
        json={
            "web": {"results": [{"title": "B", "url": "https://b.example/", "description": "b"}]}
        },
    )
    started = time.monotonic()
    result = host.call("web_search", {"queries": ["q"], "provider": "all"})
    assert time.monotonic() - started < 5
    assert not result.is_error, result.text
    assert "https://b.example/" in result.text
    assert "Note: kagi failed: Kagi: HTTP 429" in result.text
    assert limited.call_count == 1
