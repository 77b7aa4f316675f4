"""Terminal safety: escapes and control characters in real provider responses never reach the
model text, the details or either rendering; newlines and tabs in page text survive."""

from __future__ import annotations

import re

import pytest

from tests.support import assert_clean_error
from tests.support.fault_server import Reply, json_reply

from .cases import DIRECT_FETCH, EXA_FETCH, EXA_SEARCH, KAGI_SEARCH, KAGI_SUMMARIZE, secret_url

#: What a hostile page may hold: colours, a screen clear, an OSC 8 hyperlink, an OSC 52
#: clipboard write, a bell, backspaces, a carriage return overwrite, C1 CSI, DEL, bidi overrides.
HOSTILE = (
    "\x1b[31mred\x1b[0m \x1b[2J\x1b[H"
    "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 "
    "\x1b]52;c;cm0gLXJmIH4=\x07copied "
    "bell\x07 back\x08\x08 over\rwrite c1\x9b31m \x7fdel \u202eevil\u202c \x00nul\x1bP+q\x1b\\ end"
)
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
VISIBLE = ("red", "click", "copied", "bell", "write", "end")


def strings(value):
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def assert_terminal_safe(outcome) -> None:
    """No escape or control character (other than newline and tab) anywhere the user or model looks."""
    places = {"text": outcome.text, **{f"view {i}": view for i, view in enumerate(outcome.views)}}
    places.update({f"details {i}": text for i, text in enumerate(strings(outcome.result.details))})
    for where, text in places.items():
        found = UNSAFE.search(text)
        assert found is None, f"{found.group()!r} in {where}: {text[:200]!r}"


def kagi_search_reply():
    return json_reply(
        {
            "meta": {"id": "x"},
            "data": [
                {
                    "t": 0,
                    "url": "https://a.example/\x1b[2J",
                    "title": f"T {HOSTILE}",
                    "snippet": f"S {HOSTILE}",
                    "published": "2026-01-01\x1b[5m",
                },
                {"t": 1, "list": [f"related {HOSTILE}"]},
            ],
        }
    )


def exa_search_reply():
    return json_reply(
        {
            "results": [
                {
                    "url": "https://a.example/",
                    "title": f"T {HOSTILE}",
                    "author": f"A {HOSTILE}",
                    "text": f"body {HOSTILE}",
                }
            ]
        }
    )


PAGE_TEXT = f"line one\twith a tab\nline two {HOSTILE}\n\tindented line three"


def exa_fetch_reply():
    return json_reply(
        {
            "results": [
                {
                    "url": "https://example.com/a",
                    "id": "https://example.com/a",
                    "title": f"T {HOSTILE}",
                    "text": PAGE_TEXT,
                }
            ],
            "statuses": [],
        }
    )


def summary_reply():
    return json_reply({"meta": {"id": "x"}, "data": {"output": PAGE_TEXT, "tokens": 5}})


def direct_reply():
    return Reply(200, PAGE_TEXT, content_type="text/plain; charset=utf-8")


def direct_html_reply():
    body = (
        f"<html><head><title>Title {HOSTILE}</title></head><body><article><h1>Head {HOSTILE}</h1>"
        + "".join(
            f"<p>Paragraph {i} {HOSTILE} with enough words to be kept as content.</p>"
            for i in range(8)
        )
        + "</article></body></html>"
    )
    return Reply(200, body, content_type="text/html; charset=utf-8")


CASES = [
    (KAGI_SEARCH, kagi_search_reply, False),
    (EXA_SEARCH, exa_search_reply, False),
    (EXA_FETCH, exa_fetch_reply, True),
    (KAGI_SUMMARIZE, summary_reply, True),
    (DIRECT_FETCH, direct_reply, True),
    (DIRECT_FETCH, direct_html_reply, False),
]


@pytest.mark.parametrize(
    "target,reply,keeps_layout", CASES, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_escapes_removed_from_text_details_and_views(
    target, reply, keeps_layout, server, tools, write_config
):
    """Web content full of escapes and controls arrives clean everywhere, its visible words kept."""
    server.script(reply())
    write_config(target.config(server))
    outcome = tools.call(target.tool, target.args(server))
    assert not outcome.result.is_error, outcome.text
    assert_terminal_safe(outcome)
    for word in VISIBLE:
        assert word in outcome.text
    if keeps_layout:
        assert "line one\twith a tab\nline two" in outcome.text
        assert "\n\tindented line three" in outcome.text
        if target.tool == "summarize":  # its expanded view shows the text itself
            assert "\n\tindented line three" in outcome.views[2]


@pytest.mark.parametrize("target", [KAGI_SEARCH, KAGI_SUMMARIZE, EXA_SEARCH, EXA_FETCH], ids=str)
def test_escapes_in_an_api_error_message_are_removed(target, server, tools, write_config):
    """An API error whose own words hold escapes becomes a clean one-line error."""
    if target.family == "kagi":
        body = {
            "data": None,
            "error": [{"code": 1, "msg": f"Bad request {HOSTILE}\n\nsecond paragraph"}],
        }
    else:
        body = {
            "error": f"Bad request {HOSTILE}\n\nsecond paragraph",
            "tag": "INVALID_REQUEST_BODY",
        }
    server.script(json_reply(body, 400))
    write_config(target.config(server))
    outcome = tools.call(target.tool, target.args(server))
    assert_clean_error(outcome, "HTTP 400", "Bad request", "second paragraph")
    assert_terminal_safe(outcome)
    error = outcome.result.details.get("error")
    if error is not None:
        assert UNSAFE.search(error["message"]) is None


def test_escapes_in_a_redirect_target_are_removed(server, tools, write_config):
    """A redirect to a URL full of escapes fails (or lands) without an escape reaching the user."""
    from tests.support.fault_server import Redirect

    server.script(Redirect("/next\x1b[2J\x07"), Redirect("/next\x1b[2J\x07"))
    write_config(DIRECT_FETCH.config(server))
    outcome = tools.call("web_fetch", {"urls": [secret_url(server)]})
    assert_terminal_safe(outcome)
