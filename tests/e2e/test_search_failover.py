"""End to end: search failover through `pi-web` and an MCP client, against loopback fakes of
Kagi, Brave and SearXNG. A query whose provider fails for a reason of its own (quota, rate
limit, authentication, timeout, an outage) is answered by the next; the answer says so in one
line."""

from __future__ import annotations

import json
import time

import pytest

from tests.support import SECRET
from tests.support.fake_apis import FakeBrave, FakeKagi, FakeSearxng
from tests.support.hosts import mcp_stdio_session, pi_web, pi_web_call, result_text, run_async

pytestmark = pytest.mark.slow

QUOTA = (402, "billing.insufficient_credit", "Insufficient credit")


def entry(name: str, kind: str, base_url: str, **options) -> dict:
    found = {"name": name, "type": kind, "options": {"baseUrl": base_url, **options}}
    if kind in ("kagi", "brave"):
        found["apiKey"] = SECRET
    return found


@pytest.fixture
def fakes():
    with FakeKagi(SECRET) as kagi, FakeBrave(SECRET) as brave, FakeSearxng() as searx:
        yield kagi, brave, searx


@pytest.fixture
def configure(write_config, fakes):
    """Write a file of the named providers (kagi, brave, searx), in that order, plus *top*."""
    kagi, brave, searx = fakes
    urls = {"kagi": kagi.base_url, "brave": brave.base_url, "searx": searx.base_url}
    kinds = {"kagi": "kagi", "brave": "brave", "searx": "searxng"}

    def write(*names: str, options: dict | None = None, **top) -> None:
        providers = [entry(n, kinds[n], urls[n], **(options or {}).get(n, {})) for n in names]
        for provider in providers:
            if provider["type"] == "searxng":
                provider["options"]["allowPrivateNetwork"] = True
        write_config({"providers": providers, **top})

    return write


def call(args: dict) -> dict:
    result = pi_web_call("web_search", args)
    assert SECRET not in json.dumps(result)
    return result


def test_an_exhausted_provider_hands_the_query_to_the_next(fakes, configure):
    kagi, brave, _ = fakes
    configure("kagi", "brave")
    kagi.fail = QUOTA
    result = call({"queries": ["rust"]})
    assert result["isError"] is False
    text = result["content"][0]["text"]
    assert text.startswith("1. rust — result 1\n   https://brave.example/1\n")
    assert text.endswith(
        "\n\nNote: answered by brave because kagi failed (quota): Kagi: HTTP 402 Payment Required: "
        "Insufficient credit (code billing.insufficient_credit); trace trace-5f0e7c3a"
    )
    [query] = result["details"]["perQuery"]
    assert query["provider"] == "brave"
    assert query["failedOver"] == [
        {
            "provider": "kagi",
            "kind": "quota",
            "error": "Kagi: HTTP 402 Payment Required: Insufficient credit (code "
            "billing.insufficient_credit); trace trace-5f0e7c3a",
        }
    ]
    assert result["details"]["searchFallback"] == ["kagi", "brave"]
    assert result["details"]["provider"] == "brave" and result["details"]["providerType"] == "brave"
    assert len(brave.requests) == 1


def test_a_429_fails_over_at_once_without_the_retries(fakes, configure):
    """With a next provider ready, the rate-limited one is not retried (0.5 s + 1 s of
    backoff): the next answers sooner."""
    kagi, brave, _ = fakes
    configure("kagi", "brave")
    kagi.fail = (429, "general.rate_limited", "Rate limited")
    start = time.monotonic()
    result = call({"queries": ["rust"]})
    assert result["isError"] is False
    assert (
        "answered by brave because kagi failed (rate limit): Kagi: HTTP 429"
        in (result["content"][0]["text"])
    )
    assert len(kagi.searches()) == 1 and len(brave.requests) == 1
    assert time.monotonic() - start < 10  # a generous bound: the retries alone take 1.5 s


def test_each_query_fails_over_on_its_own(fakes, configure):
    _, brave, searx = fakes
    configure("searx", "brave")
    searx.fail_for = {"down": 503}
    result = call({"queries": ["up", "down"]})
    assert result["isError"] is False
    up, down = result["details"]["perQuery"]
    assert "failedOver" not in up and up["count"] == 3
    assert down["provider"] == "brave" and down["failedOver"][0]["kind"] == "outage"
    assert result["details"]["provider"] == "searx, brave"
    assert [r["query"]["q"] for r in brave.requests] == ["down"]
    text = result["content"][0]["text"]
    assert 'Query: "up"\n1. up 1\n   https://searx.example/up/1' in text
    assert (
        "Note: answered by brave because searx failed (outage): SearXNG (searx): HTTP 503" in text
    )


def test_a_slow_provider_fails_over_at_its_timeout(fakes, configure):
    _, brave, searx = fakes
    searx.latency = 3
    configure("searx", "brave", options={"searx": {"timeoutSeconds": 1}})
    result = call({"queries": ["rust"]})
    assert result["isError"] is False
    assert result["details"]["perQuery"][0]["failedOver"][0]["kind"] == "timeout"
    assert len(brave.requests) == 1


def test_a_call_that_names_its_provider_never_fails_over(fakes, configure):
    kagi, brave, _ = fakes
    configure("kagi", "brave")
    kagi.fail = QUOTA
    result = call({"queries": ["rust"], "provider": "kagi"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("web_search failed: Kagi: HTTP 402")
    assert brave.requests == []


def test_a_bad_request_is_not_failed_over(fakes, configure):
    """A 400 is the request's fault: another provider would be asked the same thing."""
    kagi, brave, _ = fakes
    configure("kagi", "brave")
    kagi.fail = (400, "search.invalid", "Invalid query")
    result = call({"queries": ["rust"]})
    assert result["isError"] is True
    assert brave.requests == []


def test_search_fallback_false_turns_it_off(fakes, configure):
    kagi, brave, _ = fakes
    configure("kagi", "brave", searchFallback=False)
    kagi.fail = QUOTA
    result = call({"queries": ["rust"]})
    assert result["isError"] is True
    assert brave.requests == []


def test_search_fallback_sets_the_order(fakes, configure):
    kagi, brave, searx = fakes
    configure("kagi", "brave", "searx", searchFallback=["searx", "brave"])
    kagi.fail = QUOTA
    result = call({"queries": ["rust"]})
    assert result["details"]["perQuery"][0]["provider"] == "searx"
    assert brave.requests == [] and len(searx.requests) == 1
    assert result["details"]["searchFallback"] == ["kagi", "searx", "brave"]


def test_when_every_provider_fails_one_error_names_each(fakes, configure):
    kagi, brave, searx = fakes
    configure("kagi", "searx")
    kagi.fail = QUOTA
    searx.status = 502
    result = call({"queries": ["rust"]})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith(
        "web_search failed: every search provider failed: kagi: Kagi: HTTP 402 Payment Required"
    )
    assert "; searx: SearXNG (searx): HTTP 502 Bad Gateway: search error" in text


def test_an_mcp_client_sees_the_failover_line(fakes, configure, agent_dir, tmp_path):
    kagi, _, _ = fakes
    configure("kagi", "brave")
    kagi.fail = QUOTA

    async def test():
        async with mcp_stdio_session(agent_dir, tmp_path / "mcp.log") as session:
            result = await session.call_tool("web_search", {"queries": ["rust"]})
            assert result.is_error is False
            text = result_text(result)
            assert text.startswith("1. rust — result 1\n")
            assert "Note: answered by brave because kagi failed (quota): Kagi: HTTP 402" in text

    run_async(test)


def test_pi_web_config_shows_the_failover_order_and_what_fusion_costs(configure):
    configure("kagi", "brave", "searx", searchFallback=["searx", "brave"])
    out = pi_web("config").stdout
    assert (
        "Search failover: kagi -> searx -> brave (searchFallback); a query whose provider fails "
        "for quota, a rate limit, authentication, a timeout or an outage goes to the next, at "
        "once; a call that names its provider never fails over\n"
    ) in out
    assert (
        'Search fusion: off; a call may pass provider "all" to send each query to kagi, brave, '
        "searx at once (3 calls per query, 2 of them paid: kagi, brave), or a list of names\n"
    ) in out


def test_pi_web_config_with_fusion_on_by_default(configure):
    configure("kagi", "searx", searchFusion="all")
    out = pi_web("config").stdout
    assert (
        "Search fusion: on for calls that name no provider (searchFusion): each query goes to "
        "kagi, searx at once (2 calls per query, 1 of them paid: kagi)\n"
    ) in out
    assert "Search failover: not used (searchFusion sends each query" in out
    assert "Search failover: off (searchFallback: false)" not in out


def test_search_fusion_in_the_file_fuses_calls_that_name_no_provider(fakes, configure):
    kagi, brave, searx = fakes
    configure("kagi", "brave", "searx", searchFusion=["brave", "searx"])
    result = call({"queries": ["rust"]})
    assert result["details"]["fusion"]["providers"] == ["brave", "searx"]
    assert kagi.searches() == [] and len(brave.requests) == len(searx.requests) == 1
    assert "   Found by: brave\n" in result["content"][0]["text"]
    named = call({"queries": ["rust"], "provider": "kagi"})  # a named provider is that one only
    assert "fusion" not in named["details"] and len(kagi.searches()) == 1
