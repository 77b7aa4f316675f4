"""End to end: the installed `pi-web` CLI against a loopback Tavily, configured through baseUrl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeTavily

PI_WEB = str(Path(sys.executable).parent / "pi-web")


@pytest.fixture
def tavily(write_config):
    with FakeTavily(SECRET) as fake:
        entry = {
            "name": "tav",
            "type": "tavily",
            "apiKey": SECRET,
            "options": {"baseUrl": fake.base_url},
        }
        write_config({"providers": [entry]})
        yield fake


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def test_search_with_only_a_tavily_key(tavily):
    """`pi-web search` answers from Tavily with snippets and scores."""
    proc = _run("search", "llm agents")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith(
        "1. llm agents 1\n   https://tavily.example/1\n   Content about llm agents (1)\n   Score: 0.800\n"
    )
    assert tavily.requests[0]["json"] == {
        "query": "llm agents",
        "max_results": 5,
        "include_answer": False,
    }
    assert SECRET not in proc.stdout + proc.stderr


def test_fetch_with_only_a_tavily_key_uses_tavily(tavily):
    """`pi-web fetch` goes to Tavily's /extract (not the direct fetcher); failures stay per URL."""
    proc = _run(
        "call",
        "web_fetch",
        json.dumps({"urls": ["https://a.example/doc", "https://b.example/missing"]}),
        "--json",
    )
    result = json.loads(proc.stdout)
    assert result["isError"] is False
    assert result["details"]["providerType"] == "tavily"
    text = result["content"][0]["text"]
    assert "# Page\n\nText of https://a.example/doc" in text
    assert "Error: Failed to fetch url" in text
    assert [r["path"] for r in tavily.requests] == ["/extract"]
    assert tavily.requests[0]["json"]["urls"] == [
        "https://a.example/doc",
        "https://b.example/missing",
    ]


def test_date_filters_are_sent_natively(tavily):
    """Dates and domains go in Tavily's own fields."""
    args = {
        "queries": ["q"],
        "limit": 2,
        "include_domains": ["arxiv.org"],
        "start_published_date": "2025-05-01",
    }
    proc = _run("call", "web_search", json.dumps(args), "--json")
    assert json.loads(proc.stdout)["isError"] is False
    assert tavily.requests[0]["json"] == {
        "query": "q",
        "max_results": 2,
        "include_answer": False,
        "include_domains": ["arxiv.org"],
        "start_date": "2025-05-01",
    }
