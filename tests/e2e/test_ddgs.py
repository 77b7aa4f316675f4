"""End to end: `pi-web` (in process) with only a ddgs entry, the library's search mocked."""

from __future__ import annotations

import json

import pytest
from ddgs import ddgs as library
from ddgs import exceptions
from pi_hostspec.cli import main

RESULTS = [
    {"title": "Python 3.14 released", "href": "https://python.example/3.14", "body": "What's new."},
]


@pytest.fixture
def free(write_config):
    write_config({"providers": [{"name": "free", "type": "ddgs"}]})


def test_search_with_only_a_ddgs_entry(free, monkeypatch, capsys):
    """`pi-web search` answers from the first backend that has results and names it."""

    def text(self, query, backend, **kwargs):
        if backend == "duckduckgo":
            raise exceptions.DDGSException("No results found.")
        return RESULTS

    monkeypatch.setattr(library.DDGS, "text", text)
    assert main(["call", "web_search", '{"queries": ["python 3.14"]}', "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["content"][0]["text"] == (
        "1. Python 3.14 released\n   https://python.example/3.14\n   What's new.\n\n"
        "Note: Keyless results from the brave backend (ddgs library)."
    )
    assert result["details"]["providerType"] == "ddgs"
    assert result["details"]["perQuery"][0]["notices"] == [
        "Keyless results from the brave backend (ddgs library)."
    ]


def test_blocked_everywhere_is_one_clean_error(free, monkeypatch, capsys):
    """Rate limits on every backend: exit 1 and a suggestion to configure a keyed provider."""

    def text(self, query, backend, **kwargs):
        raise exceptions.RatelimitException(f"{backend} 202 Ratelimit")

    monkeypatch.setattr(library.DDGS, "text", text)
    assert main(["search", "x"]) == 1
    out = capsys.readouterr().out
    assert "ddgs (free): the search engines refused the query" in out
    assert "configure a provider with an API key" in out and "Traceback" not in out


def test_config_says_no_key_is_needed(free, capsys):
    """`pi-web config` lists the keyless entry as needing no key."""
    assert main(["config"]) == 0
    assert "- free: type ddgs, can search, key not needed" in capsys.readouterr().out
