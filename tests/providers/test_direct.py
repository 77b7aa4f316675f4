"""The direct fetcher end to end against loopback servers."""

from __future__ import annotations

import ipaddress
import socket
import time

import pytest
from pi_web_tools.api import _netguard as netguard
from pi_web_tools.api.retry import RetryPolicy
from pi_web_tools.api.types import FetchRequest, ProviderConfig
from pi_web_tools.providers import direct
from pi_web_tools.providers.direct import DirectOptions, DirectProvider
from werkzeug.wrappers import Response

from tests.support import hits

ARTICLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Test Article &amp; More</title>
<script>var tracking = "should never appear";</script><style>body { color: red }</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>The Big Headline</h1>
<p>First paragraph of the article with a <a href="https://example.com/link">link</a> and enough
words to count as real content for an extraction library to keep it.</p>
<p>Second paragraph talks about more things in detail, explaining the situation, the background
and the consequences for everyone involved.</p>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>alpha</td><td>1</td></tr></table>
<p>Third paragraph concludes the article with a final thought that is long enough to be kept by
the extractor as main content.</p></article>
<footer>Copyright 2026 footer text</footer></body></html>"""

PROXY_VARS = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    """No proxy variables, so the environment cannot change what is checked."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(httpserver):
    """The tests' loopback page server (tests/conftest.py), with no expectations and an empty
    log."""
    return httpserver


def fetch_one(url: str, **options):
    """Fetch one URL with a loopback-allowing provider (options override) and return its page."""
    options.setdefault("allow_private_network", True)
    provider = DirectProvider("direct", DirectOptions(**options))
    (page,) = provider.fetch(FetchRequest(urls=(url,)), ctx=None).pages
    return page


def raw(body: bytes, content_type=None, status: int = 200, headers=None) -> Response:
    """A werkzeug response with exactly the given Content-Type (or none at all)."""
    response = Response(body, status=status, headers=headers or {})
    del response.headers["Content-Type"]
    if content_type:
        response.headers["Content-Type"] = content_type
    return response


def test_html_article_becomes_markdown_with_title(server):
    """An HTML article becomes main-content Markdown (heading, table) with the page title; links
    are kept apart, never inline."""
    server.expect_request("/article").respond_with_data(
        ARTICLE, content_type="text/html; charset=utf-8"
    )
    page = fetch_one(server.url_for("/article"))
    assert page.ok, page.error
    assert page.title == "Test Article & More"
    assert page.content_type == "text/html"
    assert page.status == 200
    assert "with a link and enough" in page.text and "](" not in page.text
    assert ("link", "https://example.com/link") in page.links
    assert page.text.startswith("# The Big Headline")
    assert "| alpha | 1 |" in page.text.replace("  ", " ")
    assert "should never appear" not in page.text
    assert page.final_url is None


def test_html_with_little_main_content_falls_back_to_whole_text(server, monkeypatch):
    """When extraction finds almost nothing, the whole-page text is returned with a note."""
    from pi_web_tools.pages import extraction, workers

    monkeypatch.setattr(workers, "IN_PROCESS", True)  # the patch applies in this process only
    monkeypatch.setattr(extraction, "_extract", lambda html, url: extraction.Extraction())
    server.expect_request("/").respond_with_data(ARTICLE, content_type="text/html")
    page = fetch_one(server.url_for("/"))
    assert page.ok
    assert "Second paragraph talks about more things" in page.text
    assert "Copyright 2026 footer text" in page.text
    assert "should never appear" not in page.text
    assert any("whole page text" in note for note in page.notes)


def test_plain_text_passes_through(server):
    """text/plain is returned verbatim."""
    server.expect_request("/notes.txt").respond_with_data(
        "line one\nline two\n", content_type="text/plain"
    )
    page = fetch_one(server.url_for("/notes.txt"))
    assert page.ok and page.text == "line one\nline two\n"
    assert page.title is None


def test_json_passes_through(server):
    """application/json (and +json) bodies come back pretty-printed."""
    server.expect_request("/data").respond_with_data(
        '{"a": [1, 2]}', content_type="application/problem+json"
    )
    page = fetch_one(server.url_for("/data"))
    assert page.ok and page.text == '{\n  "a": [\n    1,\n    2\n  ]\n}'


def test_latin1_page_from_header_charset(server):
    """A Latin-1 body declared in the Content-Type header decodes correctly."""
    body = "<html><head><title>Café crème</title></head><body><p>Déjà vu à Noël.</p></body></html>"
    server.expect_request("/").respond_with_response(
        raw(body.encode("latin-1"), "text/html; charset=ISO-8859-1")
    )
    page = fetch_one(server.url_for("/"))
    assert page.ok
    assert page.title == "Café crème"
    assert "Déjà vu à Noël." in page.text


def test_latin1_page_from_meta_charset(server):
    """A Latin-1 body with only a <meta> charset (http-equiv or charset) decodes correctly."""
    for meta in (
        '<meta charset="iso-8859-1">',
        '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
    ):
        body = f"<html><head>{meta}<title>Crème brûlée</title></head><body><p>Ça coûte 5 €.</p></body></html>"
        server.expect_oneshot_request("/").respond_with_response(
            raw(body.encode("cp1252"), "text/html")
        )
        page = fetch_one(server.url_for("/"))
        assert page.ok
        assert page.title == "Crème brûlée"
        assert "Ça coûte 5 €." in page.text


def test_undeclared_bad_utf8_is_replaced_not_fatal(server):
    """A text body with no charset and invalid UTF-8 still decodes, with replacement characters."""
    server.expect_request("/").respond_with_response(raw(b"ok \xff\xfe done", "text/plain"))
    page = fetch_one(server.url_for("/"))
    assert page.ok and page.text.startswith("ok ") and page.text.endswith(" done")


@pytest.mark.parametrize("content_type", ["image/png", "video/mp4", "application/zip"])
def test_binary_types_are_unsupported(server, content_type):
    """Images, video and archives are per-URL failures naming the content type."""
    server.expect_request("/file").respond_with_response(raw(b"\x89PNG\x00\x01\x02", content_type))
    page = fetch_one(server.url_for("/file"))
    assert page.ok is False
    assert page.error == f"unsupported content type {content_type}"
    assert page.status == 200 and page.content_type == content_type


def test_untyped_bodies_are_sniffed(server):
    """With no Content-Type, '<' means HTML, decodable bytes mean text, anything else is unsupported."""
    server.expect_request("/html").respond_with_response(
        raw(b"  <html><title>Sniffed</title><p>x</p></html>")
    )
    server.expect_request("/text").respond_with_response(raw(b"just words"))
    server.expect_request("/bin").respond_with_response(raw(b"\x89PNG\r\n\x1a\n\x00\x00\x00"))
    assert fetch_one(server.url_for("/html")).title == "Sniffed"
    assert fetch_one(server.url_for("/text")).text == "just words"
    page = fetch_one(server.url_for("/bin"))
    assert page.ok is False and "unsupported content type" in page.error


def test_redirect_chain_sets_final_url(server):
    """Two redirects are followed by hand and final_url names the last hop."""
    server.expect_request("/r1").respond_with_response(
        raw(b"", status=301, headers={"Location": "/r2"})
    )
    server.expect_request("/r2").respond_with_response(
        raw(b"", status=302, headers={"Location": server.url_for("/final")})
    )
    server.expect_request("/final").respond_with_data("arrived", content_type="text/plain")
    page = fetch_one(server.url_for("/r1"))
    assert page.ok and page.text == "arrived"
    assert page.final_url == server.url_for("/final")
    assert page.url == server.url_for("/r1")


def test_redirect_carries_cookies_within_one_chain(server):
    """A cookie set by a redirect is sent to the next hop of the same chain."""
    server.expect_request("/login").respond_with_response(
        raw(b"", status=302, headers={"Location": "/home", "Set-Cookie": "session=abc; Path=/"})
    )
    server.expect_request("/home", headers={"Cookie": "session=abc"}).respond_with_data(
        "welcome", content_type="text/plain"
    )
    page = fetch_one(server.url_for("/login"))
    assert page.ok and page.text == "welcome"


def test_redirect_loop_fails(server):
    """A redirect loop is a per-URL failure."""
    server.expect_request("/a").respond_with_response(
        raw(b"", status=302, headers={"Location": "/b"})
    )
    server.expect_request("/b").respond_with_response(
        raw(b"", status=302, headers={"Location": "/a"})
    )
    page = fetch_one(server.url_for("/a"))
    assert page.ok is False and "redirect loop" in page.error


def test_too_many_redirects_fail(server):
    """More than five redirects is a per-URL failure."""
    for hop in range(7):
        server.expect_request(f"/hop{hop}").respond_with_response(
            raw(b"", status=307, headers={"Location": f"/hop{hop + 1}"})
        )
    page = fetch_one(server.url_for("/hop0"))
    assert page.ok is False and page.error == "too many redirects (more than 5)"


def test_loopback_refused_without_allow_private(server):
    """With allowPrivateNetwork false, a 127.0.0.1 URL is refused before any request is sent."""
    server.expect_request("/").respond_with_data("secret", content_type="text/plain")
    page = fetch_one(server.url_for("/"), allow_private_network=False)
    assert page.ok is False
    assert page.error.startswith("refused: 127.0.0.1 is a loopback address")
    assert '"allowPrivateNetwork": true' in page.error
    assert len(server.log) == 0


def test_redirect_to_private_address_refused(server, monkeypatch):
    """Every hop is checked: a redirect to a name resolving to 10.0.0.5 is refused, naming the address."""
    real = netguard.classify_address
    monkeypatch.setattr(
        netguard,
        "classify_address",
        lambda ip: None if ip == ipaddress.ip_address("127.0.0.1") else real(ip),
    )
    monkeypatch.setattr(
        netguard,
        "resolve_host",
        lambda host, port: ["10.0.0.5"] if host == "example.internal" else ["127.0.0.1"],
    )
    server.expect_request("/start").respond_with_response(
        raw(b"", status=302, headers={"Location": "http://example.internal/admin"})
    )
    page = fetch_one(server.url_for("/start"), allow_private_network=False)
    assert page.ok is False
    assert page.error == (
        "refused: example.internal resolves to a private address (10.0.0.5); "
        'set "allowPrivateNetwork": true in the direct provider\'s options to allow it'
    )
    assert page.final_url == "http://example.internal/admin"
    assert len(server.log) == 1


def test_oversized_body_is_kept_with_note(server):
    """A body past maxBytes is cut, still returned, and noted."""
    server.expect_request("/big").respond_with_data("x" * 5000, content_type="text/plain")
    page = fetch_one(server.url_for("/big"), max_bytes=1000)
    assert page.ok
    assert page.text == "x" * 1000
    assert "Stopped reading after 1000B (maxBytes)" in page.notes


def test_the_whole_page_text_is_returned_whatever_the_window(server):
    """The fetcher returns all the text it read (the tool shows it in windows and caches it)."""
    server.expect_request("/long").respond_with_data("y" * 20000, content_type="text/plain")
    provider = DirectProvider("direct", DirectOptions(allow_private_network=True))
    (page,) = provider.fetch(
        FetchRequest(urls=(server.url_for("/long"),), text_max_characters=50), ctx=None
    ).pages
    assert len(page.text) == 20000 and page.more_text is False and page.notes == ()


def test_http_404_is_a_failure(server):
    """A 404 final status is a failure 'HTTP 404 Not Found'."""
    server.expect_request("/gone").respond_with_data("nope", status=404, content_type="text/html")
    page = fetch_one(server.url_for("/gone"))
    assert (page.ok, page.error, page.status) == (False, "HTTP 404 Not Found", 404)


def test_connection_refused_is_a_failure():
    """A closed port is a per-URL 'connection refused' failure."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    page = fetch_one(f"http://127.0.0.1:{port}/")
    assert (page.ok, page.error) == (False, "connection refused")


def test_unsupported_scheme_is_refused():
    """Only http and https may be fetched."""
    page = fetch_one("file:///etc/passwd")
    assert page.ok is False and "only http and https" in page.error


def test_one_failure_does_not_sink_others_and_order_is_kept(server):
    """Mixed outcomes come back one page per URL, in request order."""
    server.expect_request("/ok").respond_with_data("fine", content_type="text/plain")
    server.expect_request("/missing").respond_with_data("", status=404)
    provider = DirectProvider("direct", DirectOptions(allow_private_network=True))
    urls = (server.url_for("/missing"), "ftp://example.com/x", server.url_for("/ok"))
    pages = provider.fetch(FetchRequest(urls=urls), ctx=None).pages
    assert [p.url for p in pages] == list(urls)
    assert [p.ok for p in pages] == [False, False, True]


def test_fetches_run_concurrently(server):
    """Five URLs that each take 0.3 s finish in well under 1.5 s."""

    def slow(request):
        time.sleep(0.3)
        return Response("done", content_type="text/plain")

    for index in range(5):
        server.expect_request(f"/slow{index}").respond_with_handler(slow)
    provider = DirectProvider("direct", DirectOptions(allow_private_network=True))
    urls = tuple(server.url_for(f"/slow{index}") for index in range(5))
    started = time.monotonic()
    pages = provider.fetch(FetchRequest(urls=urls), ctx=None).pages
    elapsed = time.monotonic() - started
    assert all(page.ok for page in pages)
    assert elapsed < 1.0


def test_timeout_while_waiting_is_a_failure(server):
    """A server slower than timeoutSeconds gives a timeout failure."""

    def slow(request):
        time.sleep(1.0)
        return Response("late", content_type="text/plain")

    server.expect_request("/slow").respond_with_handler(slow)
    page = fetch_one(server.url_for("/slow"), timeout_seconds=0.3)
    assert page.ok is False and "timed out" in page.error


def test_session_is_reused_across_calls(server):
    """The provider keeps one requests.Session with the project's User-Agent."""
    from pi_web_tools.api._http_client import USER_AGENT

    server.expect_request("/", headers={"User-Agent": USER_AGENT}).respond_with_data(
        "hi", content_type="text/plain"
    )
    provider = DirectProvider("direct", DirectOptions(allow_private_network=True))
    provider.fetch(FetchRequest(urls=(server.url_for("/"),)), ctx=None)
    session = provider.session
    (page,) = provider.fetch(FetchRequest(urls=(server.url_for("/"),)), ctx=None).pages
    assert page.ok and provider.session is session
    assert session.trust_env is True


def test_trafilatura_is_not_imported_at_module_import():
    """Importing the direct module does not import trafilatura (start-up stays lazy)."""
    import subprocess
    import sys

    code = "import sys, pi_web_tools.providers.direct; print('trafilatura' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_registered_type_needs_no_key():
    """The direct type registers fetch only, with no API key and DirectOptions defaults."""
    from pi_web_tools.providers.direct import DIRECT as kind

    assert kind.capabilities == {"fetch"} and kind.needs_api_key is False
    provider = kind.factory(ProviderConfig(name="direct", type="direct", options=DirectOptions()))
    assert provider.options.max_bytes == 5 * 1024 * 1024
    assert provider.options.allow_private_network is False
    assert kind.fetch_modes == {"text"} and kind.fallback_for == {"fetch"}


def test_dns_rebinding_is_refused_at_connect_time(httpserver, monkeypatch):
    """A name that passes the pre-check but connects to loopback is refused by the socket check."""
    import socket as socket_module

    from pi_web_tools.providers import direct as direct_module

    httpserver.expect_request("/secret").respond_with_data(
        "internal data", content_type="text/plain"
    )
    real_getaddrinfo = socket_module.getaddrinfo

    def rebinding(host, *args, **kwargs):
        if host == "rebind.test":  # the connection resolves to loopback...
            return real_getaddrinfo("127.0.0.1", *args, **kwargs)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket_module, "getaddrinfo", rebinding)
    monkeypatch.setattr(
        netguard, "resolve_host", lambda host, port: ["93.184.216.34"]
    )  # ...the pre-check saw a public one
    provider = direct_module.DirectProvider("direct", direct_module.DirectOptions())
    page = provider.fetch(
        FetchRequest(urls=(f"http://rebind.test:{httpserver.port}/secret",)), None
    ).pages[0]
    assert not page.ok
    assert page.error.startswith("refused: rebind.test connected to a loopback address (127.0.0.1)")
    assert "internal data" not in (page.text or "")


def test_slow_dns_lookup_is_bounded_by_the_timeout(monkeypatch):
    """A resolver that hangs cannot hold the fetch past its timeout."""
    monkeypatch.setattr(netguard, "resolve_host", lambda host, port: time.sleep(10))
    provider = direct.DirectProvider("direct", direct.DirectOptions(timeout_seconds=0.5))
    start = time.monotonic()
    page = provider.fetch(FetchRequest(urls=("http://slow-dns.example/",)), None).pages[0]
    assert time.monotonic() - start < 1.5
    assert not page.ok and page.error == "timed out after 0.5 s resolving the host"


def test_transient_status_is_retried_then_succeeds(httpserver, monkeypatch):
    """A 503 then a 200 gives the page, after one retry (like the API providers)."""
    monkeypatch.setattr(
        "pi_web_tools.api.retry.DEFAULT_RETRY",
        RetryPolicy(backoff_factor=0.01, backoff_jitter=0.01 / 2),
    )
    httpserver.expect_ordered_request("/flaky").respond_with_data("busy", status=503)
    httpserver.expect_ordered_request("/flaky").respond_with_data(
        "fine now", content_type="text/plain"
    )
    provider = direct.DirectProvider("direct", direct.DirectOptions(allow_private_network=True))
    page = provider.fetch(FetchRequest(urls=(httpserver.url_for("/flaky"),)), None).pages[0]
    assert page.ok and page.text == "fine now"
    assert hits(httpserver, "/flaky") == 2


def test_not_found_is_not_retried(httpserver):
    """A 404 is final: one request, one failure."""
    httpserver.expect_request("/gone").respond_with_data("no", status=404)
    provider = direct.DirectProvider("direct", direct.DirectOptions(allow_private_network=True))
    page = provider.fetch(FetchRequest(urls=(httpserver.url_for("/gone"),)), None).pages[0]
    assert not page.ok and page.error == "HTTP 404 Not Found"
    assert hits(httpserver, "/gone") == 1
