"""web_fetch's default path with in-process fetchers and readers: readers first and only there,
a reader's fall-back note, help on a 404 remembered a while, a root's llms.txt, the ladder after
a reader's refusal."""

from __future__ import annotations

import pytest
from pi_web_tools import (
    ApiOptions,
    Fetch,
    FetchedPage,
    FetchResponse,
    ProviderType,
    Reader,
    ReaderError,
    Reading,
    testing,
)


class Recording:
    """A fetcher that answers from a script (a URL's page, else 'ok') and records its calls."""

    script: dict[str, FetchedPage] = {}
    calls: list = []

    def __init__(self, config):
        self.name = config.name

    def fetch(self, request, ctx):
        Recording.calls.append((self.name, request.urls))
        pages = tuple(
            Recording.script.get(url) or FetchedPage(url=url, ok=True, text=f"{self.name} page")
            for url in request.urls
        )
        return FetchResponse(pages=pages)


def _type(name: str, **fetch) -> ProviderType:
    return ProviderType(
        name=name, factory=Recording, options_class=ApiOptions, fetch=Fetch(**fetch)
    )


READS: list[str] = []


def _read(url, web):
    READS.append(url)
    if url.endswith("/gone"):
        raise ReaderError(
            "HTTP 404: no such thing", status=404, suggestions=["https://docs.demo.example/here"]
        )
    if url.endswith("/down"):
        raise ReaderError("the Demo API answered HTTP 503", status=503, fall_back=True)
    if url.endswith("/flaky") and READS.count(url) == 1:  # down once, then back
        raise ReaderError("the Demo API's limit is spent", status=429, fall_back=True)
    if url.endswith("/closed"):
        raise ReaderError("Demo is closed to anonymous clients", status=403)
    if url.endswith("/other"):
        return None
    return Reading(title="Demo page", text=f"read {url}", immutable=url.endswith("/fixed"))


DEMO = Reader(
    name="demo", label="Demo", hosts=("docs.demo.example",), read=_read, source="the Demo API"
)


@pytest.fixture
def setup(write_config, host):
    """A local fetcher 'here' (the default) and a service 'far' on the ladder; the demo reader."""
    Recording.script, Recording.calls = {}, []
    READS.clear()
    write_config(
        {
            "defaultProvider": "here",
            "providers": [{"name": "here", "type": "here"}, {"name": "far", "type": "far"}],
        }
    )
    with testing.provider_types(_type("here", local=True), _type("far"), DEMO, builtins=False):
        yield host


def fetch(host, url, **args):
    return host.call("web_fetch", {"urls": [url], **args})


def test_a_url_a_reader_claims_never_reaches_a_fetcher(setup):
    result = fetch(setup, "https://docs.demo.example/a")
    assert (
        "read https://docs.demo.example/a" in result.text
        and "Note: read via the Demo API" in result.text
    )
    assert Recording.calls == []


def test_a_call_naming_its_provider_is_not_read_by_a_reader(setup):
    result = fetch(setup, "https://docs.demo.example/a", provider="here")
    assert "here page" in result.text and READS == []


def test_highlights_and_summaries_are_left_to_the_fetchers(setup, write_config):
    write_config({"defaultProvider": "far", "providers": [{"name": "far", "type": "far"}]})
    with testing.provider_types(_type("far", modes={"text", "highlights"}), DEMO, builtins=False):
        fetch(setup, "https://docs.demo.example/a", highlights=True)
    assert READS == [] and Recording.calls


def test_a_reader_that_falls_back_leaves_its_note_on_the_fetched_page(setup):
    result = fetch(setup, "https://docs.demo.example/down")
    assert "here page" in result.text
    assert "Note: Demo: the Demo API answered HTTP 503" in result.text


def test_a_page_fetched_after_a_reader_fell_back_is_not_kept_so_the_reader_is_tried_again(setup):
    """The user follows the note's advice (a token, the limit's reset): the next call reads the
    site through its reader, not the cached fall-back page with its stale note."""
    first = fetch(setup, "https://docs.demo.example/flaky")
    assert "here page" in first.text and "limit is spent" in first.text
    again = fetch(setup, "https://docs.demo.example/flaky")
    assert "read https://docs.demo.example/flaky" in again.text
    assert "limit is spent" not in again.text
    assert READS == ["https://docs.demo.example/flaky"] * 2


def test_a_page_a_call_naming_its_provider_cached_does_not_hide_the_readers_page(setup):
    fetch(setup, "https://docs.demo.example/a")
    fetch(setup, "https://docs.demo.example/a", provider="here")  # the fetcher's own page
    again = fetch(setup, "https://docs.demo.example/a")
    assert "read https://docs.demo.example/a" in again.text and "here page" not in again.text


def test_a_page_cached_while_its_reader_was_off_is_read_by_the_reader_once_it_is_on(
    setup, write_config
):
    providers = [{"name": "here", "type": "here"}, {"name": "far", "type": "far"}]
    write_config({"providers": providers, "readers": {"demo": False}})
    assert "here page" in fetch(setup, "https://docs.demo.example/a").text
    write_config({"providers": providers})
    assert "read https://docs.demo.example/a" in fetch(setup, "https://docs.demo.example/a").text


def test_a_page_its_reader_declined_is_cached_for_the_default_path(setup):
    fetch(setup, "https://docs.demo.example/other")
    again = fetch(setup, "https://docs.demo.example/other")
    assert again.details["urls"][0]["cache"]["hit"] is True and len(Recording.calls) == 1


def test_a_reader_that_declines_leaves_the_url_to_the_fetcher_silently(setup):
    result = fetch(setup, "https://docs.demo.example/other")
    assert "here page" in result.text and "Demo" not in result.text


def test_a_readers_page_is_cached_like_any_other(setup):
    fetch(setup, "https://docs.demo.example/a")
    again = fetch(setup, "https://docs.demo.example/a")
    assert READS == ["https://docs.demo.example/a"]
    assert again.details["urls"][0]["cache"]["hit"] is True


def test_a_readers_404_keeps_its_suggestions_and_is_remembered(setup):
    first = fetch(setup, "https://docs.demo.example/gone")
    second = fetch(setup, "https://docs.demo.example/gone")
    assert READS == ["https://docs.demo.example/gone"]
    for result in (first, second):
        assert (
            result.is_error and "Pages that exist:\n- https://docs.demo.example/here" in result.text
        )
    assert "remembered for 10 minutes" in second.text
    assert second.details["urls"][0]["suggestions"] == ["https://docs.demo.example/here"]


def test_a_404_met_after_a_reader_fell_back_is_not_remembered(setup, write_config):
    """The reader's cause (a spent limit) may clear at once: its URL is not remembered dead."""
    write_config({"defaultProvider": "far", "providers": [{"name": "far", "type": "far"}]})
    url = "https://docs.demo.example/flaky"
    Recording.script[url] = FetchedPage(url=url, ok=False, error="HTTP 404 Not Found", status=404)
    first = fetch(setup, url)
    assert first.is_error and "limit is spent" in first.text
    again = fetch(setup, url)
    assert "read https://docs.demo.example/flaky" in again.text and not again.is_error


def test_a_readers_refusal_climbs_the_ladder(setup):
    result = fetch(setup, "https://docs.demo.example/closed")
    assert "far page" in result.text and "fetched through far (far)" in result.text


def test_a_fetchers_404_elsewhere_gets_a_site_search(setup, write_config):
    """A service's 404 (nothing fetched here) gets a ready web_search call, no request to the site."""
    write_config({"defaultProvider": "far", "providers": [{"name": "far", "type": "far"}]})
    Recording.script["https://other.example/docs/getting-started"] = FetchedPage(
        url="https://other.example/docs/getting-started",
        ok=False,
        error="HTTP 404 Not Found",
        status=404,
    )
    with testing.provider_types(_type("far"), builtins=False):
        result = fetch(setup, "https://other.example/docs/getting-started")
    assert (
        'search the site: web_search {"queries": ["site:other.example docs getting started"]}'
        in result.text
    )


def test_question_and_find_read_a_readers_page_from_the_same_cache(setup):
    """wt-question's question/find work over a reader's cached page as over any fetcher's."""
    fetch(setup, "https://docs.demo.example/a")
    found = fetch(setup, "https://docs.demo.example/a", find=["read https"])
    assert READS == ["https://docs.demo.example/a"]
    assert "read https://docs.demo.example/a" in found.text
