"""The web_fetch tool: URL checks, modes, sections, partial failures, the keyless default."""

from __future__ import annotations

import json

import pytest
import responses
from responses import matchers

from tests.support import LOOPBACK_DIRECT, SECRET

EXA = "https://api.exa.ai"


@pytest.fixture
def exa(write_config):
    write_config({"providers": [{"name": "exa", "type": "exa", "apiKey": SECRET}]})
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def pages(httpserver, write_config):
    """Loopback pages served to the direct fetcher (allowPrivateNetwork on)."""
    write_config(LOOPBACK_DIRECT)
    article = (
        "<html><head><title>Async Rust</title></head><body><article><h1>Async Rust</h1>"
        + (
            "<p>Futures are lazy and do nothing unless polled by an executor such as tokio.</p>"
            * 12
        )
        + "</article><footer>nav junk</footer></body></html>"
    )
    httpserver.expect_request("/article").respond_with_data(
        article, content_type="text/html; charset=utf-8"
    )
    httpserver.expect_request("/plain").respond_with_data(
        "just text\nline two", content_type="text/plain"
    )
    httpserver.expect_request("/missing").respond_with_data(
        "nope", status=404, content_type="text/plain"
    )
    return httpserver


def test_lone_url_is_folded_into_urls(host, pages):
    """A lone `url` string is accepted."""
    result = host.call("web_fetch", {"url": pages.url_for("/plain")})
    assert not result.is_error and "just text\nline two" in result.text


def test_bad_urls_rejected_before_any_request_naming_each(host, exa):
    """Malformed URLs and other schemes are named; nothing is fetched (strict mock)."""
    result = host.call(
        "web_fetch", {"urls": ["https://ok.example/", "ftp://files.example/x", "not a url"]}
    )
    assert result.is_error
    assert "urls[1]: 'ftp://files.example/x' uses ftp:" in result.text
    assert "urls[2]: 'not a url' is not an absolute URL" in result.text


def test_empty_url_list_rejected(host, exa):
    """An empty list is rejected by the schema."""
    result = host.call("web_fetch", {"urls": []})
    assert result.is_error and "urls: needs at least 1 item" in result.text


def test_no_mode_means_text_and_sections_in_order(host, pages):
    """Text by default; one section per URL in request order; a failure does not sink the rest."""
    urls = [pages.url_for("/article"), pages.url_for("/missing"), pages.url_for("/plain")]
    result = host.call("web_fetch", {"urls": urls})
    assert not result.is_error
    sections = result.text.split("\n\n---\n\n")
    assert [s.splitlines()[0] for s in sections] == [
        "## [1/3] Async Rust",
        f"## [2/3] {urls[1]} (failed)",
        f"## [3/3] {urls[2]}",
    ]
    assert "Futures are lazy" in sections[0] and "Error: HTTP 404 Not Found" in sections[1]
    assert result.details["fetched"] == 2 and result.details["failed"] == 1
    assert [u["status"] for u in result.details["urls"]] == ["ok", "error", "ok"]


def test_every_url_failing_is_an_error(host, pages):
    """When every URL fails the call is an error with one line per URL."""
    result = host.call(
        "web_fetch", {"urls": [pages.url_for("/missing"), pages.url_for("/missing") + "?2"]}
    )
    assert result.is_error
    assert result.text.startswith("web_fetch failed for every URL:\n- ")
    assert result.text.count("HTTP 404 Not Found") == 2


def test_direct_fetcher_cannot_do_highlights(host, pages):
    """Asking the direct fetcher for highlights is a clear error naming what to configure."""
    result = host.call("web_fetch", {"urls": [pages.url_for("/plain")], "highlights": True})
    assert result.is_error and "cannot return highlights" in result.text and "exa" in result.text


def test_all_modes_false_is_an_error(host, pages):
    """Turning every mode off is refused with a hint."""
    result = host.call("web_fetch", {"urls": [pages.url_for("/plain")], "text": False})
    assert result.is_error and "Nothing to fetch" in result.text


def test_text_max_characters_cuts_each_page(host, pages):
    """text_max_characters sets the window shown; the continuation line gives the next call."""
    result = host.call(
        "web_fetch", {"urls": [pages.url_for("/article")], "text_max_characters": 50}
    )
    url = pages.url_for("/article")
    tail = result.text.rstrip().rsplit("Next: web_fetch ", 1)[1]
    call = json.loads(tail[:-1])
    assert call["urls"] == [url] and call["text_max_characters"] == 50
    end = call["offset"]  # the window ends after a word, at most 50 characters in
    assert 30 < end <= 50
    assert f"[Showing characters 0–{end} of " in result.text
    shown = result.text.split("\n\n", 1)[1].rsplit("\n\n[Showing", 1)[0]
    assert shown[-1] in " \n" and len(shown) == end


def test_exa_fetch_modes_and_partial_failure(host, exa):
    """Exa gets text, highlights and summary; a failed URL becomes its own failure section."""
    exa.post(
        f"{EXA}/contents",
        match=[
            matchers.json_params_matcher(
                {
                    "urls": ["https://arxiv.org/abs/2307.06435", "https://example.com/missing"],
                    "text": {"maxCharacters": 100000},
                    "highlights": True,
                    "summary": True,
                }
            ),
            matchers.header_matcher({"x-api-key": SECRET}),
        ],
        json={
            "requestId": "e49",
            "results": [
                {
                    "id": "https://arxiv.org/abs/2307.06435",
                    "url": "https://arxiv.org/abs/2307.06435",
                    "title": "A Comprehensive Overview of LLMs",
                    "text": "Abstract ...",
                    "highlights": ["LLMs are large."],
                    "summary": "An overview.",
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
        },
    )
    result = host.call(
        "web_fetch",
        {
            "urls": ["https://arxiv.org/abs/2307.06435", "https://example.com/missing"],
            "text": True,
            "highlights": True,
            "summary": True,
            "text_max_characters": 500,
        },
    )
    assert not result.is_error
    assert "## [1/2] A Comprehensive Overview of LLMs" in result.text
    assert (
        "Summary:\nAn overview.\n\nHighlights:\n- LLMs are large.\n\nText:\nAbstract ..."
        in result.text
    )
    assert (
        "## [2/2] https://example.com/missing (failed)\nURL: https://example.com/missing\nError: CRAWL_NOT_FOUND (HTTP 404)"
        in result.text
    )
    assert result.details["urls"][1]["code"] == "CRAWL_NOT_FOUND"


def test_exa_whole_request_error_is_reported_once(host, exa):
    """A whole-request Exa error (402) fails the call once, with the status, tag and message."""
    exa.post(
        f"{EXA}/contents",
        status=402,
        json={"error": "You have exceeded your credits limit.", "tag": "NO_MORE_CREDITS"},
    )
    result = host.call("web_fetch", {"urls": ["https://a.example/"]})
    assert result.is_error
    assert (
        "HTTP 402" in result.text
        and "NO_MORE_CREDITS" in result.text
        and "credits limit" in result.text
    )
    assert SECRET not in result.text
    assert result.text.count("NO_MORE_CREDITS") == 1


def test_large_fetch_output_is_truncated_to_a_temp_file(host, exa):
    """Output over 50KB is truncated as a whole with the notice and the full text saved."""
    exa.post(
        f"{EXA}/contents",
        json={
            "results": [
                {
                    "id": "https://a.example/",
                    "url": "https://a.example/",
                    "title": "Big",
                    "text": "word " * 30000,
                }
            ],
            "statuses": [{"id": "https://a.example/", "status": "success"}],
        },
    )
    result = host.call("web_fetch", {"urls": ["https://a.example/"], "text_max_characters": 200000})
    assert "[Output truncated: " in result.text and result.details["fullOutputPath"] in result.text
