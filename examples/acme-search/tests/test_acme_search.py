"""Tests of the example provider plugin, with the pi-web-tools testing kit and `responses`."""

import pytest
import responses
from acme_search import ACME, DOCS
from pi_web_tools import ProviderError, SearchRequest, testing

KEY = "acme-test-key-0123456789"


def test_both_types_follow_the_provider_contract():
    testing.check_provider_type(ACME, options={"baseUrl": "https://acme.test/v1", "region": "eu"})
    testing.check_provider_type(DOCS)


@responses.activate
def test_search_maps_results_and_sends_the_key():
    responses.get(
        "https://acme.test/v1/search",
        json={"results": [{"title": "Hello", "url": "https://a.test/1", "summary": "first"}]},
    )
    provider = testing.check_provider_type(
        ACME, api_key=KEY, options={"baseUrl": "https://acme.test/v1"}
    )
    response = testing.call(provider, "search", SearchRequest(query="hello", limit=3))
    assert [hit.title for hit in response.hits] == ["Hello"]
    assert responses.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"
    assert "n=3" in responses.calls[0].request.url


@responses.activate
def test_api_errors_are_clean_and_never_show_the_key():
    responses.get("https://acme.test/v1/search", status=401, json={"message": f"bad key {KEY}"})
    provider = testing.check_provider_type(
        ACME, api_key=KEY, options={"baseUrl": "https://acme.test/v1"}
    )
    with pytest.raises(ProviderError) as info:
        provider.search(SearchRequest(query="x"), None)
    assert str(info.value) == "Acme (acme-check): HTTP 401 Unauthorized: bad key ***"


def test_docs_provider_searches_a_folder(tmp_path):
    (tmp_path / "a.md").write_text("# Async in Rust\nfutures and tasks")
    (tmp_path / "b.md").write_text("# Cooking\nrecipes")
    provider = testing.check_provider_type(DOCS, options={"root": str(tmp_path)})
    response = testing.call(provider, "search", SearchRequest(query="rust tasks"))
    assert [hit.title for hit in response.hits] == ["Async in Rust"]
