"""Every message that leaves a tool call passes the one redaction point, whatever raised it
(issue 28, item 4), and keys are redacted before every cut, so no piece of one survives
(item 9): driven through pi-web, with a third-party provider installed as pip would."""

from __future__ import annotations

import json

import pytest

from tests.support import SECRET, serve
from tests.support.plugins import declare, pi_web_with, plugin_module

#: A key piece long enough to recognise (the sentinel's first ten characters).
PIECE = SECRET[:10]


@pytest.fixture
def boom(tmp_path):
    """An installed third-party provider type `boom` (search, fetch and summarize, with a key)
    whose every call raises a RuntimeError quoting its key."""
    root = tmp_path / "site"
    root.mkdir()
    plugin_module(
        root,
        "boom_provider",
        """
        from pi_web_tools import ApiKey, Fetch, ProviderType, Search, Summarize, hookimpl

        class Boom:
            def __init__(self, config):
                self.name = config.name
                self.key = config.api_key

            def search(self, request, ctx):
                raise RuntimeError(f"boom {self.key}")

            fetch = summarize = search

        @hookimpl
        def register_provider_types(register):
            register(
                ProviderType(
                    name="boom", factory=Boom, search=Search(), fetch=Fetch(),
                    summarize=Summarize(), key=ApiKey(),
                )
            )
        """,
    )
    declare(root, "boom_provider-1.0", "pi_web_tools.providers", "boom", "boom_provider")
    return root


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("web_fetch", {"urls": ["https://93.184.216.34/a"]}),
        ("web_search", {"queries": ["q"]}),
        ("summarize", {"url": "https://93.184.216.34/a"}),
    ],
)
def test_a_third_party_providers_exception_never_carries_the_key_out(
    boom, write_config, tool, args
):
    """web_fetch used to answer 'failed unexpectedly: RuntimeError: boom <key>': the
    exception's words left the call unredacted. Now the text says *** where the key was."""
    write_config({"providers": [{"name": "boom", "type": "boom", "apiKey": SECRET}]})
    proc = pi_web_with(boom, "call", tool, json.dumps(args), "--json")
    out = json.loads(proc.stdout)
    assert out["isError"] is True
    assert PIECE not in proc.stdout + proc.stderr
    assert "boom ***" in out["content"][0]["text"]


def test_a_feed_summary_cut_at_500_characters_shows_no_piece_of_a_key(write_config, httpserver):
    """A feed entry's summary is cut at 500 characters; the key sat across the cut and 10 of
    its characters were left, which no later redaction could recognise."""
    summary = "a" * 490 + SECRET + " and more words after it"
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Notes</title><item>'
        f"<title>One</title><link>https://ex.test/1</link><description>{summary}</description>"
        "</item></channel></rss>"
    )
    url = serve(httpserver, {"/feed": (200, "application/rss+xml", feed)}) + "/feed"
    write_config(_direct_and_a_key())
    proc = pi_web_with(None, "fetch", url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1. One" in proc.stdout
    assert PIECE not in proc.stdout


def test_the_max_bytes_cut_of_a_body_shows_no_piece_of_a_key(write_config, httpserver):
    """A body cut at maxBytes with the key across the cut left 10 characters of it."""
    body = "b" * (2000 - 10) + SECRET + "c" * 500
    url = serve(httpserver, {"/big.txt": (200, "text/plain", body)}) + "/big.txt"
    write_config(_direct_and_a_key(maxBytes=2000))
    proc = pi_web_with(None, "fetch", url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Stopped reading after" in proc.stdout
    assert PIECE not in proc.stdout


def _direct_and_a_key(**direct_options) -> dict:
    """The direct fetcher (allowed onto loopback) and a Kagi entry whose key is the sentinel
    (so redaction knows it)."""
    return {
        "defaultProvider": "kagi",
        "providers": [
            {"name": "kagi", "type": "kagi", "apiKey": SECRET},
            {
                "name": "local",
                "type": "direct",
                "options": {"allowPrivateNetwork": True, **direct_options},
            },
        ],
    }
