"""Documents through web_fetch (issue 21, the document Lows): JSON shown faithfully, a feed
known by its root element only, one bad PDF page costing only that page."""

from __future__ import annotations

import pytest

from tests.support.fault_server import Reply
from tests.support.pdfs import make_pdf

ARTICLE_WITH_RSS_TEMPLATE = (
    "<!doctype html><html><head><title>Widget docs</title>"
    '<script type="text/template" id="feed-tpl"><rss version="2.0"><channel>'
    "<title>{{title}}</title></channel></rss></script></head><body><article>"
    "<h1>Widget docs</h1>"
    + "<p>The widget renders a feed preview from a template; this paragraph explains how, "
    "at enough length to be the main content of the page.</p>" * 6 + "</article></body></html>"
)


def direct(server_timeout: float = 10.0) -> dict:
    return {
        "providers": [
            {
                "name": "direct",
                "type": "direct",
                "options": {"allowPrivateNetwork": True, "timeoutSeconds": server_timeout},
            }
        ]
    }


@pytest.mark.parametrize(
    "body, why",
    [
        ('{"id": 1, "id": 2, "name": "dup"}', "duplicate keys"),
        ('{"limit": Infinity, "floor": -Infinity}', "Infinity"),
        ('{"price": 0.10000000000000000555, "big": 1e400}', "numbers"),
    ],
    ids=["duplicate-keys", "infinity", "float-digits"],
)
def test_json_that_cannot_be_reindented_faithfully_is_shown_as_it_came(
    body, why, server, tools, write_config
):
    server.script(Reply(200, body, content_type="application/json"))
    write_config(direct())
    outcome = tools.call("web_fetch", {"urls": [server.url("/data.json")]})
    assert not outcome.result.is_error, outcome.text
    assert body in outcome.text, "the data was changed by re-indenting"
    assert "Note: JSON shown as it came" in outcome.text and why in outcome.text


def test_standard_json_is_still_reindented(server, tools, write_config):
    server.script(Reply(200, '{"ok":true,"items":[1,2]}', content_type="application/json"))
    write_config(direct())
    outcome = tools.call("web_fetch", {"urls": [server.url("/data.json")]})
    assert '{\n  "ok": true,\n  "items": [\n    1,\n    2\n  ]\n}' in outcome.text


def test_an_html_page_mentioning_rss_in_a_script_is_an_article(server, tools, write_config):
    """A feed is sniffed from the document's root element, not from a "<rss" anywhere."""
    server.script(Reply(200, ARTICLE_WITH_RSS_TEMPLATE, content_type="text/html; charset=utf-8"))
    write_config(direct())
    outcome = tools.call("web_fetch", {"urls": [server.url("/docs")]})
    assert not outcome.result.is_error, outcome.text
    assert "The widget renders a feed preview" in outcome.text
    assert "<rss" not in outcome.text and "<script" not in outcome.text
    assert "feed" not in " ".join(outcome.result.details["urls"][0].get("notes", []))


def test_one_bad_pdf_page_keeps_the_others(server, tools, write_config):
    good = make_pdf(["First page text", "Second page text", "Third page text"])
    # Page 2's object is no longer a page (same length: the cross-reference stays right).
    broken = good.replace(b"5 0 obj\n<< /Type /Page ", b"5 0 obj\n<< /Type /Nope ", 1)
    assert len(broken) == len(good) and broken != good
    server.script(Reply(200, broken, content_type="application/pdf"))
    write_config(direct())
    outcome = tools.call("web_fetch", {"urls": [server.url("/report.pdf")]})
    assert not outcome.result.is_error, outcome.text
    text = outcome.text
    assert "First page text" in text and "Third page text" in text
    assert "page 2 could not be read" in text
    assert "Traceback" not in text and "PdfiumError" not in text
