"""Page content: decoding and HTML to text."""

from __future__ import annotations

import time

import pytest
from pi_web_tools.pages import content
from pi_web_tools.pages.content import html_to_text


def test_html_to_text_strips_scripts_and_tags():
    """The whole-page fallback drops scripts and styles, strips tags and unescapes entities."""
    text = html_to_text(
        "<html><head><style>p{}</style></head><body><script>x()</script>"
        "<p>Fish &amp; chips</p><div>Two&nbsp;words</div></body></html>"
    )
    assert text == "Fish & chips\n\nTwo words"


@pytest.mark.parametrize(
    "bad", ["<script>" * 40000, "<!--" * 40000, "<title>" * 40000, "<a" * 100000, "<p" * 100000]
)
def test_hostile_html_is_processed_in_linear_time(bad):
    """Pages of unclosed tags (a quadratic trap for lazy regexes) are turned into text quickly."""
    from pi_web_tools.api._http_client import error_snippet

    start = time.perf_counter()
    content.html_to_text(bad)
    content.page_title(bad)
    error_snippet(bad)
    assert time.perf_counter() - start < 2.0
