"""The acceptance criteria of the Exa web_search / web_fetch design (seed 002), one test each."""

from __future__ import annotations

import json

import pytest
import responses
from pi_hostspec import Host, get_plugin_manager
from responses import matchers

EXA = "https://api.exa.ai"
LITERAL_KEY = "exa_literal_key_from_file_9f8e"
SEED_CONFIG = {
    "defaultProvider": "exa-main",
    "providers": [
        {
            "name": "exa-main",
            "type": "exa",
            "apiKey": LITERAL_KEY,
            "options": {"defaultSearchLimit": 5, "defaultFetchTextMaxCharacters": 12000},
        }
    ],
}
SEARCH_BODY = {
    "requestId": "a3c1f0d9e8b74c2a9f1e0b6d5c4a3b21",
    "resolvedSearchType": "neural",
    "results": [
        {
            "id": "https://example-startup.com",
            "url": "https://example-startup.com",
            "title": "Example AI Startup",
            "publishedDate": "2024-01-15",
            "author": "John Doe",
        },
        {
            "id": "https://arxiv.org/abs/2307.06435",
            "url": "https://arxiv.org/pdf/2307.06435.pdf",
            "title": "A Comprehensive Overview of Large Language Models",
            "publishedDate": "2023-11-16T01:36:32.547Z",
            "author": "Humza Naveed",
            "score": 0.3872,
        },
    ],
    "costDollars": {"total": 0.005},
}


@pytest.fixture
def exa(write_config):
    write_config(SEED_CONFIG)
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def test_pi_discovers_the_extension_package():
    """The installed package is discovered through its pi.plugins entry point."""
    host = Host(get_plugin_manager())
    assert {"web_search", "web_fetch"} <= set(host.tools)
    assert host.tools["web_search"].plugin_name == "web_tools"


def test_agent_has_two_generic_tools(host):
    """The tools are named web_search and web_fetch, not after a provider."""
    assert {"web_search", "web_fetch"} <= set(host.tools)
    assert not any("exa" in name for name in host.tools)


def test_implementation_uses_an_internal_provider_abstraction(exa):
    """Tools reach Exa only through the registry and the provider interface."""
    from pi_web_tools.api.types import FetchRequest, SearchRequest
    from pi_web_tools.runtime.registry import resolve_provider

    selection = resolve_provider("search")
    provider, chosen = selection.provider, selection.entry
    assert chosen.type == "exa" and callable(provider.search) and callable(provider.fetch)
    exa.post(f"{EXA}/search", json=SEARCH_BODY)
    assert provider.search(SearchRequest(query="x"), None).hits[0].title == "Example AI Startup"
    exa.post(f"{EXA}/contents", json={"results": [], "statuses": []})
    assert provider.fetch(FetchRequest(urls=("https://a.example/",)), None).pages[0].ok is False


def test_exa_is_the_first_working_provider(host, exa):
    """web_search works end to end through Exa."""
    exa.post(f"{EXA}/search", json=SEARCH_BODY)
    result = host.call("web_search", {"queries": ["AI startups"]})
    assert not result.is_error and result.details["providerType"] == "exa"


def test_runtime_reads_global_config_from_home(monkeypatch, tmp_path, host):
    """The config is read from ~/.pi/agent/web-search.json at call time."""
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    target = tmp_path / "home" / ".pi" / "agent" / "web-search.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(SEED_CONFIG))
    target.chmod(0o600)
    with responses.RequestsMock() as rsps:
        rsps.post(f"{EXA}/search", json=SEARCH_BODY)
        assert host.call("web_search", {"queries": ["x"]}).details["provider"] == "exa-main"


def test_config_uses_provider_list_with_default_selector(host, write_config):
    """defaultProvider selects among a list of providers."""
    config = {
        "defaultProvider": "second",
        "providers": [
            {"name": "first", "type": "exa", "apiKey": "k1"},
            {"name": "second", "type": "exa", "apiKey": "k2"},
        ],
    }
    write_config(config)
    with responses.RequestsMock() as rsps:
        rsps.post(
            f"{EXA}/search", json=SEARCH_BODY, match=[matchers.header_matcher({"x-api-key": "k2"})]
        )
        assert host.call("web_search", {"queries": ["x"]}).details["provider"] == "second"


def test_credentials_are_literal_values_from_the_file(host, exa, monkeypatch):
    """The key sent is the literal apiKey from the file; EXA_API_KEY in the environment is not read."""
    monkeypatch.setenv("EXA_API_KEY", "env-key-must-not-be-used")
    exa.post(
        f"{EXA}/search",
        json=SEARCH_BODY,
        match=[matchers.header_matcher({"x-api-key": LITERAL_KEY})],
    )
    assert not host.call("web_search", {"queries": ["x"]}).is_error


def test_web_search_returns_metadata_only_by_default(host, exa):
    """No contents are requested; title, URL, date, author and score are shown."""
    exa.post(
        f"{EXA}/search",
        json=SEARCH_BODY,
        match=[
            matchers.json_params_matcher({"query": "AI startups", "type": "auto", "numResults": 5})
        ],
    )
    text = host.call("web_search", {"queries": ["AI startups"]}).text
    assert text == (
        "1. Example AI Startup\n   https://example-startup.com\n   Published: 2024-01-15 · Author: John Doe\n\n"
        "2. A Comprehensive Overview of Large Language Models\n   https://arxiv.org/pdf/2307.06435.pdf\n"
        "   Published: 2023-11-16 · Author: Humza Naveed · Score: 0.387"
    )


def test_web_search_filters_are_sent_camel_case(host, exa):
    """includeDomains, excludeDomains, dates and category reach Exa in camelCase."""
    exa.post(
        f"{EXA}/search",
        json=SEARCH_BODY,
        match=[
            matchers.json_params_matcher(
                {
                    "query": "llm",
                    "type": "auto",
                    "numResults": 3,
                    "includeDomains": ["arxiv.org"],
                    "excludeDomains": ["reddit.com"],
                    "startPublishedDate": "2025-01-01",
                    "endPublishedDate": "2025-12-31",
                    "category": "research paper",
                }
            )
        ],
    )
    result = host.call(
        "web_search",
        {
            "queries": ["llm"],
            "limit": 3,
            "include_domains": ["arxiv.org"],
            "exclude_domains": ["reddit.com"],
            "start_published_date": "2025-01-01",
            "end_published_date": "2025-12-31",
            "category": "research paper",
        },
    )
    assert not result.is_error


def test_web_fetch_accepts_one_or_multiple_urls_and_returns_text_by_default(host, exa):
    """One URL or several; text (12000 characters by default) is requested when no mode is given."""
    body = {
        "results": [
            {
                "id": "https://a.example/",
                "url": "https://a.example/",
                "title": "A",
                "text": "Text of A",
            }
        ],
        "statuses": [{"id": "https://a.example/", "status": "success"}],
    }
    exa.post(
        f"{EXA}/contents",
        json=body,
        match=[
            matchers.json_params_matcher(
                {"urls": ["https://a.example/"], "text": {"maxCharacters": 12000}}
            )
        ],
    )
    assert "Text of A" in host.call("web_fetch", {"urls": ["https://a.example/"]}).text
    two = {
        "results": [
            {"id": u, "url": u, "title": u[8], "text": f"Text {u[8]}"}
            for u in ("https://a.example/", "https://b.example/")
        ],
        "statuses": [
            {"id": u, "status": "success"} for u in ("https://a.example/", "https://b.example/")
        ],
    }
    exa.post(
        f"{EXA}/contents",
        json=two,
        match=[
            matchers.json_params_matcher(
                {
                    "urls": ["https://a.example/", "https://b.example/"],
                    "text": {"maxCharacters": 12000},
                }
            )
        ],
    )
    urls = ["https://a.example/", "https://b.example/"]
    result = host.call("web_fetch", {"urls": urls, "fresh": True})  # a.example/ is cached
    assert result.details["fetched"] == 2 and result.text.index("Text a") < result.text.index(
        "Text b"
    )


def test_missing_config_is_a_clean_actionable_error(host):
    """With no config (and no Kagi key) search says where the file belongs and shows an example."""
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error and "web-search.json" in result.text and '"providers"' in result.text


def test_invalid_config_is_a_clean_actionable_error(host, write_config):
    """An invalid file names the exact problem, the file and a valid example."""
    path = write_config(
        {
            "providers": [
                {
                    "name": "exa-main",
                    "type": "exa",
                    "apiKey": "k",
                    "options": {"defaultSearchLimit": "five"},
                }
            ]
        }
    )
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error
    assert str(path) in result.text and "defaultSearchLimit: expected an integer" in result.text


def test_provider_failures_are_clean_actionable_errors(host, exa):
    """An Exa auth failure names the status and tag, with no key and no traceback."""
    exa.post(
        f"{EXA}/search",
        status=401,
        json={"requestId": "2e27", "error": "Invalid API key", "tag": "INVALID_API_KEY"},
    )
    result = host.call("web_search", {"queries": ["x"]})
    assert result.is_error and "HTTP 401" in result.text and "INVALID_API_KEY" in result.text
    assert LITERAL_KEY not in result.text and "Traceback" not in result.text


def test_empty_query_is_rejected_before_any_request(host, exa):
    """An empty search query never reaches Exa."""
    assert host.call("web_search", {"queries": [""]}).is_error
