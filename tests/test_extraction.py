"""Main-content extraction of HTML pages."""

from __future__ import annotations

import sys

import pytest
from pi_web_tools.pages import extraction

ARTICLE = """<!doctype html><html><head><title>Async in Rust</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/about">About</a></nav>
<article><h1>Async in Rust</h1>
<p>Futures are lazy: nothing happens until an executor polls them, which is why a
<a href="https://docs.rs/tokio">runtime</a> such as Tokio is needed to drive them to completion.</p>
<h2>Tasks</h2><p>A task is a future handed to the executor; spawning one lets it run concurrently
with the code that spawned it, and its join handle gives back its output when it finishes.</p>
<pre><code>let handle = tokio::spawn(async { 42 });</code></pre>
<ul><li>Futures are lazy</li><li>Tasks run concurrently</li></ul>
</article><footer>Copyright 2026 example.org, all rights reserved</footer></body></html>"""


def test_an_article_becomes_markdown_without_inline_links():
    found = extraction.extract(ARTICLE, "https://example.org/blog/async-rust")
    assert found.title == "Async in Rust"
    assert "## Tasks" in found.text and "tokio::spawn" in found.text
    assert "- Futures are lazy" in found.text
    assert "](" not in found.text and "Copyright" not in found.text
    assert ("runtime", "https://docs.rs/tokio") in found.links
    assert found.fallback is False


@pytest.mark.parametrize(
    "garbage", ["", "   ", "<<<>>>", "\x00\x01binary", "<div>" * 20000, b"\xff\xfe"]
)
def test_garbage_never_raises(garbage):
    found = extraction.extract(garbage, None)
    assert isinstance(found.text, str)


def test_extraction_works_without_resiliparse(monkeypatch):
    """Where resiliparse has no wheel (macOS), trafilatura alone still extracts the article."""
    for name in [m for m in sys.modules if m.startswith("resiliparse")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "resiliparse", None)  # import fails
    found = extraction.extract(ARTICLE, "https://example.org/blog/async-rust")
    assert "## Tasks" in found.text and "Copyright" not in found.text


def test_a_code_block_is_fenced_in_its_language_even_on_one_line():
    from pi_web_tools.pages.extraction import extract

    html = (
        "<html><body><article><p>" + "Some words of the article here. " * 20 + "</p>"
        '<pre><code class="language-python">print(1)</code></pre><p>'
        + "More words follow the example. "
        * 20
        + '</p><pre class="highlight"><code class="lang-js">let a = 1;\nlet b = 2;</code></pre>'
        "</article></body></html>"
    )
    text = extract(html, "https://docs.example/a").text
    assert "```python\nprint(1)\n```" in text
    assert "```js\nlet a = 1;\nlet b = 2;\n```" in text
