"""Documents that are not HTML pages: PDF, JSON, feeds; and pages that need JavaScript or are
refused to bots, retried through another configured fetcher (end to end through `pi-web`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from pi_web_tools.pages.documents import feed_to_text, is_feed, pdf_to_text, pretty_json

from .conftest import SECRET, serve
from .fake_apis import FakeExa
from .pdfs import encrypt_pdf, make_pdf

BIN = Path(sys.executable).parent
APP_SHELL = (
    '<!doctype html><html><head><title>App</title><script src="/main.js"></script></head>'
    '<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.'
    "</noscript></body></html>"
)
RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Release notes</title>
<item><title>v2.0 released</title><link>https://ex.test/v2</link>
<pubDate>Mon, 02 Nov 2026 10:00:00 GMT</pubDate><description>&lt;p&gt;Big &lt;b&gt;news&lt;/b&gt;&lt;/p&gt;</description></item>
<item><title>v1.9 released</title><link>https://ex.test/v19</link></item></channel></rss>"""
ATOM = b"""<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">
<title>Blog</title><entry><title>Hello Atom</title><link href="https://ex.test/a"/>
<updated>2026-11-01T00:00:00Z</updated><summary>First post</summary></entry></feed>"""


def test_a_pdf_becomes_text_with_page_markers():
    text, notes = pdf_to_text(make_pdf(["Hello PDF world\nsecond line", "", "Third page"]))
    assert text == (
        "[Page 1 of 3]\nHello PDF world\nsecond line\n\n[Page 2 of 3]\n\n[Page 3 of 3]\nThird page"
    )
    assert notes == ["PDF, 3 pages"]


@pytest.mark.parametrize(
    "data, note",
    [
        (make_pdf(["", ""]), "has no text layer"),
        (encrypt_pdf(make_pdf(["secret text"])), "encrypted"),
        (b"%PDF-1.7 then garbage", "could not be read"),
    ],
    ids=["scanned", "encrypted", "damaged"],
)
def test_a_pdf_without_readable_text_is_a_note_not_a_failure(data, note):
    text, notes = pdf_to_text(data)
    assert text == "" and any(note in n for n in notes)


def test_json_is_pretty_printed_and_anything_else_left_as_it_is():
    assert (
        pretty_json('{"a":[1,{"b":null}]}')[0]
        == '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}'
    )
    assert pretty_json("not json {") == ("not json {", [])


@pytest.mark.parametrize(
    "body, why",
    [
        ('{"a": 1, "a": 2}', "duplicate keys"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": 0.10000000000000000555}', "numbers"),
        ("[" * 900 + "]" * 900, "times its size"),
    ],
    ids=["duplicate-keys", "infinity", "float-digits", "deep-nesting"],
)
def test_json_that_cannot_be_reindented_faithfully_or_small_is_shown_as_it_came(body, why):
    text, notes = pretty_json(body)
    assert text == body
    assert len(notes) == 1 and notes[0].startswith("JSON shown as it came") and why in notes[0]


def test_a_page_that_mentions_rss_in_a_script_is_not_a_feed():
    page = b'<!doctype html><html><head><script>var t = "<rss version=2.0>";</script></head>'
    assert not is_feed(page)
    assert is_feed(b'\xef\xbb\xbf<?xml version="1.0"?>\n<!-- c -->\n<rss version="2.0">')


@pytest.mark.parametrize("feed", [RSS, ATOM], ids=["rss", "atom"])
def test_feeds_become_a_list_of_entries(feed):
    assert is_feed(feed)
    title, text = feed_to_text(feed)
    if feed is RSS:
        assert title == "Release notes"
        assert text.startswith(
            "1. v2.0 released\n   https://ex.test/v2\n   Published: Mon, 02 Nov 2026 10:00:00 GMT\n   Big news"
        )
        assert "2. v1.9 released\n   https://ex.test/v19" in text
    else:
        assert title == "Blog" and text.startswith("1. Hello Atom\n   https://ex.test/a")


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


@pytest.mark.slow
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


@pytest.mark.slow
def test_an_encrypted_pdf_is_a_note_in_its_section_not_a_failed_call(site, write_config):
    write_config({"providers": [DIRECT]})
    proc = _fetch(f"{site.url}/locked.pdf", f"{site.url}/doc.pdf")
    assert proc.returncode == 0, proc.stderr
    assert "Note: the PDF is encrypted (password protected); its text cannot be read" in proc.stdout
    assert "Quarterly report" in proc.stdout


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_page_refused_to_bots_is_retried_through_a_configured_fetcher(site, exa):
    proc = _fetch(f"{site.url}/guarded", f"{site.url}/doc.pdf")
    assert proc.returncode == 0, proc.stderr
    assert "Note: fetched through exa (exa): the direct fetch was refused (HTTP 403)" in proc.stdout
    assert f"Text of {site.url}/guarded" in proc.stdout and "Quarterly report" in proc.stdout
    assert [r["json"]["urls"] for r in exa.requests] == [[f"{site.url}/guarded"]]
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_an_explicit_provider_is_never_second_guessed(site, exa):
    proc = _fetch(f"{site.url}/guarded", "--provider", "direct")
    assert proc.returncode == 1 and "HTTP 403 Forbidden" in proc.stdout
    assert exa.requests == []


@pytest.mark.slow
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


def test_many_pdfs_at_once_do_not_crash_the_process():
    """PDFium is not thread-safe: 20 PDFs read from 20 threads at once (as one web_fetch of 20
    URLs does) all come back whole; run in a child process, since a crash would abort it."""
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from pdfs import make_pdf\n"
        "from pi_web_tools.pages.documents import pdf_to_text\n"
        "data = [make_pdf([f'page {i} text'] * 40) for i in range(20)]\n"
        "with ThreadPoolExecutor(20) as pool:\n"
        "    texts = [t for t, _ in pool.map(pdf_to_text, data * 5)]\n"
        "assert all(f'page {i % 20} text' in t for i, t in enumerate(texts)), texts\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
