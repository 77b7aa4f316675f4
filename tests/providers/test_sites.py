"""The Hacker News, arXiv, Wikipedia and Reddit readers against faithful fakes."""

from __future__ import annotations

import pytest
from pi_web_tools.api.readers import ReaderError
from pi_web_tools.providers import arxiv
from pi_web_tools.providers.arxiv import ARXIV
from pi_web_tools.providers.hackernews import HACKERNEWS
from pi_web_tools.providers.reddit import REDDIT
from pi_web_tools.providers.wikipedia import WIKIPEDIA

from tests.support.sites import read_with


@pytest.fixture(autouse=True)
def no_arxiv_spacing(monkeypatch):
    monkeypatch.setattr(arxiv, "API_SPACING_SECONDS", 0.0)


def test_a_hacker_news_item_gives_the_story_and_its_whole_comment_tree(sites):
    reading, web = read_with(HACKERNEWS, "https://news.ycombinator.com/item?id=8863")
    text = reading.text
    assert text.startswith("# My YC app: Dropbox - Throw away your USB drive")
    assert "111 points · by dhouston" in text and "## Comments (5)" in text
    lines = text.splitlines()
    assert "- BrandonM · 2026-01-02" in lines
    assert "  - dhouston · 2026-01-02" in lines
    assert "    - BrandonM · 2026-01-02" in lines
    assert (
        text.index("I have a few qualms")
        < text.index("re: the first part")
        < text.index("very good")
    )
    assert "[deleted]" in text
    assert "http://example.com/a/very/long/link" in text
    assert web.requests == 1 and sites.log[0]["path"] == "/api/v1/items/8863"


def test_a_missing_hacker_news_item_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(HACKERNEWS, "https://news.ycombinator.com/item?id=1")
    assert info.value.status == 404


def test_other_hacker_news_pages_are_left_to_the_usual_fetch(sites):
    assert read_with(HACKERNEWS, "https://news.ycombinator.com/news")[0] is None


def test_an_arxiv_abstract_gives_metadata_and_the_html_full_text(sites):
    reading, web = read_with(ARXIV, "https://arxiv.org/abs/2401.00001v2")
    text = reading.text
    assert text.startswith("# Attention Is Still All You Need")
    assert "Authors: Ada Lovelace, Alan Turing" in text
    assert "categories: cs.CL, cs.AI" in text and "Comments: 12 pages, 3 figures" in text
    assert "## Abstract\n\nWe show that attention" in text
    assert "## Full text (from its HTML version)" in text and "threefold" in text
    assert reading.immutable
    assert [entry["host"] for entry in sites.log] == ["export.arxiv.org", "arxiv.org"]
    assert sites.log[0]["query"] == {"id_list": "2401.00001v2"}


def test_an_arxiv_paper_without_html_is_read_from_its_pdf(sites):
    reading, _ = read_with(ARXIV, "https://arxiv.org/abs/2402.00002")
    assert "## Full text (from its PDF)" in reading.text
    assert "Deep results on page one" in reading.text and "[Page 1 of 2]" in reading.text


def test_a_missing_arxiv_paper_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(ARXIV, "https://arxiv.org/abs/2403.99999")
    assert info.value.status == 404


def test_a_wikipedia_article_is_read_through_the_rest_api(sites):
    reading, _ = read_with(WIKIPEDIA, "https://en.wikipedia.org/wiki/Python_(programming_language)")
    assert "high-level, general-purpose programming language" in reading.text
    assert "3 December 2008" in reading.text
    assert sites.log[0]["path"] == "/api/rest_v1/page/html/Python_(programming_language)"


def test_a_wikipedia_redirect_is_followed_and_a_mobile_url_read(sites):
    reading, _ = read_with(WIKIPEDIA, "https://en.m.wikipedia.org/wiki/Python_language")
    assert "general-purpose" in reading.text
    assert {entry["host"] for entry in sites.log} == {"en.wikipedia.org"}


def test_a_missing_wikipedia_article_is_a_404(sites):
    with pytest.raises(ReaderError) as info:
        read_with(WIKIPEDIA, "https://en.wikipedia.org/wiki/No_such_article_xyz")
    assert info.value.status == 404


def test_reddit_says_plainly_that_anonymous_access_is_closed(sites):
    with pytest.raises(ReaderError) as info:
        read_with(REDDIT, "https://www.reddit.com/r/python/comments/abc/title/")
    assert info.value.status == 403 and "closed anonymous access" in info.value.message
    assert sites.log == []  # nothing is downloaded to learn it


# --- every reader: a rate limit and an oversized answer are clean ------------------------------

from pi_web_tools.providers import hackernews, registries, wikipedia  # noqa: E402
from pi_web_tools.providers.registries import NPM, PYPI  # noqa: E402

from tests.support.sites import json_answer, text_answer  # noqa: E402

URLS = {
    "pypi": (PYPI, "https://pypi.org/project/pi-demo/", "pypi.org"),
    "npm": (NPM, "https://www.npmjs.com/package/tiny-lib", "registry.npmjs.org"),
    "hackernews": (HACKERNEWS, "https://news.ycombinator.com/item?id=8863", "hn.algolia.com"),
    "arxiv": (ARXIV, "https://arxiv.org/abs/2401.00001v2", "export.arxiv.org"),
    "wikipedia": (
        WIKIPEDIA,
        "https://en.wikipedia.org/wiki/Python_(programming_language)",
        "en.wikipedia.org",
    ),
}


@pytest.mark.parametrize("name", sorted(URLS))
def test_a_rate_limit_is_a_clean_fall_back_and_not_retried_for_an_hour(sites, name):
    reader, url, host = URLS[name]

    def limited(path, query, headers):
        return json_answer({"message": "slow down"}, 429, **{"Retry-After": "3600"})

    sites.routes.append((host.replace(".", r"\."), limited))
    with pytest.raises(ReaderError) as info:
        read_with(reader, url)
    assert info.value.fall_back and "429" in info.value.message
    assert len(sites.requests_to(host)) == 1


@pytest.mark.parametrize(
    "name, module, limit",
    [
        ("pypi", registries, "MAX_BYTES"),
        ("hackernews", hackernews, "MAX_BYTES"),
        ("wikipedia", wikipedia, "MAX_BYTES"),
    ],
)
def test_an_oversized_answer_is_bounded_and_named(sites, monkeypatch, name, module, limit):
    reader, url, host = URLS[name]
    monkeypatch.setattr(module, limit, 200)
    outcome = None
    try:
        outcome, _ = read_with(reader, url)
    except ReaderError as exc:
        assert "size limit" in exc.message or "more than" in exc.message
        return
    assert outcome is not None and any("Stopped reading" in note for note in outcome.notes)


def test_a_page_that_is_not_json_where_json_is_due_is_named(sites):
    sites.routes.append(
        (
            r"pypi\.org",
            lambda path, query, headers: text_answer("<html>maintenance</html>", kind="text/html"),
        )
    )
    with pytest.raises(ReaderError) as info:
        read_with(PYPI, "https://pypi.org/project/pi-demo/")
    assert "PyPI's JSON API answered something that is not JSON" in info.value.message
