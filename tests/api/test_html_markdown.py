"""html_to_markdown: API fragments (Stack Exchange posts, HN comments) as Markdown, linearly."""

from __future__ import annotations

import time

from pi_web_tools import html_to_markdown


def test_code_blocks_are_kept_verbatim_with_their_language():
    fragment = '<p>Try:</p><pre class="lang-py"><code>def f():\n    return 1 &lt; 2\n\n\n\nx = f()  </code></pre>'
    assert html_to_markdown(fragment) == (
        "Try:\n\n```py\ndef f():\n    return 1 < 2\n\n\n\nx = f()  \n```"
    )


def test_inline_code_keeps_backticks_inside_it():
    assert html_to_markdown("<p>Use <code>a = `b`</code> here</p>") == "Use `` a = `b` `` here"


def test_lists_quotes_headings_and_emphasis():
    text = html_to_markdown(
        "<h2>Steps</h2><ol><li>one</li><li>two<ul><li>nested</li></ul></li></ol>"
        "<blockquote><p>quoted <em>words</em></p></blockquote><p><strong>done</strong></p>"
    )
    assert text == "## Steps\n\n1. one\n2. two\n  - nested\n\n> quoted *words*\n\n**done**"


def test_links_keep_their_words_and_a_url_shown_as_text_keeps_its_whole_target():
    text = html_to_markdown(
        '<p>See <a href="https://docs.example/x">the docs</a> and '
        '<a href="https://example.com/a/very/long/path">https://example.com/a/very/...</a></p>'
    )
    assert text == "See the docs and https://example.com/a/very/long/path"


def test_scripts_and_comments_are_dropped():
    assert html_to_markdown("<p>a<script>alert(1)</script><!-- hidden -->b</p>") == "a b"


def test_hostile_markup_costs_time_in_proportion_to_its_length():
    started = time.monotonic()
    html_to_markdown("<a " * 100_000)
    html_to_markdown("<blockquote>" * 20_000 + "x" * 200_000)
    html_to_markdown("<pre>" * 10_000 + "<code>" * 10_000)
    assert time.monotonic() - started < 5
