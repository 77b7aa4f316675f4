"""The direct fetcher asks for Markdown and takes it when a site offers it."""

from __future__ import annotations

from pi_web_tools.api.types import FetchRequest
from pi_web_tools.pages.markdown import looks_like_html, markdown_alternate
from pi_web_tools.providers.direct import DirectOptions, DirectProvider

PAGE = """<!doctype html><html><head><title>Install guide</title>
<link rel="alternate" type="text/markdown" href="/docs/install.md"></head>
<body><nav>menu menu menu</nav><article><h1>Install</h1><p>Run the installer and follow
the steps shown on the screen until the end of the process.</p></article></body></html>"""
MARKDOWN = "# Install\n\n```sh\npip install thing\n```\n\nThen run `thing`.\n"


def fetch(url: str):
    provider = DirectProvider(options=DirectOptions(allow_private_network=True, timeout_seconds=10))
    return provider.fetch(FetchRequest(urls=(url,)), None).pages[0]


def test_markdown_is_asked_for_first(httpserver):
    httpserver.expect_request("/a").respond_with_data("x", content_type="text/plain")
    fetch(httpserver.url_for("/a"))
    accept = httpserver.log[0][0].headers["Accept"]
    assert accept.startswith("text/markdown,") and "text/html;q=0.9" in accept


def test_a_markdown_answer_is_the_page_text_as_it_came(httpserver):
    httpserver.expect_request("/doc").respond_with_data(
        MARKDOWN, content_type="text/markdown; charset=utf-8"
    )
    page = fetch(httpserver.url_for("/doc"))
    assert page.ok and page.text.rstrip("\n") == MARKDOWN.rstrip("\n")
    assert "the site served this page as Markdown" in page.notes


def test_html_in_disguise_is_read_as_html(httpserver):
    httpserver.expect_request("/doc").respond_with_data(
        PAGE.replace('<link rel="alternate" type="text/markdown" href="/docs/install.md">', ""),
        content_type="text/markdown",
    )
    page = fetch(httpserver.url_for("/doc"))
    assert page.ok and "<html" not in page.text and "Run the installer" in page.text
    assert "the site served this page as Markdown" not in page.notes


def test_a_linked_markdown_version_is_read_once(httpserver):
    httpserver.expect_request("/docs/install").respond_with_data(PAGE, content_type="text/html")
    httpserver.expect_request("/docs/install.md").respond_with_data(
        MARKDOWN, content_type="text/markdown"
    )
    page = fetch(httpserver.url_for("/docs/install"))
    assert page.text.startswith("# Install\n\n```sh\npip install thing")
    assert page.title == "Install guide"
    assert page.url == httpserver.url_for("/docs/install")
    assert any("Markdown version" in note for note in page.notes)
    assert [request.path for request, _ in httpserver.log] == ["/docs/install", "/docs/install.md"]


def test_a_linked_version_that_is_not_markdown_leaves_the_html_page(httpserver):
    httpserver.expect_request("/docs/install").respond_with_data(PAGE, content_type="text/html")
    httpserver.expect_request("/docs/install.md").respond_with_data(PAGE, content_type="text/html")
    page = fetch(httpserver.url_for("/docs/install"))
    assert "Run the installer" in page.text
    assert len(httpserver.log) == 2  # followed once, never twice


def test_the_alternate_link_is_found_in_the_head_only_with_both_attributes():
    base = "https://docs.example/a/b"
    assert (
        markdown_alternate(b'<link href="x.md" type="text/markdown" rel="alternate">', base)
        == "https://docs.example/a/x.md"
    )
    assert (
        markdown_alternate(b'<link rel="alternate" type="application/rss+xml" href="/feed">', base)
        is None
    )
    assert (
        markdown_alternate(b'<link rel="stylesheet" type="text/markdown" href="/x">', base) is None
    )
    assert (
        markdown_alternate(b'<link rel="alternate" type="text/markdown" href="javascript:x">', base)
        is None
    )
    assert (
        markdown_alternate(
            b" " * 70_000 + b'<link rel="alternate" type="text/markdown" href="/x">', base
        )
        is None
    )


def test_html_is_recognised_by_its_start():
    assert looks_like_html(b"  <!DOCTYPE html><html>")
    assert looks_like_html(b"<html lang=en>")
    assert not looks_like_html(b"# Title\n\n<div>inline html in markdown</div>")
