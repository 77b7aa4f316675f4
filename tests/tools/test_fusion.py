"""Merging search results: canonical URLs, reciprocal rank fusion, one listing per URL."""

from __future__ import annotations

import pytest
from pi_web_tools.api import SearchHit, SearchResponse
from pi_web_tools.tools.fusion import RRF_K, canonical_url, fuse, list_once, plain
from pi_web_tools.tools.model_text import format_search


def hits(*urls: str, snippet: str = "") -> SearchResponse:
    return SearchResponse(
        hits=tuple(SearchHit(title=f"t {u}", url=u, snippet=snippet or f"s {u}") for u in urls)
    )


@pytest.mark.parametrize(
    "a, b",
    [
        ("https://example.com/a", "http://example.com/a"),
        ("https://www.example.com/a/", "https://example.com/a"),
        ("https://Example.COM:443/a", "https://example.com/a"),
        ("https://example.com/a?utm_source=x&id=3&utm_medium=y", "https://example.com/a?id=3"),
        ("https://example.com/a?fbclid=abc", "https://example.com/a"),
        ("https://example.com/a?ref=hn", "https://example.com/a"),
        ("https://example.com/a#section", "https://example.com/a"),
        ("https://example.com/", "https://example.com"),
    ],
)
def test_one_page_has_one_canonical_form(a, b):
    assert canonical_url(a) == canonical_url(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("https://example.com/A", "https://example.com/a"),  # paths are case-sensitive
        ("https://example.com/a?id=3", "https://example.com/a?id=4"),
        ("https://example.com:8080/a", "https://example.com/a"),
        ("https://docs.example.com/a", "https://example.com/a"),
    ],
)
def test_different_pages_keep_different_forms(a, b):
    assert canonical_url(a) != canonical_url(b)


def test_agreement_ranks_above_any_single_first_place():
    """Third in two lists (2/63) beats first in one (1/61): agreement ranks first."""
    fused = fuse(
        [
            ("kagi", hits("https://a.example", "https://b.example", "https://shared.example")),
            ("brave", hits("https://c.example", "https://d.example", "https://shared.example")),
        ],
        limit=10,
    )
    urls = [listing.hit.url for listing in fused.listings]
    assert urls[0] == "https://shared.example"
    assert fused.listings[0].providers == ("kagi", "brave")
    assert urls[1:] == [
        "https://a.example",
        "https://c.example",
        "https://b.example",
        "https://d.example",
    ]
    assert 2 / (RRF_K + 3) > 1 / (RRF_K + 1)


def test_copies_merge_into_the_best_ranked_title_and_the_richest_snippet():
    kagi = SearchResponse(
        hits=(
            SearchHit(
                title="Kagi title", url="https://www.example.com/x/", snippet="short", score=0.9
            ),
        )
    )
    brave = SearchResponse(
        hits=(
            SearchHit(title="first", url="https://first.example", snippet="f"),
            SearchHit(
                title="Brave title",
                url="http://example.com/x?utm_source=brave",
                snippet="a much richer snippet",
                published="2026-01-02",
            ),
        )
    )
    fused = fuse([("kagi", kagi), ("brave", brave)], limit=10)
    shared = fused.listings[0]
    assert shared.hit.title == "Kagi title" and shared.hit.url == "https://www.example.com/x/"
    assert shared.hit.snippet == "a much richer snippet"
    assert shared.hit.published == "2026-01-02"
    assert shared.hit.score is None  # providers' scores are not comparable
    assert shared.providers == ("kagi", "brave")


def test_a_merged_result_links_its_cleanest_copy():
    """The copy a merged result links is https rather than http, and without tracking
    parameters when a copy has none, whichever provider ranked it best: an agent cites it."""
    best = SearchResponse(
        hits=(SearchHit(title="Best", url="http://example.com/x?utm_source=exa&id=3", snippet="s"),)
    )
    tracked = SearchResponse(
        hits=(
            SearchHit(title="Tracked", url="https://www.example.com/x?id=3&fbclid=z", snippet="s"),
        )
    )
    clean = SearchResponse(
        hits=(
            SearchHit(title="first", url="https://first.example", snippet="f"),
            SearchHit(title="Clean", url="https://example.com/x/?id=3", snippet="s"),
        )
    )
    fused = fuse([("exa", best), ("brave", tracked), ("kagi", clean)], limit=10)
    shared = fused.listings[0]
    assert shared.hit.url == "https://example.com/x/?id=3"
    assert shared.hit.title == "Best"  # the best-ranked copy's words
    assert shared.providers == ("exa", "brave", "kagi")


def test_the_fused_list_is_cut_to_the_limit_and_merges_related_and_notes():
    a = SearchResponse(
        hits=hits("https://1.example", "https://2.example").hits, related=("r1",), notices=("n",)
    )
    b = SearchResponse(hits=hits("https://3.example").hits, related=("r1", "r2"), warnings=("w",))
    fused = fuse([("a", a), ("b", b)], limit=2, notes=["c failed: HTTP 500"])
    assert len(fused.listings) == 2
    assert fused.response.related == ("r1", "r2")
    assert fused.response.notices == ("a: n",) and fused.response.warnings == ("b: w",)
    assert fused.notes == ("c failed: HTTP 500",)


def test_a_url_one_provider_returns_twice_counts_once():
    fused = fuse([("a", hits("https://x.example/", "https://x.example"))], limit=10)
    assert len(fused.listings) == 1
    assert len(plain(hits("https://x.example/", "http://x.example")).listings) == 1


def test_a_url_two_queries_found_is_listed_once_under_the_first():
    outcomes = list_once(
        [
            plain(hits("https://a.example", "https://shared.example")),
            RuntimeError("boom"),
            plain(hits("https://www.shared.example/", "https://b.example")),
            plain(hits("https://shared.example")),
        ]
    )
    assert [x.hit.url for x in outcomes[0].listings] == [
        "https://a.example",
        "https://shared.example",
    ]
    assert outcomes[0].listings[1].also_for == (2, 3)
    assert isinstance(outcomes[1], RuntimeError)
    assert [x.hit.url for x in outcomes[2].listings] == ["https://b.example"]
    assert outcomes[2].repeated == 1
    assert outcomes[3].listings == () and outcomes[3].repeated == 1


def test_the_list_keeps_its_shape_and_says_where_a_url_went():
    """N. Title / URL / Snippet, then the provenance lines, indented like the facts."""
    queries = ["one", "two"]
    outcomes = list_once(
        [
            fuse([("kagi", hits("https://s.example")), ("brave", hits("https://s.example"))], 10),
            fuse([("kagi", hits("https://s.example")), ("brave", hits("https://s.example"))], 10),
        ]
    )
    text, total = format_search(queries, outcomes)
    assert total == 1
    assert text == (
        'Query: "one"\n'
        "1. t https://s.example\n   https://s.example\n   s https://s.example\n"
        '   Found by: kagi, brave\n   Also found for: "two"\n\n'
        'Query: "two"\n'
        'No new results for "two": its 1 result is listed above.'
    )
