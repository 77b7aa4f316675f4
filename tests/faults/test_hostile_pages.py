"""Hostile pages (round 2), served from loopback: encodings that produce lone surrogates or take
quadratic time, invisible characters, and headers that used to give raw exception names."""

from __future__ import annotations

import json

import pytest

from tests.support import SECRET, assert_clean_error, assert_in_time, assert_no_secret
from tests.support.fault_server import Redirect, Reply

from .cases import DIRECT_FETCH, KAGI_SEARCH, kagi_config


def fetch(server, tools, write_config, *replies, timeout: float = 1.0, **args):
    """web_fetch of one loopback page answered by *replies*, through the direct fetcher."""
    server.script(*replies)
    write_config(DIRECT_FETCH.config(server, timeout=timeout))
    return tools.call("web_fetch", {"urls": [server.url("/page")], **args})


def assert_valid_unicode(outcome) -> None:
    """Every string the host got encodes as UTF-8 (an MCP server or a log can write it)."""
    outcome.text.encode("utf-8")
    json.dumps(outcome.result.details, ensure_ascii=False).encode("utf-8")
    for view in outcome.views:
        view.encode("utf-8")


# --------------------------------------------------------------------------- item 1, 3: encodings

SURROGATE_PAGES = {
    "utf-7 meta": (
        b'<html><head><meta charset="utf-7"></head><body><p>a +2AA- b</p></body></html>',
        "text/html",
    ),
    "unicode_escape header": (b"<p>a \\ud800 b</p>", "text/html; charset=unicode_escape"),
    "utf-16 bytes with a lone surrogate": (b"\xff\xfea\x00\x00\xd8b\x00", "text/plain"),
    "raw_unicode_escape xml": (
        b'<?xml version="1.0" encoding="raw_unicode_escape"?><a>\\ud800</a>',
        "application/xml",
    ),
}


@pytest.mark.parametrize("case", sorted(SURROGATE_PAGES))
def test_a_page_never_yields_a_lone_surrogate(case, server, tools, write_config):
    """A page whose declared charset would decode to lone surrogates gives valid Unicode text."""
    body, kind = SURROGATE_PAGES[case]
    outcome = fetch(server, tools, write_config, Reply(200, body, content_type=kind))
    assert not outcome.result.is_error, outcome.text
    assert_valid_unicode(outcome)


def test_a_python_codec_name_is_not_a_page_charset(server, tools, write_config):
    """charset=utf-7 is not a web encoding: the bytes are read as UTF-8, so '+2AA-' stays as is."""
    body = b'<html><head><meta charset="utf-7"><title>t</title></head><body><p>price +2AA- here</p></body></html>'
    outcome = fetch(server, tools, write_config, Reply(200, body, content_type="text/html"))
    assert "price +2AA- here" in outcome.text


def test_a_web_encoding_label_is_honoured(server, tools, write_config):
    """A WHATWG label (latin1 means windows-1252, as in browsers) decodes the page."""
    body = b"<p>caf\xe9 \x80 5</p>"
    outcome = fetch(
        server, tools, write_config, Reply(200, body, content_type="text/html; charset=latin1")
    )
    assert "café € 5" in outcome.text


def test_punycode_charset_on_a_big_page_is_fast(server, tools, write_config):
    """charset=punycode (quadratic in Python: 640 KB took 17 s) is no web encoding: the page
    is read as UTF-8, within the timeout."""
    body = b"x" * 320_000 + b"-" + b"ba" * 160_000  # 640 KB that Python's punycode decodes slowly
    outcome = fetch(
        server, tools, write_config, Reply(200, body, content_type="text/plain; charset=punycode")
    )
    assert_in_time(outcome)
    assert not outcome.result.is_error and "xxxxxxxx" in outcome.text


def test_api_json_with_a_lone_surrogate_gives_valid_text(server, tools, write_config):
    """An API answer holding "\\ud800" (valid JSON) gives valid Unicode text and details."""
    server.script(
        Reply(
            200,
            '{"meta": {}, "data": [{"t": 0, "url": "https://r.example/1", '
            '"title": "bad \\ud800 title", "snippet": "x \\udfff y"}]}',
        )
    )
    write_config(kagi_config(server))
    outcome = tools.call(KAGI_SEARCH.tool, KAGI_SEARCH.args(server))
    assert not outcome.result.is_error, outcome.text
    assert "bad \ufffd title" in outcome.text
    assert_valid_unicode(outcome)


# --------------------------------------------------------------------------- item 8: invisible

HIDDEN = "\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065"  # "Ignore" in tags


def test_invisible_characters_never_reach_the_model(server, tools, write_config):
    """Tag characters, U+061C, zero-width characters and BOMs are removed from text and views."""
    text = (
        f"visible{HIDDEN} words\u200b here\ufeff and\u061c there\u2060 now"
        "\u200c\u200d\u200c end; emoji 👨\u200d👩 stays"
    )
    outcome = fetch(
        server,
        tools,
        write_config,
        Reply(200, text.encode("utf-8"), content_type="text/plain; charset=utf-8"),
    )
    assert "visible words here and there now end; emoji 👨\u200d👩 stays" in outcome.text
    everything = outcome.text + json.dumps(outcome.result.details) + "".join(outcome.views)
    for hidden in ("\U000e0049", "\u200b", "\ufeff", "\u061c", "\u2060", "\u200c"):
        assert hidden not in everything


def test_invisible_characters_are_removed_from_titles(server, tools, write_config):
    """A page title made of tag characters shows as nothing hidden in the views and details."""
    body = f"<html><head><title>Doc{HIDDEN}\u200b</title></head><body><p>hello</p></body></html>"
    outcome = fetch(
        server,
        tools,
        write_config,
        Reply(200, body.encode("utf-8"), content_type="text/html; charset=utf-8"),
    )
    everything = outcome.text + json.dumps(outcome.result.details) + "".join(outcome.views)
    assert "Doc" in outcome.text and "\U000e0049" not in everything and "\u200b" not in everything


def test_mcp_server_survives_a_surrogate_page(agent_dir, tmp_path, server, write_config):
    """Through `pi-web mcp` (stdio): a page decoding to a lone surrogate and a concurrent call
    both come back, and the server keeps serving."""
    import anyio

    from tests.support.hosts import mcp_stdio_session as _session
    from tests.support.hosts import result_text as _text
    from tests.support.hosts import run_async as _run

    body, kind = SURROGATE_PAGES["unicode_escape header"]
    server.script(Reply(200, body, content_type=kind))
    write_config(DIRECT_FETCH.config(server, timeout=5.0))
    results = {}

    async def test():
        async with _session(agent_dir, tmp_path / "mcp.log") as session:

            async def call(name, url):
                results[name] = await session.call_tool("web_fetch", {"urls": [url]})

            async with anyio.create_task_group() as group:
                group.start_soon(call, "bad", server.url("/bad"))
                group.start_soon(call, "other", server.url("/other"))
            results["after"] = await session.call_tool("web_fetch", {"urls": [server.url("/x")]})

    _run(test)
    for name in ("bad", "other", "after"):
        assert results[name].is_error is False, _text(results[name])
        assert "a \\ud800 b" in _text(results[name])  # not a web encoding: read as UTF-8


# --------------------------------------------------------------------------- item 2: extraction

UNCLOSED = b"<html><body>" + b"<p>x" * (5 * 1024 * 1024 // 4)  # 5 MB: minutes and GBs in-process


def test_extraction_of_a_hostile_page_ends_at_the_timeout(server, tools, write_config):
    """5 MB of unclosed <p> ends within timeoutSeconds, with the whole page text and a note."""
    outcome = fetch(server, tools, write_config, Reply(200, UNCLOSED, content_type="text/html"))
    assert_in_time(outcome)
    assert not outcome.result.is_error, outcome.text
    notes = outcome.result.details["urls"][0]["notes"]
    assert any("main-content extraction" in note for note in notes), notes
    assert "x\nx\nx" in outcome.text


def test_three_hostile_pages_in_one_call_end_at_the_timeout(server, tools, write_config):
    """Three such URLs in one call still end within the one timeout."""
    server.script(Reply(200, UNCLOSED, content_type="text/html"))
    write_config(DIRECT_FETCH.config(server, timeout=1.0))
    urls = [server.url(f"/p{i}") for i in range(3)]
    outcome = tools.call("web_fetch", {"urls": urls})
    assert_in_time(outcome)
    assert outcome.result.details["fetched"] == 3


def test_cancelling_stops_a_running_extraction(server, tools, write_config):
    """Cancelling during extraction ends the call at once and kills the worker."""
    import threading

    from pi_hostspec import ToolContext
    from pi_web_tools.pages import workers

    server.script(Reply(200, UNCLOSED, content_type="text/html"))
    write_config(DIRECT_FETCH.config(server, timeout=30.0))
    ctx = ToolContext()
    timer = threading.Timer(1.0, ctx.cancel.set)
    timer.start()
    outcome = tools.call("web_fetch", {"urls": [server.url("/page")]}, ctx)
    timer.cancel()
    assert outcome.elapsed < 2.5
    assert outcome.result.is_error and "cancelled" in outcome.text
    pool = workers._get_pool()
    assert pool is not None and pool.busy == 0


def test_extraction_workers_have_a_memory_limit(server, tools, write_config):
    """The worker that extracted a page runs under the documented address-space limit."""
    from pathlib import Path

    from pi_web_tools.pages import workers

    page = b"<html><head><title>T</title></head><body><p>" + b"words " * 100 + b"</p></body></html>"
    # A generous timeout: a worker's first start on a busy machine must not be cut short.
    outcome = fetch(
        server, tools, write_config, Reply(200, page, content_type="text/html"), timeout=20
    )
    assert not outcome.result.is_error
    pool = workers._get_pool()
    assert pool.idle, "the worker is kept warm"
    limits = Path(f"/proc/{pool.idle[0].process.pid}/limits").read_text()
    line = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert str(workers.WORKER_MEMORY_BYTES) in line


# --------------------------------------------------------------------------- item 9: messages


class ManyHeaders:
    """A response whose headers never end well: *count* headers, or one header of *size* bytes."""

    def __init__(self, count: int = 0, size: int = 0):
        self.count, self.size = count, size

    def perform(self, handler, stop) -> None:
        handler.send_response(200)
        for i in range(self.count):
            handler.send_header(f"X-Filler-{i}", "x")
        if self.size:
            handler.send_header("X-Huge", "h" * self.size)
        handler.send_header("Content-Length", "0")
        handler.end_headers()


def test_a_latin1_location_is_followed(server, tools, write_config):
    """A redirect whose Location is Latin-1 bytes is followed with them percent-encoded."""
    outcome = fetch(
        server,
        tools,
        write_config,
        Redirect("/caf\xe9"),
        Reply(200, "landed", content_type="text/plain"),
    )
    assert not outcome.result.is_error, outcome.text
    assert "landed" in outcome.text and server.requests[1]["path"] == "/caf%E9"


def test_an_unparseable_location_is_a_clean_error(server, tools, write_config):
    """Location: http://[::1 says the server redirected to an invalid URL."""
    outcome = fetch(server, tools, write_config, Redirect("http://[::1"))
    assert_clean_error(outcome, "redirected to an invalid URL")
    assert "ValueError" not in outcome.text


@pytest.mark.parametrize("shape", [{"count": 200}, {"size": 70_000}], ids=["many", "huge"])
def test_oversized_headers_are_named_and_not_retried(shape, server, tools, write_config):
    """Too many or too long response headers: one clean line naming them, and no retry."""
    outcome = fetch(server, tools, write_config, ManyHeaders(**shape))
    assert_clean_error(outcome, "oversized or endless response headers")
    assert "could not connect" not in outcome.text
    assert server.count == 1


def test_an_api_key_a_header_cannot_carry_names_the_provider(server, tools, write_config):
    """A key with a typographic quote gives 'Kagi: ...' naming the cause, no codec error, no key."""
    config = kagi_config(server)
    config["providers"][0]["apiKey"] = SECRET + "\u2019"
    write_config(config)
    outcome = tools.call(KAGI_SEARCH.tool, KAGI_SEARCH.args(server))
    assert_clean_error(outcome, "Kagi", "cannot carry")
    assert "codec" not in outcome.text and server.count == 0
    assert_no_secret(outcome)
