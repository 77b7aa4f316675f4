"""End to end: `pi-web fetch` with the keyless direct fetcher and with Exa, over loopback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import SECRET
from tests.support.fake_apis import FakeExa

PI_WEB = str(Path(sys.executable).parent / "pi-web")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def test_pi_web_fetch_without_config_refuses_loopback(httpserver):
    """With no config at all the direct fetcher serves, and refuses a loopback address by default."""
    httpserver.expect_request("/a").respond_with_data("hello", content_type="text/plain")
    proc = _run("fetch", httpserver.url_for("/a"))
    assert proc.returncode == 1
    assert "allowPrivateNetwork" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_pi_web_fetch_two_urls_with_direct(httpserver, write_config):
    """`pi-web fetch URL1 URL2` prints one section per page (direct, private network allowed)."""
    write_config(
        {
            "providers": [
                {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}}
            ]
        }
    )
    httpserver.expect_request("/one").respond_with_data(
        "<html><head><title>One</title></head><body><article><p>"
        + "First page body text. " * 30
        + "</p></article></body></html>",
        content_type="text/html",
    )
    httpserver.expect_request("/two").respond_with_data("plain two", content_type="text/plain")
    proc = _run("fetch", httpserver.url_for("/one"), httpserver.url_for("/two"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("## [1/2] One\n")
    assert (
        "First page body text." in proc.stdout
        and "## [2/2] " in proc.stdout
        and "plain two" in proc.stdout
    )


def test_pi_web_fetch_with_exa(write_config):
    """With Exa configured, fetch goes to /contents and a failed URL is reported in place."""
    with FakeExa(SECRET) as exa:
        write_config(
            {
                "providers": [
                    {
                        "name": "exa",
                        "type": "exa",
                        "apiKey": SECRET,
                        "options": {"baseUrl": exa.base_url},
                    }
                ]
            }
        )
        proc = _run("fetch", "https://site.example/a", "https://site.example/missing")
        assert proc.returncode == 0, proc.stdout
        assert (
            "## [1/2] Page a\nURL: https://site.example/a\n\nText of https://site.example/a"
            in proc.stdout
        )
        assert (
            "## [2/2] https://site.example/missing (failed)" in proc.stdout
            and "CRAWL_NOT_FOUND (HTTP 404)" in proc.stdout
        )
        assert exa.requests[-1]["json"] == {
            "urls": ["https://site.example/a", "https://site.example/missing"],
            "text": {"maxCharacters": 100000},
        }
        assert SECRET not in proc.stdout + proc.stderr


def test_pi_web_search_with_exa_is_metadata_only(write_config):
    """`pi-web search` through Exa sends no contents and prints title, URL, date and author."""
    with FakeExa(SECRET) as exa:
        write_config(
            {
                "providers": [
                    {
                        "name": "exa",
                        "type": "exa",
                        "apiKey": SECRET,
                        "options": {"baseUrl": exa.base_url},
                    }
                ]
            }
        )
        proc = _run("search", "llm agents")
        assert proc.returncode == 0, proc.stdout
        assert proc.stdout.startswith(
            "1. llm agents 1\n   https://exa.example/1\n   Published: 2025-05-01 · Author: A. Writer\n"
        )
        assert exa.requests[-1]["json"] == {"query": "llm agents", "type": "auto", "numResults": 5}
