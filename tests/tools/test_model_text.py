"""Model-facing formatting of search results and fetched pages."""

from __future__ import annotations

from pi_web_tools.api.errors import ProviderError
from pi_web_tools.api.types import FetchedPage, SearchHit, SearchResponse
from pi_web_tools.tools.model_text import (
    content_hash,
    continuation,
    format_hit,
    format_search,
    join_sections,
    section,
    section_head,
)


def test_hit_with_author_and_score():
    """Exa-style metadata goes on one indented line."""
    hit = SearchHit(title="T", url="https://u/", published="2024-01-15", author="Jo", score=0.38723)
    assert (
        format_hit(3, hit)
        == "3. T\n   https://u/\n   Published: 2024-01-15 · Author: Jo · Score: 0.387"
    )


def test_numbering_continues_across_queries_and_errors():
    """Numbers are continuous; a failed query shows its error in place."""
    one = SearchResponse(hits=(SearchHit(title="A", url="https://a/"),))
    text, total = format_search(["x", "y", "z"], [one, ProviderError("Kagi: HTTP 500"), one])
    assert total == 2
    assert (
        text
        == 'Query: "x"\n1. A\n   https://a/\n\nQuery: "y"\nError: Kagi: HTTP 500\n\nQuery: "z"\n2. A\n   https://a/'
    )


def test_fetch_sections_in_order_with_failures():
    """One section per URL, separated, failures as one error line."""
    pages = [
        FetchedPage(
            url="https://a/",
            ok=True,
            title="A",
            text="Body A",
            final_url="https://a/x",
            notes=("text cut",),
        ),
        FetchedPage(url="https://b/", ok=False, error="CRAWL_NOT_FOUND (HTTP 404)"),
        FetchedPage(
            url="https://c/", ok=True, title="C", text="Body C", highlights=("h1",), summary="S"
        ),
    ]
    parts = [
        section(section_head(i, 3, page), page.text or "", None, page.text is not None)
        for i, page in enumerate(pages, 1)
    ]
    assert join_sections(parts) == (
        "## [1/3] A\nURL: https://a/\nFinal URL: https://a/x\nNote: text cut\n\nBody A"
        "\n\n---\n\n## [2/3] https://b/ (failed)\nURL: https://b/\nError: CRAWL_NOT_FOUND (HTTP 404)"
        "\n\n---\n\n## [3/3] C\nURL: https://c/\n\nSummary:\nS\n\nHighlights:\n- h1\n\nText:\nBody C"
    )


def test_continuation_names_the_exact_next_call():
    """Text that remains gets a line with the position and the call that reads on."""
    page = FetchedPage(url="https://a/", ok=True, text="x" * 100)
    line = continuation("https://a/", 0, 40, page, {"provider": "exa"})
    assert line == (
        '[Showing characters 0–40 of 100. Next: web_fetch {"urls": ["https://a/"], '
        '"provider": "exa", "offset": 40, "content_hash": "bd913ff6"}]'
    )
    # the hash is of the text before the offset: what the windows read so far
    assert content_hash("x" * 100, 40) == content_hash("x" * 40 + "y" * 60, 40) == "bd913ff6"
    assert continuation("https://a/", 0, 100, page, {}) is None
    assert continuation("https://a/", 60, 100, page, {}) == (
        "[Showing characters 60–100 of 100: the end of the page.]"
    )
    assert continuation("https://a/", 500, 500, page, {}) == (
        "[Offset 500 is past the end of this page's text (100 characters). Use an offset below 100.]"
    )


def test_continuation_says_when_the_provider_holds_more_text():
    """A page whose provider has more than it returned is never shown as ended."""
    page = FetchedPage(url="https://a/", ok=True, text="x" * 100, more_text=True)
    assert continuation("https://a/", 0, 100, page, {}).startswith(
        "[Showing characters 0–100 of 100+. Next: web_fetch"
    )


def test_huge_titles_and_errors_are_clipped_in_headings():
    """A page title or an error message cannot fill the output on its own."""
    page = FetchedPage(url="https://a/", ok=True, title="T" * 5000, text="")
    assert len(section_head(1, 1, page).splitlines()[0]) < 320
    failed = FetchedPage(url="https://a/", ok=False, error="E" * 5000)
    assert len(section_head(1, 1, failed).splitlines()[-1]) < 520


def test_notices_follow_their_querys_results():
    """An API's notices for the model follow that query's hits (or its no-results line)."""
    hit = SearchHit(title="A", url="https://a.example/")
    text, total = format_search(
        ["q1", "q2"],
        [
            SearchResponse(hits=(hit,), notices=("Searched for q one instead.",), warnings=("w",)),
            SearchResponse(notices=("No backend answered.",)),
        ],
    )
    assert text == (
        'Query: "q1"\n1. A\n   https://a.example/\n\nNote: Searched for q one instead.\n\n'
        'Query: "q2"\nNo results found for "q2".\n\nNote: No backend answered.'
    )
    assert total == 1


def test_a_passage_cut_inside_a_code_block_is_closed_with_its_fence():
    from pi_web_tools.tools.model_text import close_cut_code

    kept, closing = close_cut_code("Run:\n\n```sh\nmake\nmake inst")
    assert (kept, closing) == ("Run:\n\n```sh\nmake\n", "```")


def test_a_passage_cut_inside_a_quoted_code_block_is_closed_inside_the_quote():
    """A bare fence would end the quote and open a new block over what follows."""
    from pi_web_tools.tools.model_text import close_cut_code

    kept, closing = close_cut_code("> Run:\n>\n> ````sh\n> make\n> make inst")
    assert (kept, closing) == ("> Run:\n>\n> ````sh\n> make\n", "> ````")
