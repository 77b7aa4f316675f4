"""Renderers: compact calls, collapsed/expanded results, errors, partial results, hostile text."""

from __future__ import annotations

import pytest
from pi_hostspec import AnsiTheme, PlainTheme, RenderOptions, ToolResult
from pi_web_tools.views import human_view as render

THEME = PlainTheme()
COLLAPSED = RenderOptions()
EXPANDED = RenderOptions(expanded=True)


@pytest.mark.parametrize(
    "args",
    [
        None,
        '{"que',
        [],
        {"queries": None},
        {"queries": [None, 3]},
        {"queries": "partial"},
        {"url": 5},
    ],
)
@pytest.mark.parametrize("tool", ["web_search", "web_fetch", "summarize"])
def test_render_call_copes_with_incomplete_arguments(tool, args):
    """Streaming or broken arguments never make a renderer raise."""
    line = render.render_call(tool, args, THEME)
    assert line.startswith(tool)


def test_render_call_for_other_tools_defers():
    """Other plugins' tools are left to them (None)."""
    assert render.render_call("bash", {}, THEME) is None
    assert render.render_result("bash", ToolResult(content="x"), COLLAPSED, THEME) is None


def test_web_fetch_call_shows_single_url_or_count():
    """One URL is shown; several are counted."""
    assert (
        render.render_call("web_fetch", {"urls": ["https://a.b/"]}, THEME)
        == "web_fetch https://a.b/"
    )
    assert (
        render.render_call("web_fetch", {"urls": ["https://a.b/", "https://c.d/"]}, THEME)
        == "web_fetch 2 URLs"
    )


def test_partial_results_render_as_searching():
    """A partial result shows progress words."""
    partial = RenderOptions(is_partial=True)
    assert (
        render.render_result("web_search", ToolResult(content=""), partial, THEME) == "Searching..."
    )
    assert (
        render.render_result("web_fetch", ToolResult(content=""), partial, THEME) == "Fetching..."
    )
    assert (
        render.render_result("summarize", ToolResult(content=""), partial, THEME)
        == "Summarizing..."
    )


def test_errors_render_as_errors_in_red():
    """An error result shows its first line, in the error colour."""
    result = ToolResult(content="Kagi: HTTP 401 Unauthorized\nmore", is_error=True)
    assert (
        render.render_result("web_search", result, COLLAPSED, THEME)
        == "Error: Kagi: HTTP 401 Unauthorized (+1 more lines)"
    )
    coloured = render.render_result("web_search", result, COLLAPSED, AnsiTheme())
    assert coloured.startswith("\x1b[31mError: ")


def test_result_renderers_cope_without_details():
    """A result without details (as pi gives for thrown errors) still renders."""
    result = ToolResult(content="1. A\n   https://a/\n\n2. B\n   https://b/")
    assert render.render_result("web_search", result, COLLAPSED, THEME) == "2 results"
    assert render.render_result("web_fetch", result, COLLAPSED, THEME) == "Fetched"
    assert render.render_result("summarize", result, COLLAPSED, THEME) == "Summary"


def test_search_result_mentions_failed_queries_and_truncation():
    """Collapsed search shows failures and where the full output is."""
    details = {
        "totalResults": 5,
        "queries": ["a", "b"],
        "perQuery": [{"query": "a", "count": 5}, {"query": "b", "count": 0, "error": "x"}],
        "truncation": {"truncated": True},
        "fullOutputPath": "/tmp/x/output.txt",
    }
    line = render.render_result(
        "web_search", ToolResult(content="", details=details), COLLAPSED, THEME
    )
    assert (
        line
        == "5 results for 2 queries (1 query failed) (truncated; full output: /tmp/x/output.txt)"
    )


def test_fetch_result_collapsed_and_expanded():
    """Collapsed: fetched and failed counts; expanded: one line per URL."""
    details = {
        "fetched": 1,
        "failed": 1,
        "urls": [
            {"url": "https://a/", "status": "ok", "title": "A page", "characters": 1200},
            {"url": "https://b/", "status": "error", "error": "HTTP 404 Not Found"},
        ],
    }
    result = ToolResult(content="", details=details)
    assert (
        render.render_result("web_fetch", result, COLLAPSED, THEME)
        == "Fetched 1 of 2 URLs (1 failed)"
    )
    assert render.render_result("web_fetch", result, EXPANDED, THEME) == (
        "Fetched 1 of 2 URLs (1 failed)\n✓ A page — https://a/ (1,200 chars)\n✗ https://b/ — HTTP 404 Not Found"
    )


def test_hostile_text_is_sanitized_in_both_views():
    """ANSI and control characters from the web never reach the terminal."""
    evil = "1. \x1b]8;;http://evil\x07click\x1b]8;;\x07\n   \x1b[2Jwiped\r\x9b31m"
    result = ToolResult(content=evil, details={"totalResults": 1})
    for options in (COLLAPSED, EXPANDED):
        view = render.render_result("web_search", result, options, THEME)
        assert "\x1b" not in view and "\x07" not in view and "\r" not in view and "\x9b" not in view
    call = render.render_call("web_search", {"queries": ["\x1b[31mred"]}, THEME)
    assert call == 'web_search "red"'


def test_expanded_summary_shows_every_character_of_long_paragraphs():
    """A prose paragraph on one long line is shown whole when expanded (seed 001)."""
    paragraph = "word " * 300
    result = ToolResult(content=paragraph.strip(), details={"summaryType": "summary", "tokens": 10})
    assert render.render_result("summarize", result, EXPANDED, THEME).endswith(paragraph.strip())


def test_a_fused_search_call_names_its_providers():
    line = render.render_call(
        "web_search", {"queries": ["rust"], "provider": ["kagi", "brave"]}, PlainTheme()
    )
    assert line == 'web_search "rust" via kagi + brave'


def test_a_search_that_failed_over_or_lost_a_fused_provider_says_so_collapsed():
    """The collapsed line is what a person sees: which provider answered instead, and why;
    which fused provider failed."""
    failed_over = {
        "totalResults": 10,
        "queries": ["a", "b"],
        "perQuery": [
            {
                "query": "a",
                "count": 5,
                "provider": "brave",
                "failedOver": [{"provider": "kagi", "kind": "quota", "error": "Kagi: HTTP 402"}],
            },
            {"query": "b", "count": 5},
        ],
    }
    line = render.render_result(
        "web_search", ToolResult(content="", details=failed_over), COLLAPSED, THEME
    )
    assert line == "10 results for 2 queries · answered by brave (kagi failed: quota)"
    fused = {
        "totalResults": 4,
        "queries": ["a"],
        "perQuery": [
            {
                "query": "a",
                "count": 4,
                "providers": {"kagi": {"count": 4}, "exa": {"error": "Exa: HTTP 401"}},
            },
        ],
    }
    line = render.render_result(
        "web_search", ToolResult(content="", details=fused), COLLAPSED, THEME
    )
    assert line == "4 results · exa failed"
