"""The requirement scenarios of web_search and summarize against Kagi (seeds 000, 001, 003),
one test per scenario named by the behaviour it checks, through the host as a model's call runs."""

from __future__ import annotations

import os
import re

import pytest
import responses
from pi_hostspec import PlainTheme, RenderOptions
from responses import matchers

from tests.support import SECRET
from tests.support.kagi_mock import kagi_search

V0 = "https://kagi.com/api/v0"


def _hit(i: int, query: str = "q") -> dict:
    return {
        "t": 0,
        "url": f"https://example.com/{query.replace(' ', '-')}/{i}",
        "title": f"{query} result {i}",
        "snippet": f"Snippet <b>{i}</b> about {query}",
    }


def _search_body(query: str, count: int = 3) -> dict:
    return {
        "meta": {"id": "m", "node": "us", "ms": 5, "api_balance": 10.0},
        "data": [_hit(i, query) for i in range(1, count + 1)],
    }


@pytest.fixture
def kagi_env(monkeypatch):
    """KAGI_API_KEY set, no config file: the seeds' setup."""
    monkeypatch.setenv("KAGI_API_KEY", SECRET)


@pytest.fixture
def mock():
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


# ---- seed 000: web_search ---------------------------------------------------------------


def test_search_single_query_search(host, kagi_env, mock):
    """queries: ["rust async patterns"] returns a numbered list with title, URL and snippet."""
    kagi_search(
        mock,
        json=_search_body("rust async patterns"),
        match=[
            matchers.json_params_matcher(
                {"query": "rust async patterns", "limit": 10}, strict_match=False
            )
        ],
    )
    result = host.call("web_search", {"queries": ["rust async patterns"]})
    assert not result.is_error
    assert result.text.startswith(
        "1. rust async patterns result 1\n   https://example.com/rust-async-patterns/1\n   Snippet 1 about rust async patterns"
    )
    assert "3. rust async patterns result 3" in result.text


def test_search_multiple_query_search(host, kagi_env, mock):
    """Two queries give one numbered list, the first query's results first."""
    first, second = "pi coding agent extensions", "kagi search API"
    kagi_search(
        mock,
        json=_search_body(first, 2),
        match=[matchers.json_params_matcher({"query": first, "limit": 10}, strict_match=False)],
    )
    kagi_search(
        mock,
        json=_search_body(second, 2),
        match=[matchers.json_params_matcher({"query": second, "limit": 10}, strict_match=False)],
    )
    text = host.call("web_search", {"queries": [first, second]}).text
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", text, re.M)]
    assert numbers == [1, 2, 3, 4]
    assert text.index(f"1. {first} result 1") < text.index(f"3. {second} result 1")
    assert text.index(f"2. {first} result 2") < text.index(f"4. {second} result 2")


def test_search_result_format(host, kagi_env, mock):
    """Each result is exactly `N. Title\\n   URL\\n   Snippet`."""
    kagi_search(
        mock,
        json={
            "data": [
                {"t": 0, "url": "https://a.example/", "title": "A Title", "snippet": "The snippet."}
            ]
        },
    )
    assert (
        host.call("web_search", {"queries": ["a"]}).text
        == "1. A Title\n   https://a.example/\n   The snippet."
    )


def test_search_output_within_limits(host, kagi_env, mock):
    """Results within 50KB and 2000 lines come back whole, with no notice and no temp file."""
    kagi_search(mock, json=_search_body("q", 20))
    result = host.call("web_search", {"queries": ["q"], "limit": 20})
    assert "Output truncated" not in result.text and "20. q result 20" in result.text
    assert "truncation" not in result.details and "fullOutputPath" not in result.details


def test_search_output_exceeds_limits(host, kagi_env, mock):
    """Over 50KB: truncated (snippets shortened, every title and URL kept), full output in a temp
    file, notice with omitted lines/bytes and path."""
    big = [
        {"t": 0, "url": f"https://e.com/{i}", "title": f"T{i}", "snippet": "x" * 2000}
        for i in range(50)
    ]
    kagi_search(mock, json={"data": big})
    result = host.call("web_search", {"queries": ["q"], "limit": 50})
    notice = re.search(
        r"\[Output truncated: showing (\d+) of (\d+) lines \((\S+) of (\S+)\)\. (\d+) lines \((\S+)\) omitted\. Full output saved to: (.+)\]\n\[Snippets were shortened",
        result.text,
    )
    assert notice, result.text[-300:]
    path = notice.group(7)
    assert path == result.details["fullOutputPath"]
    with open(path, encoding="utf-8") as handle:
        full = handle.read()
    assert "50. T49" in full and "50. T49\n   https://e.com/49\n   xxx" in result.text
    assert "x" * 2000 in full and "x" * 2000 not in result.text
    assert len(result.text.encode()) <= 50 * 1024 + 400
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert result.details["truncation"]["truncatedBy"] == "bytes"


def test_search_no_api_key_set(host):
    """Without KAGI_API_KEY the error is the seed's sentence, checked at invocation."""
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error
    assert result.text.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use web search."
    )


def test_search_api_returns_http_error(host, kagi_env, mock):
    """A non-2xx status gives the status code and Kagi's message, never the key."""
    kagi_search(
        mock,
        status=403,
        json={
            "meta": {},
            "data": None,
            "error": [{"code": 2, "msg": f"Forbidden for {SECRET}", "ref": None}],
        },
    )
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error and "403" in result.text and "Forbidden" in result.text
    assert SECRET not in result.text and SECRET not in repr(result.details)


def test_search_network_failure(host, monkeypatch, write_config):
    """A network failure gives an error describing it (connection refused on a closed port)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    write_config(
        {
            "providers": [
                {
                    "name": "kagi",
                    "type": "kagi",
                    "apiKey": SECRET,
                    "options": {"baseUrl": f"http://127.0.0.1:{port}/api/v0", "timeoutSeconds": 5},
                }
            ]
        }
    )
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error
    assert "request failed: connection refused" in result.text


def test_search_render_call(host):
    """The call shows the tool name and the queries, compactly."""
    line = host.render_call(
        "web_search", {"queries": ["rust async patterns", "tokio"]}, PlainTheme()
    )
    assert line == 'web_search "rust async patterns", "tokio"'
    long = host.render_call("web_search", {"queries": ["x" * 300]}, PlainTheme())
    assert len(long) <= len("web_search ") + 100 and long.endswith("…")


def test_search_render_result(host, kagi_env, mock):
    """Collapsed shows the number of results; expanded shows the individual results."""
    kagi_search(mock, json=_search_body("q", 3))
    result = host.call("web_search", {"queries": ["q"]})
    assert host.render_result("web_search", result, RenderOptions(), PlainTheme()) == "3 results"
    expanded = host.render_result("web_search", result, RenderOptions(expanded=True), PlainTheme())
    assert expanded.startswith("3 results\n1. q result 1") and "3. q result 3" in expanded


# ---- seed 001: summarize ------------------------------------------------------------------


def _summary(output: str = "Prose summary.", tokens: int = 120) -> dict:
    return {
        "meta": {"id": "s", "node": "us-east", "ms": 900},
        "data": {"output": output, "tokens": tokens},
    }


def test_summarize_a_web_page_with_default_settings(host, kagi_env, mock):
    """POST with url and summary_type "summary"; the prose summary is returned."""
    mock.post(
        f"{V0}/summarize",
        json=_summary("A long article, in prose."),
        match=[
            matchers.json_params_matcher(
                {
                    "url": "https://example.com/long-article",
                    "summary_type": "summary",
                    "engine": "cecil",
                }
            ),
            matchers.header_matcher({"Authorization": f"Bot {SECRET}"}),
        ],
    )
    result = host.call("summarize", {"url": "https://example.com/long-article"})
    assert not result.is_error and result.text == "A long article, in prose."


def test_summarize_a_url_as_takeaway_bullet_points(host, kagi_env, mock):
    """summary_type takeaway is sent and the bulleted list returned."""
    bullets = "- Faster builds\n- New API\n- Bug fixes"
    mock.post(
        f"{V0}/summarize",
        json=_summary(bullets),
        match=[
            matchers.json_params_matcher(
                {
                    "url": "https://example.com/release-notes",
                    "summary_type": "takeaway",
                    "engine": "cecil",
                }
            )
        ],
    )
    result = host.call(
        "summarize", {"url": "https://example.com/release-notes", "summary_type": "takeaway"}
    )
    assert result.text == bullets


def test_summarize_with_a_target_language(host, kagi_env, mock):
    """target_language DE is sent (lower case accepted, sent upper case)."""
    mock.post(
        f"{V0}/summarize",
        json=_summary("Eine Zusammenfassung."),
        match=[
            matchers.json_params_matcher(
                {
                    "url": "https://example.com/article",
                    "summary_type": "summary",
                    "engine": "cecil",
                    "target_language": "DE",
                }
            )
        ],
    )
    assert (
        host.call("summarize", {"url": "https://example.com/article", "target_language": "de"}).text
        == "Eine Zusammenfassung."
    )


def test_summarize_with_default_engine(host, kagi_env, mock):
    """No engine parameter sends engine cecil."""
    mock.post(
        f"{V0}/summarize",
        json=_summary(),
        match=[
            matchers.json_params_matcher(
                {"url": "https://example.com/article", "summary_type": "summary", "engine": "cecil"}
            )
        ],
    )
    result = host.call("summarize", {"url": "https://example.com/article"})
    assert result.details["engine"] == "cecil"


def test_summarize_with_agnes_engine(host, kagi_env, mock):
    """engine agnes is sent."""
    mock.post(
        f"{V0}/summarize",
        json=_summary("Formal summary."),
        match=[
            matchers.json_params_matcher(
                {
                    "url": "https://example.com/technical-paper",
                    "summary_type": "summary",
                    "engine": "agnes",
                }
            )
        ],
    )
    assert (
        host.call(
            "summarize", {"url": "https://example.com/technical-paper", "engine": "agnes"}
        ).text
        == "Formal summary."
    )


def test_summarize_successful_summary_response(host, kagi_env, mock):
    """The output is the content; url, summaryType and tokens go to details, not the text."""
    mock.post(f"{V0}/summarize", json=_summary("Just the summary.", 543))
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert result.text == "Just the summary."
    assert result.details == {
        "url": "https://example.com/a",
        "summaryType": "summary",
        "engine": "cecil",
        "tokens": 543,
    }
    assert "543" not in result.text


def test_summarize_output_within_limits(host, kagi_env, mock):
    """A normal summary is returned whole."""
    mock.post(f"{V0}/summarize", json=_summary("line\n" * 100))
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert result.text == "line\n" * 100 and "truncation" not in result.details


def test_summarize_output_exceeds_limits(host, kagi_env, mock):
    """Over 2000 lines: truncated by lines, full output in a temp file, notice with the path."""
    mock.post(f"{V0}/summarize", json=_summary("\n".join(f"- point {i}" for i in range(3000))))
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert "[Output truncated: showing 2000 of 3000 lines" in result.text
    assert (
        "1000 lines" in result.text
        and f"Full output saved to: {result.details['fullOutputPath']}]" in result.text
    )
    assert result.details["truncation"]["truncatedBy"] == "lines"
    with open(result.details["fullOutputPath"], encoding="utf-8") as handle:
        assert handle.read().endswith("- point 2999")


def test_summarize_no_api_key_set(host):
    """Without KAGI_API_KEY the error is the seed's summarize sentence."""
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert result.is_error
    assert result.text.startswith(
        "KAGI_API_KEY environment variable is not set. Set it to your Kagi API key to use summarize."
    )


def test_summarize_api_returns_http_error(host, kagi_env, mock):
    """A non-2xx status gives the code and Kagi's message."""
    mock.post(
        f"{V0}/summarize",
        status=400,
        json={
            "meta": {},
            "data": None,
            "error": [
                {"code": 101, "msg": "Insufficient credit to perform this request.", "ref": None}
            ],
        },
    )
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert (
        result.is_error
        and "HTTP 400" in result.text
        and "Insufficient credit to perform this request." in result.text
    )


def test_summarize_network_failure(host, kagi_env, mock):
    """A connection failure is described in one line."""
    import requests

    for _ in range(3):
        mock.post(f"{V0}/summarize", body=requests.exceptions.ConnectionError("Connection refused"))
    result = host.call("summarize", {"url": "https://example.com/a"})
    assert result.is_error and "connection refused" in result.text and "\n" not in result.text


def test_summarize_url_is_inaccessible(host, kagi_env, mock):
    """Kagi's own access-failure response is surfaced."""
    mock.post(
        f"{V0}/summarize",
        status=500,
        json={
            "meta": {},
            "data": None,
            "error": [
                {"code": 200, "msg": "Summarize failed: the page is behind a paywall", "ref": None}
            ],
        },
    )
    result = host.call("summarize", {"url": "https://paywalled.example/article"})
    assert result.is_error and "Summarize failed: the page is behind a paywall" in result.text


def test_summarize_render_call(host):
    """The call shows the name, the URL and the summary type when not the default (seed 003 form)."""
    theme = PlainTheme()
    assert (
        host.render_call("summarize", {"url": "https://example.com/a"}, theme)
        == 'summarize "https://example.com/a"'
    )
    assert (
        host.render_call(
            "summarize", {"url": "https://example.com/a", "summary_type": "takeaway"}, theme
        )
        == 'summarize "https://example.com/a" (takeaway)'
    )


def test_summarize_render_call_with_non_default_engine(host):
    """A non-default engine is shown alongside the URL and type."""
    theme = PlainTheme()
    assert (
        host.render_call("summarize", {"url": "https://e.com/p", "engine": "agnes"}, theme)
        == 'summarize "https://e.com/p" (agnes)'
    )
    assert (
        host.render_call(
            "summarize",
            {"url": "https://e.com/p", "summary_type": "takeaway", "engine": "agnes"},
            theme,
        )
        == 'summarize "https://e.com/p" (takeaway, agnes)'
    )


def test_summarize_render_result(host, kagi_env, mock):
    """Collapsed: summary type and token count; expanded: the full summary."""
    mock.post(f"{V0}/summarize", json=_summary("- a\n- b", 1234))
    result = host.call("summarize", {"url": "https://e.com/", "summary_type": "takeaway"})
    assert (
        host.render_result("summarize", result, RenderOptions(), PlainTheme())
        == "Takeaway · 1,234 tokens"
    )
    assert (
        host.render_result("summarize", result, RenderOptions(expanded=True), PlainTheme())
        == "Takeaway · 1,234 tokens\n- a\n- b"
    )


# ---- seed 003: summarize design ---------------------------------------------------------------


def test_summarize_tool_is_named_summarize_with_seed_parameters(host):
    """The tool is `summarize` with url required, summary_type and engine enums, target_language."""
    tool = host.get_tool("summarize")
    props = tool.parameters["properties"]
    assert tool.parameters["required"] == ["url"]
    assert props["summary_type"]["enum"] == ["summary", "takeaway"]
    assert props["engine"]["enum"] == ["cecil", "agnes"]
    assert props["target_language"]["type"] == "string"


def test_summarize_same_kagi_key_no_additional_configuration(host, kagi_env, mock):
    """summarize uses the same KAGI_API_KEY and Bot header as web_search."""
    mock.post(
        f"{V0}/summarize",
        json=_summary(),
        match=[matchers.header_matcher({"Authorization": f"Bot {SECRET}"})],
    )
    assert not host.call("summarize", {"url": "https://e.com/"}).is_error
