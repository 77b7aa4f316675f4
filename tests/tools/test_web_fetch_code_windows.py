"""A window of a page that starts or ends inside a code block shows the block's fences, so the
continuation line and the next page are never read as code; offsets count only the page's own
characters."""

from __future__ import annotations

import json
import re

import pytest

from tests.support import LOOPBACK_DIRECT

CODE = "".join(f"    step_{n}()  # one line of the example\n" for n in range(40))
MARKDOWN = f"# Setup\n\nRun the example:\n\n```python\n{CODE}```\n\nThen read the output.\n"
NEXT = re.compile(r"Next: web_fetch (\{.*\})\]$", re.M)


@pytest.fixture
def doc(httpserver, write_config):
    """A Markdown page on loopback with one long code block."""
    write_config(LOOPBACK_DIRECT)
    httpserver.expect_request("/doc.md").respond_with_data(
        MARKDOWN, content_type="text/markdown"
    )
    return httpserver.url_for("/doc.md")


def _window(host, url: str, offset: int = 0) -> tuple[str, dict | None]:
    """The text shown of one window (without its head and continuation line), and the call
    that reads on."""
    args = {"urls": [url], "text_max_characters": 400}
    if offset:
        args["offset"] = offset
    result = host.call("web_fetch", args)
    assert not result.is_error, result.text
    found = NEXT.search(result.text)
    body = result.text.split("\n\n", 1)[1].rsplit("\n\n[Showing", 1)[0]
    return body, json.loads(found.group(1)) if found else None


def test_a_window_that_ends_inside_a_code_block_closes_it(host, doc):
    shown, after = _window(host, doc)
    assert "```python" in shown
    assert shown.endswith("\n```"), shown[-80:]
    # the closing fence is shown only: the next offset counts the page's characters
    assert shown[: -len("\n```")] == MARKDOWN[: after["offset"]]


def test_the_next_window_reopens_the_block_it_starts_inside(host, doc):
    _, after = _window(host, doc)
    shown, _ = _window(host, doc, after["offset"])
    assert shown.startswith("```\n"), shown[:80]
    assert shown[len("```\n") :].startswith(MARKDOWN[after["offset"] : after["offset"] + 20])


def test_windows_read_in_turn_give_back_the_page_less_the_added_fences(host, doc):
    """Offsets are unchanged: each window, its shown fences taken off, is the page's text from
    its offset to the next, and the windows read in turn are the whole page."""
    read, offset = [], 0
    while True:
        shown, after = _window(host, doc, offset)
        end = after["offset"] if after else len(MARKDOWN)
        own = MARKDOWN[offset:end]
        assert shown in (own, f"```\n{own}", f"{own}\n```", f"```\n{own}\n```"), (offset, shown)
        read.append(own)
        if after is None:
            break
        offset = after["offset"]
    assert len(read) > 2 and "".join(read) == MARKDOWN


def test_a_window_outside_code_is_shown_as_it_is(host, doc):
    offset = MARKDOWN.index("Then read")
    shown, after = _window(host, doc, offset)
    assert after is None and shown == MARKDOWN[offset:]


def test_a_window_inside_a_quoted_code_block_closes_and_reopens_it_inside_the_quote(
    host, httpserver, write_config
):
    """The fences shown for a code block inside a block quote were bare (```` ```` ````): a bare
    fence ends the quote, so it opened a new block that swallowed the continuation line."""
    write_config(LOOPBACK_DIRECT)
    quoted = "".join(f"> step_{n}()  # one line of the example\n" for n in range(40))
    page = f"Intro.\n\n> ````python\n{quoted}> ````\n\nDone.\n"
    httpserver.expect_request("/quoted.md").respond_with_data(page, content_type="text/markdown")
    url = httpserver.url_for("/quoted.md")
    first, call = _window(host, url)
    assert first.endswith("\n> ````")
    second, _ = _window(host, url, call["offset"])
    assert second.startswith("> ````\n")
