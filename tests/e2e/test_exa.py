"""End to end: `pi-web` against a loopback Exa as it is in late 2026 (search types, notices and
warnings, maxAgeHours, highlights, summaries), configured through baseUrl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeExa

PI_WEB = str(Path(sys.executable).parent / "pi-web")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KAGI_API_KEY"}
    env["NO_COLOR"] = "1"
    return subprocess.run([PI_WEB, *args], capture_output=True, text=True, env=env, timeout=60)


def _call(tool: str, args: dict) -> tuple[int, dict]:
    proc = _run("call", tool, json.dumps(args), "--json")
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture
def exa(write_config):
    with FakeExa(SECRET) as fake:
        fake.configure = lambda **options: write_config(
            {
                "providers": [
                    {
                        "name": "exa",
                        "type": "exa",
                        "apiKey": SECRET,
                        "options": {"baseUrl": fake.base_url, **options},
                    }
                ]
            }
        )
        fake.configure()
        yield fake


def test_search_type_defaults_to_auto_and_follows_the_option(exa):
    """ "type" is auto unless searchType says lite or deep; search stays metadata only."""
    _call("web_search", {"queries": ["a"]})
    exa.configure(searchType="deep")
    _call("web_search", {"queries": ["b"]})
    assert [r["json"]["type"] for r in exa.requests] == ["auto", "deep"]
    assert all("contents" not in r["json"] for r in exa.requests)


def test_notices_are_shown_under_the_query_and_warnings_go_to_details(exa):
    """Exa's notices reach the model as a note line; its warnings only the details."""
    exa.configure(searchType="lite")
    status, result = _call(
        "web_search", {"queries": ["site:nowhere.example rust"], "category": "news"}
    )
    assert status == 0
    text = result["content"][0]["text"]
    assert (
        "Note: The site: operator in the query matched no domain; use includeDomains to filter "
        "by domain." in text
    )
    assert "category has no effect" not in text
    assert result["details"]["perQuery"][0]["warnings"] == ["category has no effect with type lite"]


def test_search_highlights_fill_the_snippet_line(exa):
    """With searchHighlights, the search asks for highlights and the snippet line shows them."""
    exa.configure(searchHighlights=True)
    status, result = _call("web_search", {"queries": ["rust"]})
    assert status == 0
    assert exa.requests[-1]["json"]["contents"] == {"highlights": True}
    assert (
        "1. rust 1\n   https://exa.example/1\n   Highlight 1 of rust"
        in result["content"][0]["text"]
    )


def test_max_age_hours_is_sent_without_livecrawl_and_warnings_reach_details(exa):
    """maxAgeHours goes to /contents (never with livecrawl, which Exa answers with 400); the
    answer's warnings are in the details."""
    exa.configure(maxAgeHours=-1)
    status, result = _call("web_fetch", {"urls": ["https://a.example/p"]})
    assert status == 0, result
    body = exa.requests[-1]["json"]
    assert body["maxAgeHours"] == -1 and "livecrawl" not in body
    assert result["details"]["apiWarnings"] == ["maxAgeHours -1: only cached pages were returned"]


def test_an_exa_only_file_summarizes(exa):
    """summarize with only Exa configured: /contents with summary.query built from the summary
    type and target language; details keep url and summaryType (Exa tells no token count)."""
    status, result = _call(
        "summarize",
        {"url": "https://a.example/p", "summary_type": "takeaway", "target_language": "de"},
    )
    assert status == 0, result
    query = exa.requests[-1]["json"]["summary"]["query"]
    assert "bulleted list" in query and "Write it in German" in query
    assert result["content"][0]["text"].startswith("Summary of https://a.example/p for: ")
    assert result["details"]["url"] == "https://a.example/p"
    assert result["details"]["summaryType"] == "takeaway"
    assert result["details"]["tokens"] is None


def test_a_kagi_engine_is_refused_by_exa_naming_who_accepts_it(exa):
    """engine is Kagi's: asked of Exa it is refused before any request, naming kagi."""
    status, result = _call("summarize", {"url": "https://a.example/p", "engine": "agnes"})
    assert status == 1
    text = result["content"][0]["text"]
    assert "'agnes' is not an engine of provider 'exa' (exa), which takes no engine" in text
    assert "provider types that accept it: kagi" in text
    assert exa.requests == []


def test_a_failed_summary_names_exa_s_tag(exa):
    """A URL Exa cannot read is a clean error with its tag and status."""
    status, result = _call("summarize", {"url": "https://a.example/missing"})
    assert status == 1
    assert result["content"][0]["text"] == (
        "summarize failed: Exa: could not summarize https://a.example/missing: "
        "CRAWL_NOT_FOUND (HTTP 404)"
    )


def test_the_fake_refuses_livecrawl_with_max_age_hours_as_exa_does(exa):
    """The fake is faithful: livecrawl with maxAgeHours is a 400 INVALID_REQUEST, so the
    provider's request above (maxAgeHours alone) passing means it never sends both."""
    import requests

    answer = requests.post(
        f"{exa.base_url}/contents",
        json={"urls": ["https://a.example/"], "livecrawl": "always", "maxAgeHours": 0},
        headers={"x-api-key": SECRET},
        timeout=10,
    )
    assert answer.status_code == 400 and answer.json()["tag"] == "INVALID_REQUEST"
