"""runtime/run.py, handoff.py and ladder.py with in-process fetchers: the cache-through call,
per-URL pages, refusals as values, and the ladder deciding on why a page climbs, never on the
words that say it."""

from __future__ import annotations

import pytest
from pi_web_tools import (
    ApiOptions,
    Fetch,
    FetchedPage,
    FetchResponse,
    ProviderType,
    Search,
    SearchHit,
    SearchRequest,
    SearchResponse,
    testing,
)
from pi_web_tools.runtime import handoff, ladder, run
from pi_web_tools.runtime.registry import resolve_provider


class Recording:
    """A provider that answers from a script and records every request."""

    script: dict[str, FetchedPage] = {}
    calls: list = []

    def __init__(self, config):
        self.name = config.name

    def fetch(self, request, ctx):
        Recording.calls.append((self.name, request.urls))
        pages = tuple(
            Recording.script.get(f"{self.name} {url}") or FetchedPage(url=url, ok=True, text="ok")
            for url in request.urls
        )
        return FetchResponse(pages=pages)

    def search(self, request, ctx):
        Recording.calls.append((self.name, request.query))
        return SearchResponse(hits=(SearchHit(title=request.query, url="https://a.test/"),))


def _type(name: str, **fetch) -> ProviderType:
    return ProviderType(
        name=name,
        factory=Recording,
        options_class=ApiOptions,
        fetch=Fetch(**fetch),
        search=Search(),
    )


@pytest.fixture
def fetchers(write_config):
    """Three keyless fetch types: 'first' (the default), 'second' and 'painter' (runs
    JavaScript, on this machine)."""
    Recording.script, Recording.calls = {}, []
    types = (
        _type("first"),
        _type("second"),
        _type("painter", javascript=True, local=True),
    )
    write_config(
        {
            "defaultProvider": "first",
            "providers": [
                {"name": "first", "type": "first", "options": {}},
                {"name": "second", "type": "second"},
                {"name": "painter", "type": "painter"},
            ],
            "cache": False,
        }
    )
    with testing.provider_types(*types, builtins=False):
        yield Recording


def test_a_search_is_asked_once_and_then_served_from_the_cache(write_config, fetchers):
    write_config({"providers": [{"name": "first", "type": "first"}]})
    chosen = resolve_provider("search")
    first, age = run.search(chosen, SearchRequest(query="q"), None)
    again, later = run.search(chosen, SearchRequest(query="q"), None)
    assert first == again and age is None and later is not None
    assert fetchers.calls == [("first", "q")]


def test_every_url_gets_a_page_even_when_the_provider_forgets_one(fetchers):
    chosen = resolve_provider("fetch")
    fetchers.script["first https://b.test/"] = FetchedPage(url="https://other.test/", ok=True)
    pages, ages, _ = run.fetch(chosen, ["https://a.test/", "https://b.test/"], {}, 100, None)
    assert [p.url for p in pages] == ["https://a.test/", "https://b.test/"]
    assert pages[1].ok is False and pages[1].error == "no result returned"
    assert ages == [None, None]


def test_a_refusal_is_a_value_and_its_text_is_made_where_it_is_shown(fetchers):
    chosen = resolve_provider("fetch")
    refusal = handoff.handoff_refusal("http://10.0.0.5/", chosen, deadline=1e12)
    assert isinstance(refusal, handoff.Refusal)
    assert refusal.reason == "10.0.0.5 is a private address, not sent to first (first)"
    assert refusal.hint.startswith('set "allowPrivateNetwork": true in the first provider')
    assert str(refusal) == f"refused: {refusal.reason}; {refusal.hint}"
    pages, _, _ = run.fetch(chosen, ["http://10.0.0.5/"], {}, 100, None)
    assert pages[0].error == str(refusal) and pages[0].code == "refused"
    assert fetchers.calls == []


def test_the_hint_names_a_misspelt_allow_option_of_that_provider_only(write_config, fetchers):
    write_config(
        {
            "providers": [
                {"name": "first", "type": "first", "options": {"allowPrivateNetwok": True}},
                {"name": "second", "type": "second", "options": {"allowPrivateNetwrk": True}},
            ]
        }
    )
    refusal = handoff.handoff_refusal("http://10.0.0.5/", resolve_provider("fetch"), 1e12)
    assert refusal.hint.endswith(
        "(providers[0] (first).options has 'allowPrivateNetwok', which is ignored: did you "
        "mean 'allowPrivateNetwork'?)"
    )
    assert "allowPrivateNetwrk" not in refusal.hint


@pytest.mark.parametrize(
    ("page", "why", "said"),
    [
        (
            FetchedPage(url="u", ok=False, status=403),
            ladder.Why.REFUSED,
            "the first fetch was refused (HTTP 403)",
        ),
        (
            FetchedPage(url="u", ok=True, escalate="app shell"),
            ladder.Why.APP_SHELL,
            "the first fetch found an application shell (the content needs JavaScript)",
        ),
        (
            FetchedPage(url="u", ok=True, escalate="no text"),
            ladder.Why.FOUND,
            "the first fetch found no text",
        ),
    ],
)
def test_why_a_page_climbs_is_an_enum(page, why, said):
    reason = ladder.needs_another_fetcher(page)
    assert reason.why is why and reason.said("first") == said
    assert reason.needs_javascript is (why is ladder.Why.APP_SHELL)


def test_a_page_that_merely_mentions_javascript_does_not_jump_the_queue(fetchers):
    """Only an application shell sends the JavaScript fetcher first; a provider's own reason
    that happens to say "JavaScript" climbs in file order."""
    fetchers.script["first https://a.test/"] = FetchedPage(
        url="https://a.test/", ok=True, text="", escalate="a JavaScript notice"
    )
    pages, _, _ = run.fetch(resolve_provider("fetch"), ["https://a.test/"], {}, 100, None)
    assert [name for name, _ in fetchers.calls] == ["first", "second"]
    assert pages[0].notes[0] == (
        "fetched through second (second): the first fetch found a JavaScript notice"
    )


def test_an_application_shell_goes_to_the_javascript_fetcher_first(fetchers):
    fetchers.script["first https://a.test/"] = FetchedPage(
        url="https://a.test/", ok=True, text="", escalate="app shell"
    )
    pages, _, _ = run.fetch(resolve_provider("fetch"), ["https://a.test/"], {}, 100, None)
    assert [name for name, _ in fetchers.calls] == ["first", "painter"]
    assert pages[0].notes[0] == "rendered in a local browser: the page needs JavaScript"


def test_the_ladder_keeps_its_state_by_url(fetchers):
    """A refused page goes up; every rung that failed it is named on the page."""
    chosen = resolve_provider("fetch")
    url = "https://a.test/"
    fetchers.script[f"first {url}"] = FetchedPage(url=url, ok=False, status=429, error="slow down")
    fetchers.script[f"second {url}"] = FetchedPage(url=url, ok=False, error="blocked")
    climb = ladder.Ladder(chosen, {}, 100, None, run.cache.Budget(5), deadline=1e12)
    [page] = climb.climb([FetchedPage(url=url, ok=False, status=429, error="slow down")], [None])
    assert climb.todo == [] and url in climb.better
    assert climb.sent[url] == ["second (second): blocked"]
    assert page.notes[:2] == (
        "fetched through painter (painter): the first fetch was refused (HTTP 429)",
        "also sent to second (second): blocked",
    )


# --- search failover: decided on the error's kind -----------------------------------------------


class Failing:
    """A search provider that fails as its name says (``quota``, ``bad``) or answers."""

    calls: list = []

    def __init__(self, config):
        self.name = config.name

    def search(self, request, ctx):
        from pi_web_tools import ErrorKind, ProviderError

        Failing.calls.append(self.name)
        if self.name == "quota":
            # The words say nothing of quota: only the kind does.
            raise ProviderError("quota: no", provider=self.name, kind=ErrorKind.QUOTA)
        if self.name == "bad":
            raise ProviderError("bad: HTTP 400", provider=self.name, status=400)
        return SearchResponse(hits=(SearchHit(title=self.name, url=f"https://{self.name}.test/"),))


@pytest.fixture
def searchers(write_config):
    Failing.calls = []
    kinds = [ProviderType(name=n, factory=Failing, search=Search()) for n in ("quota", "bad", "ok")]
    with testing.provider_types(*kinds):
        yield lambda *names: write_config(
            {"providers": [{"name": n, "type": n} for n in names], "cache": False}
        )


def test_a_failure_with_a_kind_goes_to_the_next_provider(searchers):
    searchers("quota", "ok")
    chain = [resolve_provider("search", "quota"), resolve_provider("search", "ok")]
    served = run.search_in_turn(chain, SearchRequest(query="q"), None)
    assert served.selection.entry.name == "ok"
    assert [(s.entry.name, e.kind) for s, e in served.passed] == [("quota", "quota")]
    assert Failing.calls == ["quota", "ok"]


def test_a_failure_without_a_kind_ends_the_query(searchers):
    from pi_web_tools import ProviderError

    searchers("bad", "ok")
    chain = [resolve_provider("search", "bad"), resolve_provider("search", "ok")]
    with pytest.raises(ProviderError, match="bad: HTTP 400"):
        run.search_in_turn(chain, SearchRequest(query="q"), None)
    assert Failing.calls == ["bad"]


def test_every_provider_failing_is_one_error_naming_each(searchers):
    from pi_web_tools import ProviderError

    searchers("quota", "bad")
    chain = [resolve_provider("search", "quota"), resolve_provider("search", "bad")]
    with pytest.raises(ProviderError) as caught:
        run.search_in_turn(chain, SearchRequest(query="q"), None)
    assert str(caught.value) == "every search provider failed: quota: quota: no; bad: bad: HTTP 400"
