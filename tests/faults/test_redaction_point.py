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
    exception's words left the call unredacted. Now the text says *** where the key was, and
    every tool says a provider's exception the same way, naming the provider (web_search said
    only its words, web_fetch and summarize that the tool itself failed unexpectedly)."""
    write_config({"providers": [{"name": "boom", "type": "boom", "apiKey": SECRET}]})
    proc = pi_web_with(boom, "call", tool, json.dumps(args), "--json")
    out = json.loads(proc.stdout)
    assert out["isError"] is True
    assert PIECE not in proc.stdout + proc.stderr
    assert f"{tool} failed: boom failed unexpectedly: RuntimeError: boom ***" in (
        out["content"][0]["text"]
    )


def test_a_feed_summary_cut_at_500_characters_shows_no_piece_of_a_key(write_config, httpserver):
    """A feed entry's summary is cut at 500 characters; the key sat across the cut and 10 of
    its characters were left, which no later redaction could recognise."""
    out = _read_a_feed_whose_summary_is(write_config, httpserver, "a" * 490 + SECRET)
    assert PIECE not in out


@pytest.mark.parametrize("spelled", ["decimal", "hex"])
def test_a_key_spelled_with_entities_in_a_feed_summary_cut_at_500_shows_no_piece(
    write_config, httpserver, spelled
):
    """The body is redacted as it arrives, but a key written with character references
    (`&#115;k-...`) is whole only once the feed is decoded, and the summary was cut at 500
    characters right after: 10 characters of it were left. The worker now redacts the decoded
    summary before the cut."""
    form = "&#{};" if spelled == "decimal" else "&#x{:x};"
    encoded = "".join(form.format(ord(c)) for c in SECRET)
    out = _read_a_feed_whose_summary_is(write_config, httpserver, "a" * 490 + encoded)
    assert SECRET[:8] not in out


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


#: A key as some services issue them (base64-like): a URL spells it with escapes.
ENCODED_KEY = "AbC+dEf/GhI=jKl9876543"


@pytest.fixture
def leaky(tmp_path):
    """An installed third-party provider type `leaky` whose search logs its key through its own
    logger, warns with it, and fails as ``requests``' ``raise_for_status`` does for a key sent
    as a query parameter: quoting the URL, the key percent-encoded in it."""
    root = tmp_path / "site"
    root.mkdir()
    plugin_module(
        root,
        "leaky_provider",
        """
        import logging, warnings
        from urllib.parse import urlencode
        from pi_web_tools import ApiKey, ProviderType, Search, hookimpl

        class Leaky:
            def __init__(self, config):
                self.key = config.api_key

            def search(self, request, ctx):
                logging.getLogger("leaky").warning("asking with key %s", self.key)
                warnings.warn("deprecated key " + self.key)
                raise RuntimeError(
                    "403 Client Error: Forbidden for url: https://api.leaky.test/search?"
                    + urlencode({"key": self.key, "q": request.query})
                )

        @hookimpl
        def register_provider_types(register):
            register(ProviderType(name="leaky", factory=Leaky, search=Search(), key=ApiKey()))
        """,
    )
    declare(root, "leaky_provider-1.0", "pi_web_tools.providers", "leaky", "leaky_provider")
    return root


def test_a_key_in_any_spelling_or_log_line_of_a_provider_never_leaves(leaky, write_config):
    """A third-party provider's error quoted its URL with the key percent-encoded
    (`?key=AbC%2BdEf...`), and its own logger and warnings printed the key whole on stderr:
    neither spelling nor path passed the redaction point."""
    from urllib.parse import quote, quote_plus

    write_config({"providers": [{"name": "leaky", "type": "leaky", "apiKey": ENCODED_KEY}]})
    proc = pi_web_with(leaky, "call", "web_search", json.dumps({"queries": ["q"]}), "--json")
    out = json.loads(proc.stdout)
    assert out["isError"] is True
    assert "for url: https://api.leaky.test/search?key=***&q=q" in out["content"][0]["text"]
    for spelling in (ENCODED_KEY, quote(ENCODED_KEY, safe=""), quote_plus(ENCODED_KEY)):
        assert spelling not in proc.stdout + proc.stderr
    assert "asking with key ***" in proc.stderr
    assert "deprecated key ***" in proc.stderr


def _read_a_feed_whose_summary_is(write_config, httpserver, start: str) -> str:
    """`pi-web fetch` of an RSS feed whose one entry's summary begins with *start*: its output."""
    summary = start + " and more words after it"
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
    return proc.stdout


@pytest.fixture
def base_boom(tmp_path):
    """An installed provider type `baseboom` whose search raises the BaseException its name
    says in ``BOOM_KIND`` (a SystemExit, or a subclass of BaseException), quoting its key."""
    root = tmp_path / "site"
    root.mkdir()
    plugin_module(
        root,
        "base_boom_provider",
        """
        import os
        from pi_web_tools import ApiKey, ProviderType, Search, hookimpl

        class Abort(BaseException):
            pass

        class BaseBoom:
            def __init__(self, config):
                self.key = config.api_key

            def search(self, request, ctx):
                kind = SystemExit if os.environ["BOOM_KIND"] == "SystemExit" else Abort
                raise kind(f"stopped {self.key}")

        @hookimpl
        def register_provider_types(register):
            register(ProviderType(name="baseboom", factory=BaseBoom, search=Search(), key=ApiKey()))
        """,
    )
    declare(root, "base_boom-1.0", "pi_web_tools.providers", "baseboom", "base_boom_provider")
    return root


@pytest.mark.parametrize("kind", ["SystemExit", "Abort"])
def test_a_providers_base_exception_never_carries_the_key_out(base_boom, write_config, kind):
    """Only an Exception's words were redacted: a SystemExit or another BaseException went past
    the redaction point, and the host said `web_search failed unexpectedly: Abort: stopped
    <key>`."""
    write_config({"providers": [{"name": "b", "type": "baseboom", "apiKey": SECRET}]})
    args = json.dumps({"queries": ["q"]})
    proc = pi_web_with(base_boom, "call", "web_search", args, "--json", env={"BOOM_KIND": kind})
    out = json.loads(proc.stdout)
    assert out["isError"] is True
    assert PIECE not in proc.stdout + proc.stderr
    assert out["content"][0]["text"] == f"web_search failed unexpectedly: {kind}: stopped ***"
