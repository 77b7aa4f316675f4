"""The fetch ladder and the host check before every fetcher (issue 21, Medium 1 and 2).

A page refused to the first fetcher is sent to the other configured fetchers; these cases are
what it must never send, and what every answer must say about where a URL went.
"""

from __future__ import annotations

import pytest

from tests.support import SECRET, assert_no_secret
from tests.support.fake_apis import FakeExa, FakeKagi, FakeTavily
from tests.support.fault_server import Reply

FORBIDDEN = Reply(403, "<html><body>Forbidden</body></html>", content_type="text/html")
LOOPBACK_OK = {"allowPrivateNetwork": True}  # the test pages live on 127.0.0.1


@pytest.fixture
def exa():
    with FakeExa(SECRET) as fake:
        yield fake


@pytest.fixture
def tavily():
    with FakeTavily(SECRET) as fake:
        yield fake


def ladder_config(exa, tavily, *, rungs_private: bool = True, **top) -> dict:
    """direct first (allowed onto loopback), then Exa and Tavily as the ladder's rungs."""
    extra = LOOPBACK_OK if rungs_private else {}
    return {
        "defaultProvider": "direct",
        "providers": [
            {"name": "direct", "type": "direct", "options": {"allowPrivateNetwork": True}},
            {
                "name": "exa",
                "type": "exa",
                "apiKey": SECRET,
                "options": {"baseUrl": exa.base_url, "timeoutSeconds": 5, **extra},
            },
            {
                "name": "tavily",
                "type": "tavily",
                "apiKey": SECRET,
                "options": {"baseUrl": tavily.base_url, "timeoutSeconds": 5, **extra},
            },
        ],
        **top,
    }


def sent_urls(fake) -> list[str]:
    """Every URL a fake API was asked to fetch."""
    return [
        url
        for request in fake.requests
        for url in request["json"].get("urls", [])
        + [p.get("url") for p in request["json"].get("pages", [])]
    ]


# --------------------------------------------------------------------------- credentials


def test_a_url_with_a_user_and_password_is_never_sent_up_the_ladder(
    server, exa, tavily, tools, write_config
):
    """user:password@ goes to no third party, however the first fetch ended; the page says why."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily))
    url = f"http://alice:hunter2@127.0.0.1:{server.port}/intranet/report"
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert outcome.result.is_error
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert "not sent to any other fetcher: the URL carries a user name or password" in outcome.text


@pytest.mark.parametrize(
    "query",
    [
        "?token=abc123",
        "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Signature=deadbeef",
        "?PHPSESSID=0123456789abcdef",
        "?api_key=zzz",
        "?sv=2024-01-01&se=2030-01-01&sig=c2lnbmF0dXJl",
        "?state=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.c2ln",
        "#access_token=abc123",
    ],
)
def test_a_url_with_a_credential_parameter_is_never_sent_up_the_ladder(
    query, server, exa, tavily, tools, write_config
):
    """Signed links, tokens, session ids and keys stay between the user and the site."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily))
    outcome = tools.call("web_fetch", {"urls": [server.url(f"/signed/file.pdf{query}")]})
    assert outcome.result.is_error
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert "not sent to any other fetcher: the URL carries" in outcome.text


# --------------------------------------------------------------------------- hosts


def test_a_private_host_goes_to_no_rung_that_was_not_allowed_private_networks(
    server, exa, tavily, tools, write_config
):
    """allowPrivateNetwork on direct is not a licence to send intranet URLs to Exa or Tavily."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily, rungs_private=False))
    outcome = tools.call("web_fetch", {"urls": [server.url("/admin")]})
    assert outcome.result.is_error
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert "not sent to the other fetchers: 127.0.0.1 is a loopback address" in outcome.text
    assert '"allowPrivateNetwork": true in the exa provider\'s options' in outcome.text


def test_a_single_label_host_goes_to_no_rung(server, exa, tavily, tools, write_config, monkeypatch):
    """http://intranet/ (fetched here through a proxy, which answered 403) is an intranet name:
    it is not sent to a service."""
    server.script(FORBIDDEN)
    monkeypatch.setenv("HTTP_PROXY", server.url())
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    write_config(ladder_config(exa, tavily, rungs_private=False))
    outcome = tools.call("web_fetch", {"urls": ["http://intranet/wiki/Passwords"]})
    assert server.requests[0]["path"] == "http://intranet/wiki/Passwords"  # direct did fetch it
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert "intranet is a single-label name" in outcome.text


def test_a_rung_allowed_private_networks_still_gets_a_refused_page(
    server, exa, tavily, tools, write_config
):
    """The ladder itself still works: a page refused to direct is fetched through Exa."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily))
    url = server.url("/guarded")
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert not outcome.result.is_error, outcome.text
    assert "fetched through exa (exa): the direct fetch was refused (HTTP 403)" in outcome.text
    assert sent_urls(exa) == [url] and sent_urls(tavily) == []


# --------------------------------------------------------------------------- who got the URL


def test_when_every_rung_fails_the_answer_names_every_service_that_got_the_url(
    server, exa, tavily, tools, write_config
):
    """Not just "HTTP 403 Forbidden": each service the URL went to, and how it answered."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily))
    url = server.url("/missing-report")  # both fakes fail URLs with "missing" in them
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert outcome.result.is_error
    assert sent_urls(exa) == [url] and sent_urls(tavily) == [url]
    text = outcome.text
    assert "HTTP 403 Forbidden" in text
    assert "also sent to exa (exa):" in text and "tavily (tavily):" in text
    facts = outcome.result.details["urls"][0]
    assert "exa (exa)" in facts["error"] and "tavily (tavily)" in facts["error"]
    assert_no_secret(outcome)


def test_a_page_fetched_by_a_later_rung_names_the_earlier_ones_too(
    server, tavily, tools, write_config
):
    """Exa refused the whole request (a bad key) but still received the URL: the page that
    Tavily produced says so."""
    server.script(FORBIDDEN)
    with FakeExa("another-key-entirely-000") as exa:
        write_config(ladder_config(exa, tavily))
        url = server.url("/guarded")
        outcome = tools.call("web_fetch", {"urls": [url]})
        assert not outcome.result.is_error, outcome.text
        assert sent_urls(exa) == [url] and sent_urls(tavily) == [url]
    assert "fetched through tavily (tavily)" in outcome.text
    assert "also sent to exa (exa):" in outcome.text
    assert_no_secret(outcome)


# --------------------------------------------------------------------------- on request


class _Wall:
    """A fetcher every site refuses (403): the ladder's first step, without a site."""

    def __init__(self, name: str):
        self.name = name

    def fetch(self, request, ctx):
        from pi_web_tools import FetchedPage, FetchResponse

        return FetchResponse(
            pages=tuple(
                FetchedPage(url=url, ok=False, status=403, error="HTTP 403 Forbidden")
                for url in request.urls
            )
        )


def _wall_type():
    from pi_web_tools import Fetch, ProviderType

    return ProviderType(name="wall", factory=lambda config: _Wall(config.name), fetch=Fetch())


@pytest.fixture
def kagi():
    with FakeKagi(SECRET) as fake:
        yield fake


def kagi_ladder(kagi, **top) -> dict:
    return {
        "defaultProvider": "wall",
        "providers": [
            {"name": "wall", "type": "wall"},
            {
                "name": "kagi",
                "type": "kagi",
                "apiKey": SECRET,
                "options": {"baseUrl": kagi.base_url, "apiVersion": "v1", "timeoutSeconds": 5},
            },
        ],
        **top,
    }


def test_an_on_request_provider_is_never_a_rung(kagi, tools, write_config):
    """Kagi fetches only when named: a 403 elsewhere does not send the URL to Kagi Extract."""
    from pi_web_tools import testing

    with testing.provider_types(_wall_type()):
        write_config(kagi_ladder(kagi))
        outcome = tools.call("web_fetch", {"urls": ["https://docs.example/guide"]})
    assert outcome.result.is_error
    assert sent_urls(kagi) == []


def test_an_on_request_provider_named_in_fetch_ladder_is_a_rung(kagi, tools, write_config):
    """ "fetchLadder": ["kagi"] names it: then it is tried, and the page says so."""
    from pi_web_tools import testing

    with testing.provider_types(_wall_type()):
        write_config(kagi_ladder(kagi, fetchLadder=["kagi"]))
        outcome = tools.call("web_fetch", {"urls": ["https://docs.example/guide"]})
    assert not outcome.result.is_error, outcome.text
    assert sent_urls(kagi) == ["https://docs.example/guide"]
    assert "fetched through kagi (kagi)" in outcome.text


class _Crashing:
    """A fetcher with a bug: every call raises."""

    def __init__(self, name: str):
        self.name = name

    def fetch(self, request, ctx):
        raise RuntimeError("list index out of range")


def test_a_rung_that_raises_is_one_failed_rung_and_the_ladder_goes_on(kagi, tools, write_config):
    """A fetcher's bug on a rung (a third-party provider's RuntimeError) used to end the whole
    call as "web_fetch failed unexpectedly"; it is that rung's failure, named on the page, and
    the next rung reads the URL."""
    from pi_web_tools import Fetch, ProviderType, testing

    crashing = ProviderType(
        name="crashing", factory=lambda config: _Crashing(config.name), fetch=Fetch()
    )
    config = kagi_ladder(kagi, fetchLadder=["crashing", "kagi"])
    config["providers"].insert(1, {"name": "crashing", "type": "crashing"})
    with testing.provider_types(_wall_type(), crashing):
        write_config(config)
        outcome = tools.call("web_fetch", {"urls": ["https://docs.example/guide"]})
    assert not outcome.result.is_error, outcome.text
    assert sent_urls(kagi) == ["https://docs.example/guide"]
    assert "fetched through kagi (kagi)" in outcome.text
    assert (
        "crashing (crashing): crashing failed unexpectedly: RuntimeError: list index out of range"
        in outcome.text
    )


# --------------------------------------------------------------------------- the setting


def test_fetch_ladder_false_turns_the_ladder_off(server, exa, tavily, tools, write_config):
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily, fetchLadder=False))
    outcome = tools.call("web_fetch", {"urls": [server.url("/guarded")]})
    assert outcome.result.is_error and "HTTP 403 Forbidden" in outcome.text
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert "warnings" not in outcome.result.details


@pytest.mark.parametrize(
    "value, warned",
    [
        ("off", "fetchLadder: expected true, false or a list of provider names"),
        (0, "fetchLadder: expected true, false or a list of provider names"),
        (["bing"], "fetchLadder: 'bing' ignored (no such provider"),
    ],
)
def test_a_fetch_ladder_value_that_cannot_be_read_turns_it_off_with_a_warning(
    value, warned, server, exa, tavily, tools, write_config
):
    """A misspelt setting meant to keep URLs at home never sends them out."""
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily, fetchLadder=value))
    outcome = tools.call("web_fetch", {"urls": [server.url("/guarded")]})
    assert sent_urls(exa) == [] and sent_urls(tavily) == []
    assert any(warned in w for w in outcome.result.details.get("warnings", [])), (
        outcome.result.details
    )


def test_fetch_ladder_names_the_rungs_and_their_order(server, exa, tavily, tools, write_config):
    server.script(FORBIDDEN)
    write_config(ladder_config(exa, tavily, fetchLadder=["tavily"]))
    url = server.url("/guarded")
    outcome = tools.call("web_fetch", {"urls": [url]})
    assert "fetched through tavily (tavily)" in outcome.text
    assert sent_urls(exa) == [] and sent_urls(tavily) == [url]


# --------------------------------------------------------------------------- the default fetcher


def shared_file(kind: str, fake, **options) -> dict:
    """The shared file of other pi extensions holding only one service's key (and its baseUrl)."""
    return {
        f"{kind}ApiKey": SECRET,
        "providerOptions": {kind: {"baseUrl": fake.base_url, "timeoutSeconds": 5, **options}},
    }


PRIVATE_URLS = [
    "http://10.0.0.1/admin?token=abc",
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://[::1]:8080/",
    "http://intranet/wiki",
]


@pytest.mark.parametrize("kind, fake_class", [("tavily", FakeTavily), ("exa", FakeExa)])
def test_a_keyed_default_fetcher_never_gets_private_or_metadata_urls(
    kind, fake_class, tools, write_config
):
    """A file holding only tavilyApiKey (or exaApiKey) makes that service the fetcher: private,
    metadata and intranet URLs are refused before they are sent, each saying how to allow it."""
    with fake_class(SECRET) as fake:
        write_config(shared_file(kind, fake))
        outcome = tools.call("web_fetch", {"urls": [*PRIVATE_URLS, "https://docs.example/a"]})
        assert sent_urls(fake) == ["https://docs.example/a"]
    text = outcome.text
    assert f"refused: 10.0.0.1 is a private address, not sent to {kind} ({kind})" in text
    assert "169.254.169.254 is a cloud metadata address" in text
    assert "[::1] is a loopback address" in text
    assert "intranet is a single-label name" in text
    assert f'"providerOptions": {{"{kind}": {{"allowPrivateNetwork": true}}}}' in text
    assert_no_secret(outcome)


def test_a_name_that_resolves_to_a_metadata_address_is_refused(tools, write_config, monkeypatch):
    """The host is resolved here (bounded) before a service gets it, as the direct fetcher does."""
    from pi_web_tools.api import _netguard as netguard

    real = netguard.resolve_host
    monkeypatch.setattr(
        netguard,
        "resolve_host",
        lambda host, port: ["169.254.169.254"] if host == "meta.corp.example" else real(host, port),
    )
    with FakeTavily(SECRET) as fake:
        write_config(shared_file("tavily", fake))
        outcome = tools.call("web_fetch", {"urls": ["http://meta.corp.example/latest/"]})
        assert sent_urls(fake) == []
    assert (
        "meta.corp.example resolves to a cloud metadata address (169.254.169.254)" in outcome.text
    )


def test_allow_private_network_on_the_service_lets_a_private_url_through(tools, write_config):
    with FakeTavily(SECRET) as fake:
        write_config(shared_file("tavily", fake, allowPrivateNetwork=True))
        outcome = tools.call("web_fetch", {"urls": ["http://10.0.0.1/wiki"]})
        assert sent_urls(fake) == ["http://10.0.0.1/wiki"]
    assert not outcome.result.is_error, outcome.text


def test_pi_web_config_says_what_the_ladder_does(exa, tavily, write_config):
    from pi_web_tools.views.config_report import config_report

    write_config(ladder_config(exa, tavily))
    report, _ = config_report()
    assert (
        "Fetch ladder: on (after direct, the other fetchers that serve by default: exa, tavily)"
        in report
    )
    write_config(ladder_config(exa, tavily, fetchLadder=False))
    report, _ = config_report()
    assert "Fetch ladder: off (fetchLadder: false)" in report


def test_a_shell_cached_by_a_call_naming_its_provider_still_climbs_for_a_default_call(
    server, exa, tavily, tools, write_config
):
    """`provider: "direct"` stores the application shell it found (briefly, without the
    ladder); a default call soon after is not served that shell: it gets its ladder turn."""
    from .test_cache_faults import APP_SHELL

    server.script(Reply(200, APP_SHELL, content_type="text/html"))
    write_config(ladder_config(exa, tavily))
    url = server.url("/app")
    named = tools.call("web_fetch", {"urls": [url], "provider": "direct"})
    assert "application shell" in named.text and sent_urls(exa) == []
    default = tools.call("web_fetch", {"urls": [url]})
    assert not default.result.is_error, default.text
    assert sent_urls(exa) == [url]
    assert "fetched through exa (exa)" in default.text
    assert_no_secret(default)
