"""Model-facing text: numbered search results, fetched page sections, failure lines.

Everything that came from the web passes :func:`pi_hostspec.strip_control` here, and no
configured API key survives (a key can come back in a URL or a page that echoes it): the text is
redacted before a tool truncates it, so the full-output temp file holds no key either.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_hostspec import strip_control

from .api import FetchedPage, SearchHit, SearchResponse
from .secrets import redact_secrets

__all__ = ["format_fetch", "format_hit", "format_search", "page_heading"]


def _one_line(text: str | None) -> str:
    return " ".join(strip_control(text or "").split())


def _date(value: str | None) -> str:
    return value[:10] if value and len(value) >= 10 and value[4] == "-" else (value or "")


def format_hit(number: int, hit: SearchHit) -> str:
    """``N. Title\\n   URL\\n   Snippet`` plus an indented line of date / author / score."""
    lines = [f"{number}. {_one_line(hit.title) or _one_line(hit.url)}", f"   {_one_line(hit.url)}"]
    snippet = _one_line(hit.snippet)
    if snippet:
        lines.append(f"   {snippet}")
    facts = []
    if hit.published:
        facts.append(f"Published: {_date(_one_line(hit.published))}")
    if hit.author:
        facts.append(f"Author: {_one_line(hit.author)}")
    if hit.score is not None:
        facts.append(f"Score: {hit.score:.3f}")
    if facts:
        lines.append("   " + " · ".join(facts))
    return "\n".join(lines)


def format_search(
    queries: Sequence[str], outcomes: Sequence[SearchResponse | BaseException]
) -> tuple[str, int]:
    """One numbered list across all queries (query order, then rank); returns (text, total).

    With several queries a ``Query: ...`` line heads each group; a failed query shows its
    error in place; the API's notices for the model follow a query's results as ``Note:``
    lines; related searches follow the list, one line per query.
    """
    blocks: list[str] = []
    related_lines: list[str] = []
    number = 0
    several = len(queries) > 1
    for query, outcome in zip(queries, outcomes, strict=True):
        items: list[str] = []
        if isinstance(outcome, BaseException):
            items.append(f"Error: {_one_line(str(outcome))}")
        elif not outcome.hits:
            items.append(f'No results found for "{_one_line(query)}".')
        else:
            for hit in outcome.hits:
                number += 1
                items.append(format_hit(number, hit))
            related = "; ".join(r for r in (_one_line(x) for x in outcome.related) if r)
            if related:
                related_lines.append(f'Related searches for "{_one_line(query)}": {related}')
        if not isinstance(outcome, BaseException):
            notes = [n for n in (_one_line(x) for x in outcome.notices) if n]
            if notes:
                items.append("\n".join(f"Note: {note}" for note in notes))
        block = "\n\n".join(items)
        blocks.append(f'Query: "{_one_line(query)}"\n{block}' if several else block)
    text = "\n\n".join(blocks)
    if related_lines:
        text += "\n\n" + "\n".join(related_lines)
    return redact_secrets(text), number


def page_heading(index: int, total: int, page: FetchedPage) -> str:
    """The first line of a page's section."""
    if not page.ok:
        return f"## [{index}/{total}] {_one_line(page.url)} (failed)"
    return f"## [{index}/{total}] {_one_line(page.title) or _one_line(page.url)}"


def _section(index: int, total: int, page: FetchedPage) -> str:
    lines = [page_heading(index, total, page), f"URL: {_one_line(page.url)}"]
    if not page.ok:
        lines.append(f"Error: {_one_line(page.error) or 'unknown error'}")
        return "\n".join(lines)
    if page.final_url and page.final_url != page.url:
        lines.append(f"Final URL: {_one_line(page.final_url)}")
    facts = []
    if page.published:
        facts.append(f"Published: {_date(_one_line(page.published))}")
    if page.author:
        facts.append(f"Author: {_one_line(page.author)}")
    if facts:
        lines.append(" · ".join(facts))
    for note in page.notes:
        lines.append(f"Note: {_one_line(note)}")
    body: list[str] = []
    if page.summary:
        body.append("Summary:\n" + strip_control(page.summary).strip())
    if page.highlights:
        body.append("Highlights:\n" + "\n".join(f"- {_one_line(h)}" for h in page.highlights))
    if page.text is not None:
        text = strip_control(page.text).strip()
        body.append(
            ("Text:\n" if (page.summary or page.highlights) else "") + (text or "(no text content)")
        )
    return "\n".join(lines) + ("\n\n" + "\n\n".join(body) if body else "")


def format_fetch(pages: Sequence[FetchedPage]) -> str:
    """One clearly separated section per URL, in request order; failures as one-line errors."""
    total = len(pages)
    return redact_secrets(
        "\n\n---\n\n".join(_section(i, total, page) for i, page in enumerate(pages, 1))
    )
