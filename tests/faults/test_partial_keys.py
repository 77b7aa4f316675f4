"""No part of a key shows where text is shortened: keys are redacted first, then text is cut
(error snippets, invalid-JSON snippets, page titles, quoted URLs)."""

from __future__ import annotations

import json

import pytest

from tests.support import SECRET
from tests.support.fault_server import Reply

from .cases import DIRECT_FETCH, KAGI_SEARCH, kagi_config


def assert_no_key_fragment(outcome) -> None:
    """Not even part of the key in the text, details or views."""
    everything = outcome.text + json.dumps(outcome.result.details) + "".join(outcome.views)
    found = [piece for piece in _key_pieces() if piece in everything]
    assert not found, f"parts of the key leaked: {found}"


def _key_pieces(size: int = 6) -> list[str]:
    return [SECRET[i : i + size] for i in range(len(SECRET) - size + 1)]


@pytest.mark.parametrize("prefix", [190, 185, 180])
@pytest.mark.parametrize("spelled", ["plain", "entity"])
def test_error_snippet_never_shows_part_of_a_key(prefix, spelled, server, tools, write_config):
    """A 500 page whose text puts the key across the 200-character cut shows none of it."""
    key = SECRET if spelled == "plain" else SECRET.replace("-", "&#45;")
    page = f"<html><body><p>{'e' * prefix} {key} tail</p></body></html>"
    server.script(Reply(500, page, content_type="text/html"))
    write_config(kagi_config(server))
    outcome = tools.call(KAGI_SEARCH.tool, KAGI_SEARCH.args(server))
    assert outcome.result.is_error
    assert_no_key_fragment(outcome)


@pytest.mark.parametrize("prefix", [100, 105, 110])
def test_invalid_json_snippet_never_shows_part_of_a_key(prefix, server, tools, write_config):
    """A 200 that is not JSON, with the key across the 120-character cut, shows none of it."""
    server.script(Reply(200, f"{'j' * prefix} {SECRET} tail", content_type="text/plain"))
    write_config(kagi_config(server))
    outcome = tools.call(KAGI_SEARCH.tool, KAGI_SEARCH.args(server))
    assert outcome.result.is_error and "not valid JSON" in outcome.text
    assert_no_key_fragment(outcome)


@pytest.mark.parametrize("prefix", [190, 110, 60])
def test_page_title_never_shows_part_of_a_key(prefix, server, tools, write_config):
    """A page title with the key across any cut (details, heading, views) shows none of it."""
    page = f"<html><head><title>{'t' * prefix} {SECRET} tail</title></head><body><p>x</p></body></html>"
    server.script(Reply(200, page, content_type="text/html"))
    write_config(DIRECT_FETCH.config(server))
    outcome = tools.call("web_fetch", {"urls": [server.url("/page")]})
    assert not outcome.result.is_error
    assert_no_key_fragment(outcome)


def test_a_refused_url_never_shows_part_of_a_key(server, tools, write_config):
    """An invalid URL quoted in the error (cut at 120 characters) shows none of the key."""
    write_config(DIRECT_FETCH.config(server))
    url = "ftp://example.com/" + "u" * 95 + "?key=" + SECRET
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert outcome.result.is_error
    assert_no_key_fragment(outcome)
