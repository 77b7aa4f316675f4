"""Help on a 404: pages of the site that exist (llms.txt, sitemap.xml), else a site search."""

from __future__ import annotations

import json
import time

from pi_web_tools.runtime import site_help
from pi_web_tools.runtime.site_help import llms_txt, not_found_help


def help_for(httpserver, path: str):
    return not_found_help(
        httpserver.url_for(path), deadline=time.monotonic() + 10, allow_private=True
    )


def sitemap(urls: list[str], index: bool = False) -> str:
    tag, item = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    body = "".join(f"<{item}><loc>{u}</loc></{item}>" for u in urls)
    return f'<?xml version="1.0"?><{tag} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</{tag}>'


def test_the_sitemap_gives_the_closest_pages(httpserver):
    base = httpserver.url_for("")
    pages = [
        f"{base}docs/guide/installation",
        f"{base}docs/guide/configuration",
        f"{base}blog/2026/news",
        f"{base}docs/api/client",
    ]
    httpserver.expect_request("/sitemap.xml").respond_with_data(
        sitemap(pages), content_type="application/xml"
    )
    found = help_for(httpserver, "/docs/guide/install")
    assert found.suggestions[0] == f"{base}docs/guide/installation"
    assert f"{base}blog/2026/news" not in found.suggestions
    assert found.found_in == "sitemap.xml" and len(found.suggestions) <= 5


def test_llms_txt_links_come_first(httpserver):
    base = httpserver.url_for("")
    httpserver.expect_request("/llms.txt").respond_with_data(
        "# Site\n\n- [Install](/docs/install.md): how to install\n- [Other](https://elsewhere.example/docs/install)\n",
        content_type="text/plain",
    )
    found = help_for(httpserver, "/docs/instal")
    assert found.suggestions == (f"{base}docs/install.md",)  # another site's link is not offered
    assert found.found_in == "llms.txt"


def test_a_sitemap_index_is_followed_to_its_best_sitemaps(httpserver):
    base = httpserver.url_for("")
    httpserver.expect_request("/sitemap.xml").respond_with_data(
        sitemap([f"{base}sitemap-blog.xml", f"{base}sitemap-docs.xml"], index=True),
        content_type="application/xml",
    )
    httpserver.expect_request("/sitemap-docs.xml").respond_with_data(
        sitemap([f"{base}docs/reference/cli"]), content_type="application/xml"
    )
    httpserver.expect_request("/sitemap-blog.xml").respond_with_data(
        sitemap([f"{base}blog/post"]), content_type="application/xml"
    )
    found = help_for(httpserver, "/docs/reference/cli-options")
    assert found.suggestions[0] == f"{base}docs/reference/cli"


def test_without_a_sitemap_it_gives_a_ready_site_search(httpserver):
    found = help_for(httpserver, "/docs/guide/getting-started.html")
    call = json.loads(found.search)
    assert call == {"queries": ["site:127.0.0.1 docs guide getting started"]}
    assert found.suggestions == ()


def test_an_html_page_served_as_the_sitemap_is_ignored(httpserver):
    httpserver.expect_request("/sitemap.xml").respond_with_data(
        "<html><body>Soft 404</body></html>", content_type="text/html"
    )
    assert help_for(httpserver, "/docs/x").suggestions == ()


def test_the_help_is_bounded_in_time(httpserver, monkeypatch):
    def slow(_request):
        time.sleep(3)
        return "late"

    monkeypatch.setattr(site_help, "HELP_SECONDS", 0.5)
    httpserver.expect_request("/sitemap.xml").respond_with_handler(slow)
    httpserver.expect_request("/llms.txt").respond_with_handler(slow)
    started = time.monotonic()
    found = help_for(httpserver, "/docs/x")
    assert time.monotonic() - started < 2.5
    assert found.search is not None


def test_a_site_root_mentions_its_llms_txt(httpserver):
    httpserver.expect_request("/llms.txt").respond_with_data(
        "# Site\n\n- [Docs](/docs)\n", content_type="text/markdown"
    )
    assert llms_txt(
        httpserver.url_for("/"), deadline=time.monotonic() + 5, allow_private=True
    ) == httpserver.url_for("/llms.txt")


def test_no_llms_txt_is_none(httpserver):
    assert (
        llms_txt(httpserver.url_for("/"), deadline=time.monotonic() + 5, allow_private=True) is None
    )
