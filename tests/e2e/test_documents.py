"""Documents that are not HTML pages, end to end through `pi-web`: PDFs whatever the server
calls them, feeds, JSON and links; and pages that need JavaScript or are refused to bots, retried
through another configured fetcher."""

from __future__ import annotations

import json
import os
import subprocess
from types import SimpleNamespace

import pytest

from tests.support import SECRET, serve
from tests.support.documents import APP_SHELL, RSS
from tests.support.fake_apis import FakeExa
from tests.support.hosts import BIN
from tests.support.pdfs import encrypt_pdf, make_pdf

ARTICLE = (
    "<html><head><title>Links page</title></head><body><article><h1>Docs</h1>"
    "<p>Read the <a href='/guide'>guide</a> and the <a href='https://other.test/api'>API "
    "reference</a> before you start; this paragraph is long enough to count as content for "
    "the extractor, which wants a few dozen words of running text before it trusts it.</p>"
    "<p>A second paragraph adds more words about the documentation so the page is clearly an "
    "article and not a navigation page of links alone.</p></article></body></html>"
)


@pytest.fixture
def site(httpserver):
    """A loopback site: PDFs (right and wrong type), an app shell, a bot-refusing page, a feed,
    JSON and an article with links; ``site.url`` is its root."""
    routes = {
        "/doc.pdf": (
            200,
            "application/pdf",
            make_pdf(["Quarterly report", "Page two"]),
        ),
        "/mislabelled": (200, "text/html", make_pdf(["Sneaky PDF"])),
        "/download": (200, "application/octet-stream", make_pdf(["Downloaded"])),
        "/locked.pdf": (200, "application/pdf", encrypt_pdf(make_pdf(["x"]))),
        "/app": (200, "text/html; charset=utf-8", APP_SHELL.encode()),
        "/guarded": (403, "text/html", b"<title>Access denied</title>"),
        "/feed": (200, "application/rss+xml", RSS),
        "/data.json": (200, "application/json", b'{"ok":true,"items":[1,2]}'),
        "/links": (200, "text/html; charset=utf-8", ARTICLE.encode()),
    }
    return SimpleNamespace(url=serve(httpserver, routes))


DIRECT = {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}


def _fetch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "pi-web"), "fetch", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_pi_web_fetch_reads_pdfs_whatever_the_server_calls_them(site, write_config):
    write_config({"providers": [DIRECT]})
    proc = _fetch(f"{site.url}/doc.pdf", f"{site.url}/mislabelled", f"{site.url}/download")
    assert proc.returncode == 0, proc.stderr
    sections = proc.stdout.split("\n\n---\n\n")
    assert (
        "Note: PDF, 2 pages\n\n[Page 1 of 2]\nQuarterly report\n\n[Page 2 of 2]\nPage two"
        in sections[0]
    )
    assert "[Page 1 of 1]\nSneaky PDF" in sections[1]
    assert "[Page 1 of 1]\nDownloaded" in sections[2]


def test_an_encrypted_pdf_is_a_note_in_its_section_not_a_failed_call(site, write_config):
    write_config({"providers": [DIRECT]})
    proc = _fetch(f"{site.url}/locked.pdf", f"{site.url}/doc.pdf")
    assert proc.returncode == 0, proc.stderr
    assert "Note: the PDF is encrypted (password protected); its text cannot be read" in proc.stdout
    assert "Quarterly report" in proc.stdout


def test_an_application_shell_says_so_instead_of_an_empty_success(site, write_config):
    write_config({"providers": [DIRECT]})
    proc = _fetch(f"{site.url}/app")
    assert proc.returncode == 0, proc.stderr
    assert (
        "Note: this page is an application shell: its content is drawn by JavaScript" in proc.stdout
    )


@pytest.fixture
def exa(site, write_config):
    with FakeExa(SECRET) as fake:
        write_config(
            {
                "defaultProvider": "direct",
                "providers": [
                    DIRECT,
                    {
                        "name": "exa",
                        "type": "exa",
                        "apiKey": SECRET,
                        # the test pages are on loopback: let the ladder hand them to Exa
                        "options": {"baseUrl": fake.base_url, "allowPrivateNetwork": True},
                    },
                ],
            }
        )
        yield fake


def test_an_application_shell_is_retried_through_a_configured_fetcher_and_labelled(site, exa):
    proc = _fetch(f"{site.url}/app")
    assert proc.returncode == 0, proc.stderr
    assert (
        "Note: fetched through exa (exa): the direct fetch found an application shell "
        "(the content needs JavaScript)" in proc.stdout
    )
    assert f"Text of {site.url}/app" in proc.stdout
    assert [r["json"]["urls"] for r in exa.requests] == [[f"{site.url}/app"]]
    again = _fetch(f"{site.url}/app")  # reading on: from the cache, no second ladder
    assert f"Text of {site.url}/app" in again.stdout and len(exa.requests) == 1


def test_a_page_refused_to_bots_is_retried_through_a_configured_fetcher(site, exa):
    proc = _fetch(f"{site.url}/guarded", f"{site.url}/doc.pdf")
    assert proc.returncode == 0, proc.stderr
    assert "Note: fetched through exa (exa): the direct fetch was refused (HTTP 403)" in proc.stdout
    assert f"Text of {site.url}/guarded" in proc.stdout and "Quarterly report" in proc.stdout
    assert [r["json"]["urls"] for r in exa.requests] == [[f"{site.url}/guarded"]]
    assert SECRET not in proc.stdout + proc.stderr


def test_an_explicit_provider_is_never_second_guessed(site, exa):
    proc = _fetch(f"{site.url}/guarded", "--provider", "direct")
    assert proc.returncode == 1 and "HTTP 403 Forbidden" in proc.stdout
    assert exa.requests == []


def test_feeds_json_and_links_through_pi_web(site, write_config):
    write_config({"providers": [DIRECT]})
    proc = subprocess.run(
        [
            str(BIN / "pi-web"),
            "call",
            "web_fetch",
            json.dumps(
                {
                    "urls": [f"{site.url}/feed", f"{site.url}/data.json", f"{site.url}/links"],
                    "links": True,
                }
            ),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    text = json.loads(proc.stdout)["content"][0]["text"]
    feed, data, links = text.split("\n\n---\n\n")
    assert feed.startswith("## [1/3] Release notes") and "1. v2.0 released" in feed
    assert '{\n  "ok": true,\n  "items": [\n    1,\n    2\n  ]\n}' in data
    assert "](" not in links
    assert (
        f"Links:\n1. guide <{site.url}/guide>\n2. API reference <https://other.test/api>" in links
    )
