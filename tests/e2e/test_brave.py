"""End to end: the installed `pi-web` CLI against a loopback Brave, configured through baseUrl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeBrave

PI_WEB = str(Path(sys.executable).parent / "pi-web")


def brave_config(base_url: str, key: str = SECRET) -> dict:
    """A file holding only a Brave entry."""
    return {
        "providers": [
            {"name": "brave", "type": "brave", "apiKey": key, "options": {"baseUrl": base_url}}
        ]
    }


@pytest.fixture
def brave(write_config):
    with FakeBrave(SECRET) as fake:
        write_config(brave_config(fake.base_url))
        yield fake


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def test_search_with_only_a_brave_key(brave):
    """`pi-web search` answers from Brave: clean titles, snippets with extra snippets, dates."""
    proc = _run("search", "rust async")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(
        "1. rust async — result 1\n   https://brave.example/1\n"
        "   About rust async & more (1) … Extra 1\n   Published: 2026-02-01\n"
    )
    assert brave.requests[0]["query"] == {
        "q": "rust async",
        "count": "10",
        "extra_snippets": "true",
    }
    assert SECRET not in proc.stdout + proc.stderr


def test_filters_reach_brave_as_operators_and_freshness(brave):
    """Domain and date filters become site:/-site: and a freshness range."""
    args = {
        "queries": ["tokio"],
        "limit": 3,
        "include_domains": ["docs.rs"],
        "exclude_domains": ["reddit.com"],
        "start_published_date": "2025-01-01",
        "end_published_date": "2025-12-31",
    }
    proc = _run("call", "web_search", json.dumps(args), "--json")
    result = json.loads(proc.stdout)
    assert result["isError"] is False and result["details"]["providerType"] == "brave"
    assert brave.requests[0]["query"] == {
        "q": "tokio site:docs.rs -site:reddit.com",
        "count": "3",
        "freshness": "2025-01-01to2025-12-31",
        "extra_snippets": "true",
    }


def test_a_wrong_key_is_a_clean_401(brave, write_config):
    """A bad token: exit 1, Brave's words and code, no key anywhere."""
    write_config(brave_config(brave.base_url, key="wrong-brave-key-12345"))
    proc = _run("search", "x")
    assert proc.returncode == 1
    assert (
        "Brave: HTTP 401 Unauthorized: The provided subscription token is invalid. "
        "(code SUBSCRIPTION_TOKEN_INVALID)" in proc.stdout
    )
    assert "wrong-brave-key-12345" not in proc.stdout + proc.stderr


def test_config_shows_the_brave_provider(brave):
    """`pi-web config` lists the brave entry with its key redacted."""
    proc = _run("config")
    assert proc.returncode == 0
    assert "- brave: type brave, can search, key …" in proc.stdout
    assert "brave (search)" in proc.stdout and SECRET not in proc.stdout
