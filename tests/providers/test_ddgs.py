"""The keyless ddgs provider with the library's search mocked (never the network)."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from ddgs import ddgs as library
from ddgs import exceptions
from pi_hostspec.types import ToolContext
from pi_web_tools import testing
from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.types import SearchRequest
from pi_web_tools.providers.ddgs import DDGS, KEYED_HINT, DdgsOptions, DdgsProvider

RESULTS = [
    {
        "title": "Tokio - An asynchronous Rust runtime",
        "href": "https://tokio.rs/",
        "body": "Tokio is an event-driven, non-blocking I/O platform for writing asynchronous "
        "applications with the Rust programming language.",
    },
    {
        "title": "async-std",
        "href": "https://async.rs/",
        "body": "Async version of the Rust standard library.",
    },
]


class Script:
    """Stands in for ``DDGS.text``: answers per backend, recording every call."""

    def __init__(self, **answers):
        self.answers = answers
        self.calls: list[dict] = []

    def __call__(self, instance, query, **kwargs):
        self.calls.append({"query": query, "timeout": instance._timeout, **kwargs})
        answer = self.answers.get(
            kwargs.get("backend"), exceptions.DDGSException("No results found.")
        )
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer()
        return answer


@pytest.fixture
def script(monkeypatch):
    """Install a Script as the library's text search; returns a function to set its answers."""

    def install(**answers) -> Script:
        fake = Script(**answers)
        monkeypatch.setattr(library.DDGS, "text", lambda self, query, **kw: fake(self, query, **kw))
        return fake

    return install


def make_provider(**options) -> DdgsProvider:
    return DdgsProvider("free", DdgsOptions(**options))


def test_the_type_follows_the_provider_contract():
    """check_provider_type accepts the ddgs type, keyless, with every option set."""
    options = {
        "backends": ["yahoo", "mojeek"],
        "region": "de-de",
        "safesearch": "off",
        "defaultSearchLimit": 5,
        "timeoutSeconds": 3,
    }
    provider = testing.check_provider_type(DDGS, options=options)
    assert provider.backends == ("yahoo", "mojeek")
    assert DDGS.needs_api_key is False and not DDGS.fallback_for and DDGS.api_key_env is None


def test_the_first_backend_that_answers_is_named(script):
    """Results come from the first backend with results, and a notice names it."""
    fake = script(duckduckgo=exceptions.DDGSException("No results found."), brave=RESULTS)
    response = make_provider().search(SearchRequest(query="rust async", limit=2), None)
    assert [h.url for h in response.hits] == ["https://tokio.rs/", "https://async.rs/"]
    assert response.hits[0].snippet.startswith("Tokio is an event-driven")
    assert response.notices == ("Keyless results from the brave backend (ddgs library).",)
    assert response.warnings == ("duckduckgo: no results",)
    assert [c["backend"] for c in fake.calls] == ["duckduckgo", "brave"]
    assert fake.calls[0]["max_results"] == 2 and fake.calls[0]["query"] == "rust async"


def test_options_and_domain_filters_reach_the_library(script):
    """Region, safesearch and site operators are passed; the library timeout fits the budget."""
    fake = script(mojeek=RESULTS)
    request = SearchRequest(
        query="tokio", include_domains=("docs.rs", "tokio.rs"), exclude_domains=("reddit.com",)
    )
    make_provider(backends=["mojeek"], region="de-de", safesearch="off", timeout_seconds=3).search(
        request, None
    )
    (call,) = fake.calls
    assert call["query"] == "tokio (site:docs.rs OR site:tokio.rs) -site:reddit.com"
    assert call["region"] == "de-de" and call["safesearch"] == "off"
    assert call["max_results"] == 10 and 1 <= call["timeout"] <= 3


def test_rate_limits_and_captchas_become_one_clear_error(script):
    """When engines refuse us, the error says so and suggests a keyed provider."""
    script(
        duckduckgo=exceptions.RatelimitException("https://html.duckduckgo.com/html 202 Ratelimit"),
        brave=exceptions.DDGSException("Captcha detected"),
        startpage=exceptions.DDGSException("No results found."),
        mojeek=exceptions.DDGSException("ConnectError: connection refused"),
        yahoo=exceptions.DDGSException("No results found."),
    )
    with pytest.raises(ProviderError) as info:
        make_provider().search(SearchRequest(query="q"), None)
    message = str(info.value)
    assert message.startswith(
        "ddgs (free): the search engines refused the query (duckduckgo: rate limited"
    )
    assert "brave: rate limited or asked for a CAPTCHA" in message
    assert "mojeek: ConnectError: connection refused" in message
    assert message.endswith(KEYED_HINT) and "\n" not in message
    assert info.value.code == "rate_limited"


def test_nothing_anywhere_is_an_empty_answer_that_hints_at_blocking(script):
    """Every backend empty: no hits, and a notice that blocking looks the same."""
    script()
    response = make_provider(backends=["yahoo", "mojeek"]).search(SearchRequest(query="q"), None)
    assert response.hits == ()
    assert response.notices[0].startswith("No keyless backend returned results (yahoo, mojeek)")


def test_other_library_failures_are_listed_per_backend(script):
    """Unexpected errors from every backend give one line naming each."""
    script(yahoo=exceptions.TimeoutException("timed out"), mojeek=ValueError("bad html"))
    with pytest.raises(
        ProviderError, match=r"no backend answered \(yahoo: timed out; mojeek: bad html\)"
    ):
        make_provider(backends=["yahoo", "mojeek"]).search(SearchRequest(query="q"), None)


def test_junk_results_are_skipped(script):
    """Items that are not objects or have no http(s) URL are skipped."""
    script(
        yahoo=[
            None,
            "x",
            {"title": "t"},
            {"href": "javascript:alert(1)"},
            {"href": "https://ok.example/"},
        ]
    )
    (hit,) = make_provider(backends=["yahoo"]).search(SearchRequest(query="q"), None).hits
    assert hit.title == "https://ok.example/" and hit.snippet == ""


def test_a_hanging_library_ends_at_the_timeout(script):
    """A search that never returns is given up at timeoutSeconds."""
    release = threading.Event()
    script(yahoo=lambda: release.wait(30) and [])
    start = time.monotonic()
    try:
        with pytest.raises(
            ProviderError,
            match=r"ddgs \(free\): timed out after 0.5 s waiting for the yahoo backend",
        ):
            make_provider(backends=["yahoo"], timeout_seconds=0.5).search(
                SearchRequest(query="q"), None
            )
        assert time.monotonic() - start < 1.5
    finally:
        release.set()


def test_cancellation_stops_a_running_search(script):
    """Cancelling the call stops waiting for the library at once."""
    release = threading.Event()
    script(yahoo=lambda: release.wait(30) and [])
    ctx = ToolContext()
    threading.Timer(0.2, ctx.cancel.set).start()
    start = time.monotonic()
    try:
        with pytest.raises(ProviderError, match=r"^ddgs \(free\): cancelled$"):
            make_provider(backends=["yahoo"], timeout_seconds=10).search(
                SearchRequest(query="q"), ctx
            )
        assert time.monotonic() - start < 1.0
    finally:
        release.set()


def test_an_unknown_backend_is_named_with_the_known_ones(script):
    """A misspelt backend in the options is a clean error listing the real ones."""
    script()
    with pytest.raises(
        ProviderError,
        match=r"unknown backend\(s\) 'duckgo' in options.backends; known: .*duckduckgo",
    ):
        make_provider(backends=["duckgo"]).search(SearchRequest(query="q"), None)


def test_without_the_library_the_error_says_what_to_install(monkeypatch):
    """No ddgs installed: one line with the command that adds the keyless extra to this install."""
    import re

    from pi_hostspec.install import install_command

    monkeypatch.setitem(sys.modules, "ddgs", None)
    expected = f"the ddgs library is not installed; run: {install_command('keyless')}"
    with pytest.raises(ProviderError, match=re.escape(expected)):
        make_provider().search(SearchRequest(query="q"), None)


def test_at_most_two_queries_reach_the_engines_at_once(script):
    """The engines block bursts: concurrent queries of one provider run two at a time."""
    lock, running, peak = threading.Lock(), [0], [0]

    def answer():
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return RESULTS

    script(yahoo=answer)
    provider = make_provider(backends=["yahoo"])
    threads = [
        threading.Thread(target=provider.search, args=(SearchRequest(query=f"q{i}"), None))
        for i in range(5)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert peak[0] == 2
