"""runtime/team.py and limits_config.py: a team server's limits per caller and per provider,
provider cooldowns after a 429, and usage counts, here and on a real Redis shared by replicas;
limits that cannot be read refuse instead of letting calls through."""

from __future__ import annotations

import pytest
from pi_hostspec.types import ToolContext
from pi_web_tools import (
    ApiOptions,
    ProviderError,
    ProviderType,
    Search,
    SearchHit,
    SearchResponse,
    testing,
)
from pi_web_tools.runtime import state
from pi_web_tools.runtime.limits_config import parse_limits, readable

pytestmark = pytest.mark.redis


class Scripted:
    """A search provider that answers, or fails as told (``Scripted.failure``)."""

    calls: list[str] = []
    failure: ProviderError | None = None
    only: str | None = None  # the provider that fails (None: each)

    def __init__(self, config):
        self.name = config.name

    def search(self, request, ctx):
        Scripted.calls.append(self.name)
        if Scripted.failure is not None and Scripted.only in (None, self.name):
            raise Scripted.failure
        return SearchResponse(hits=(SearchHit(title=request.query, url="https://a.test/"),))


@pytest.fixture
def team(write_config):
    """Two keyless search providers, 'one' and 'two', no cache; write ``limits`` with it."""
    Scripted.calls, Scripted.failure, Scripted.only = [], None, None
    kinds = [
        ProviderType(name=n, factory=Scripted, options_class=ApiOptions, search=Search())
        for n in ("one", "two")
    ]

    def configure(limits=None):
        config = {
            "providers": [{"name": "one", "type": "one"}, {"name": "two", "type": "two"}],
            "cache": False,
        }
        if limits is not None:
            config["limits"] = limits
        write_config(config)

    configure()
    with testing.provider_types(*kinds, builtins=False):
        yield configure


@pytest.fixture(params=["local", "redis"])
def where(request):
    if request.param == "redis":
        request.getfixturevalue("shared_state")
    return request.param


def _search(host, caller=None, **args):
    return host.call(
        "web_search", {"queries": ["q"], "provider": "one", **args}, ToolContext(caller=caller)
    )


def test_a_callers_limit_refuses_the_next_call_and_says_when(host, team, where):
    team({"perToken": "2/minute"})
    assert not _search(host, "alice").is_error
    assert not _search(host, "alice").is_error
    third = _search(host, "alice")
    assert third.is_error and third.details["limited"] is True
    assert "Rate limit: alice has used its calls (limits.perToken: 2/minute)" in third.text
    assert "try again in" in third.text
    assert not _search(host, "bob").is_error  # each caller has its own window
    assert Scripted.calls == ["one"] * 3


def test_a_callers_own_limit_replaces_the_common_one(host, team):
    team({"perToken": "1/minute", "tokens": {"ci": "3/minute"}})
    assert [_search(host, "ci").is_error for _ in range(4)] == [False, False, False, True]


def test_a_local_host_names_no_caller_and_is_never_limited(host, team):
    team({"perToken": "1/minute"})
    assert [_search(host).is_error for _ in range(3)] == [False, False, False]


def test_a_providers_limit_holds_every_caller_and_names_itself(host, team, where):
    team({"providers": {"one": "2/minute"}})
    results = [_search(host, name) for name in ("alice", "bob", "carol")]
    assert [r.is_error for r in results] == [False, False, True]
    assert "one: the team's limit (limits.providers.one: 2/minute) is reached" in results[2].text
    assert Scripted.calls == ["one", "one"]


def test_a_providers_limit_holds_across_replicas_on_redis(host, team, shared_state):
    team({"providers": {"one": "2/minute"}})
    assert not _search(host, "alice").is_error
    state.reset()  # another replica: nothing of this process's state is left
    assert not _search(host, "alice").is_error
    assert _search(host, "alice").is_error


def test_a_429_rests_the_provider_for_its_retry_after_on_every_replica(host, team, where):
    failure = ProviderError("HTTP 429 Too Many Requests", provider="one", status=429)
    failure.retry_after = 40.0
    Scripted.failure = failure
    assert _search(host).is_error
    Scripted.failure = None
    if where == "redis":
        state.reset()  # another replica knows it too
    assert 39 < state.cooling("one") <= 40
    again = _search(host)
    assert (
        again.is_error
        and "one is resting after a rate limit (HTTP 429) for 40 s more" in again.text
    )
    assert Scripted.calls == ["one"]  # not called while it rests
    assert not host.call("web_search", {"queries": ["q"], "provider": "two"}).is_error


def test_a_429_without_retry_after_rests_the_provider_briefly(host, team):
    Scripted.failure = ProviderError("HTTP 429", provider="one", status=429)
    _search(host)
    assert 0 < state.cooling("one") <= 30


def test_other_failures_do_not_rest_the_provider(host, team):
    Scripted.failure = ProviderError("HTTP 500", provider="one", status=500)
    _search(host)
    assert state.cooling("one") == 0


def test_usage_is_counted_per_caller_and_provider_for_calls_made(host, team, where):
    _search(host, "alice")
    _search(host, "alice")
    host.call("web_search", {"queries": ["q"], "provider": "two"}, ToolContext(caller="bob"))
    _search(host)  # a local call: no caller, not counted
    assert state.usage([state.today()]) == {state.today(): {"alice": {"one": 2}, "bob": {"two": 1}}}


@pytest.mark.parametrize(
    "limits, where",
    [
        ({"perToken": "lots"}, "limits.perToken"),
        ({"providers": {"one": "5 per fortnight"}}, "limits.providers.one"),
        ({"tokens": {"alice": 10}}, "limits.tokens.alice"),
        ("60/minute", "limits"),
    ],
)
def test_a_limit_that_cannot_be_read_refuses_what_it_limits(host, team, limits, where):
    team(limits)
    result = _search(host, "alice")
    assert result.is_error and where in result.text
    assert Scripted.calls == []
    assert any(where in w for w in result.details.get("warnings", [])) or result.details.get(
        "limited"
    )


def test_rates_are_read_as_the_limits_library_reads_them():
    from limits import parse_many

    for rates in ("60/minute", "10 per second; 1000/day", "5/2 hours|100/day", "1/year"):
        assert readable(rates) and parse_many(rates)
    for rates in ("", "60", "60/fortnight", "0/minute", "1e308/day", "100001/day", 60):
        assert not readable(rates)


def test_the_setting_is_read_with_warnings_for_what_is_not_understood():
    limits, warnings = parse_limits(
        {"perToken": "5/minute", "provider": {}, "providers": {"kagi": "1/second"}}
    )
    assert limits.for_caller("anyone") == ("limits.perToken", "5/minute")
    assert limits.for_provider("kagi") == ("limits.providers.kagi", "1/second")
    assert limits.for_provider("exa") is None
    assert "did you mean 'providers'" in str(warnings[0])


def test_a_limit_holds_for_calls_that_start_together(host, team, where):
    """The first calls of a process arrive at once: they all count in one window."""
    import threading

    team({"providers": {"one": "5/minute"}})
    barrier = threading.Barrier(8)

    def call():
        barrier.wait()
        _search(host, "alice")

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(Scripted.calls) == 5


def test_a_resting_provider_is_failed_over_like_its_own_429(host, team, where):
    """One notion of a cooldown: search failover moves a query past a provider that rests
    after a 429 at once, as it does for the 429 itself, and the note says why."""
    failure = ProviderError("HTTP 429 Too Many Requests", provider="one", status=429)
    failure.retry_after = 120.0
    Scripted.failure, Scripted.only = failure, "one"
    first = host.call("web_search", {"queries": ["q"]}, ToolContext(caller="alice"))
    Scripted.failure = None
    if where == "redis":
        state.reset()  # the next call lands on another replica
    second = host.call("web_search", {"queries": ["r"]}, ToolContext(caller="alice"))
    assert not first.is_error and not second.is_error
    assert "answered by two because one failed (rate limit)" in second.text
    assert "one is resting after a rate limit (HTTP 429) for 120 s more" in second.text
    assert Scripted.calls == ["one", "two", "two"]  # not called while it rests
