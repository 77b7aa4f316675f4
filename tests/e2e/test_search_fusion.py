"""End to end: fused and multi-query web_search through `pi-web`, against loopback fakes of
Kagi, Brave and SearXNG configured through baseUrl."""

from __future__ import annotations

import json

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeBrave, FakeKagi, FakeSearxng
from tests.support.hosts import pi_web, pi_web_call

pytestmark = pytest.mark.slow


def searx_results(q: str) -> list[dict]:
    """Brave's first result (another form of its URL), one of SearXNG's own, and Kagi's second."""
    slug = q.replace(" ", "-")
    return [
        {
            "url": "https://www.brave.example/1/",
            "title": "Brave one, as SearXNG saw it",
            "content": "c",
        },
        {"url": f"https://searx.example/{slug}", "title": f"SearXNG only: {q}", "content": "c"},
        {
            "url": f"https://results.example/{slug}/2?utm_source=searx",
            "title": "Kagi two",
            "content": "c",
        },
    ]


@pytest.fixture
def three(write_config):
    """Kagi (v1), Brave and SearXNG, in that order, all configured."""
    with (
        FakeKagi(SECRET) as kagi,
        FakeBrave(SECRET) as brave,
        FakeSearxng(results=searx_results) as searx,
    ):
        write_config(
            {
                "providers": [
                    {
                        "name": "kagi",
                        "type": "kagi",
                        "apiKey": SECRET,
                        "options": {"baseUrl": kagi.base_url},
                    },
                    {
                        "name": "brave",
                        "type": "brave",
                        "apiKey": SECRET,
                        "options": {"baseUrl": brave.base_url},
                    },
                    {
                        "name": "searx",
                        "type": "searxng",
                        "options": {"baseUrl": searx.base_url, "allowPrivateNetwork": True},
                    },
                ]
            }
        )
        yield kagi, brave, searx


def call(args: dict) -> dict:
    result = pi_web_call("web_search", args)
    assert SECRET not in json.dumps(result)
    return result


def test_all_sends_each_query_to_every_provider_and_lists_agreement_first(three):
    kagi, brave, searx = three
    result = call({"queries": ["rust"], "provider": "all"})
    assert result["isError"] is False, result
    text = result["content"][0]["text"]
    # Found by two providers (Brave's first URL, SearXNG's in another form): first.
    assert text.startswith(
        "1. rust — result 1\n   https://brave.example/1\n   About rust & more (1) … Extra 1\n"
        "   Published: 2026-02-01\n   Found by: brave, searx\n\n"
    )
    second = text.split("\n\n")[1]
    assert "https://results.example/rust/2" in second and second.endswith("Found by: kagi, searx")
    assert "https://searx.example/rust\n" in text and "Found by: searx" in text
    assert len(kagi.searches()) == len(brave.requests) == len(searx.requests) == 1
    assert result["details"]["fusion"] == {
        "providers": ["kagi", "brave", "searx"],
        "callsPerQuery": 3,
    }


def test_a_failing_provider_is_named_and_the_others_kept(three):
    kagi, _, _ = three
    kagi.fail = (402, "billing.insufficient_credit", "Insufficient credit")
    result = call({"queries": ["rust"], "provider": "all"})
    assert result["isError"] is False
    text = result["content"][0]["text"]
    assert (
        "Note: kagi failed: Kagi: HTTP 402 Payment Required: Insufficient credit (code "
        "billing.insufficient_credit); trace trace-5f0e7c3a; results from brave, searx\n"
    ) in text
    assert "results.example/rust/2" in text  # SearXNG still found it
    assert result["details"]["perQuery"][0]["providers"]["kagi"]["error"].startswith(
        "Kagi: HTTP 402"
    )


def test_a_list_of_names_fuses_only_those(three):
    kagi, brave, searx = three
    result = call({"queries": ["rust"], "provider": ["searx", "kagi"]})
    assert result["isError"] is False
    assert brave.requests == []
    assert len(kagi.searches()) == len(searx.requests) == 1
    assert result["details"]["fusion"]["providers"] == ["searx", "kagi"]


def test_a_plain_multi_query_call_lists_a_repeated_url_once(three):
    """Two queries whose results share a URL: listed once, under the first, naming the second."""
    _, _, searx = three
    searx.results = lambda q: [
        {"url": "https://shared.example/guide", "title": "The guide", "content": "c"},
        {"url": f"https://own.example/{q.replace(' ', '-')}", "title": f"Own {q}", "content": "c"},
    ]
    result = call({"queries": ["tokio", "async rust"], "provider": "searx"})
    text = result["content"][0]["text"]
    assert text.count("https://shared.example/guide") == 1
    assert (
        '1. The guide\n   https://shared.example/guide\n   c\n   Also found for: "async rust"'
        in text
    )
    assert 'Query: "async rust"\n3. Own async rust' in text
    assert result["details"]["perQuery"][1]["listedAbove"] == 1
    assert result["details"]["totalResults"] == 3


def test_pi_web_search_takes_comma_separated_providers(three):
    kagi, brave, searx = three
    proc = pi_web("search", "--provider", "searx,brave", "rust")
    assert proc.returncode == 0, proc.stderr
    # Both first: the tie goes to the provider named first, whose copy is shown.
    assert proc.stdout.startswith(
        "1. Brave one, as SearXNG saw it\n   https://www.brave.example/1/\n"
        "   About rust & more (1) … Extra 1\n   Published: 2026-02-01\n"
        "   Found by: searx, brave\n"
    )
    assert kagi.searches() == [] and len(brave.requests) == len(searx.requests) == 1
