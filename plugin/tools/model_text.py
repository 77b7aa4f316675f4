"""Model-facing text: numbered search results, fetched page sections, failure lines.

Everything that came from the web passes :func:`pi_hostspec.strip_control` here. Provider text
arrives with every known key removed (runtime Selection.call); the assembled text is redacted
once more before a tool truncates it, for keys the model itself sent (a query, a URL), so the
full-output temp file holds no key either.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pi_hostspec import clip, strip_control

from ..api.redaction import redact_secrets
from ..api.types import FetchedPage, SearchHit, SearchResponse
from .budget import clip_to, utf8_length
from .fusion import Listing, QueryAnswer, plain

__all__ = [
    "continuation",
    "format_hit",
    "format_search",
    "join_sections",
    "page_heading",
    "section",
    "section_head",
    "snippets",
]


def _one_line(text: str | None) -> str:
    """*text* on one line, without control characters (provider text arrives with keys already
    removed, so a caller may shorten it)."""
    return " ".join(strip_control(text or "").split())


def _date(value: str | None) -> str:
    return value[:10] if value and len(value) >= 10 and value[4] == "-" else (value or "")


def _facts(
    published: str | None, author: str | None, score: float | None = None, width: int = 0
) -> list[str]:
    """The date / author / score facts of a hit or a page (the author cut at *width*, if any)."""
    facts = []
    if published:
        facts.append(f"Published: {_date(_one_line(published))}")
    if author:
        facts.append(f"Author: {clip(_one_line(author), width) if width else _one_line(author)}")
    if score is not None:
        facts.append(f"Score: {score:.3f}")
    return facts


def format_hit(
    number: int,
    hit: SearchHit,
    snippet_bytes: int | None = None,
    provenance: Sequence[str] = (),
) -> str:
    """``N. Title\\n   URL\\n   Snippet`` plus an indented line of date / author / score, then
    the *provenance* lines (which providers returned it, which other queries found it); the
    snippet is cut to *snippet_bytes* (with an ellipsis) when given, and left out at 0."""
    lines = [f"{number}. {_one_line(hit.title) or _one_line(hit.url)}", f"   {_one_line(hit.url)}"]
    snippet = _one_line(hit.snippet)
    if snippet_bytes is not None and utf8_length(snippet) > snippet_bytes:
        cut = clip_to(snippet, snippet_bytes - 3, 1).rstrip()
        snippet = f"{cut}…" if snippet_bytes > 3 and cut else ""
    if snippet:
        lines.append(f"   {snippet}")
    facts = _facts(hit.published, hit.author, hit.score)
    if facts:
        lines.append("   " + " · ".join(facts))
    lines += [f"   {line}" for line in provenance]
    return "\n".join(lines)


SearchOutcome = QueryAnswer | SearchResponse | BaseException


def _answers(outcomes: Sequence[SearchOutcome]) -> list[QueryAnswer | BaseException]:
    return [plain(o) if isinstance(o, SearchResponse) else o for o in outcomes]


def snippets(outcomes: Sequence[SearchOutcome]) -> list[str]:
    """Every listed hit's snippet as :func:`format_hit` shows it, in list order."""
    return [
        _one_line(listing.hit.snippet)
        for outcome in _answers(outcomes)
        if not isinstance(outcome, BaseException)
        for listing in outcome.listings
    ]


def _provenance(listing: Listing, queries: Sequence[str]) -> list[str]:
    lines = []
    if listing.providers:
        lines.append(f"Found by: {', '.join(_one_line(p) for p in listing.providers)}")
    if listing.also_for:
        lines.append(
            "Also found for: " + "; ".join(f'"{_one_line(queries[i])}"' for i in listing.also_for)
        )
    return lines


def format_search(
    queries: Sequence[str],
    outcomes: Sequence[SearchOutcome],
    snippet_bytes: Sequence[int] | None = None,
) -> tuple[str, int]:
    """One numbered list across all queries (query order, then rank); returns (text, total).

    An outcome is a provider's :class:`SearchResponse`, a :class:`QueryAnswer` (fused, served
    after a failover, or listed once across queries) or the exception of a failed query. With
    several queries a ``Query: ...`` line heads each group; a failed query shows its error in
    place; a result names the providers that returned it (a fused call) and the other queries
    that found it; lines about the query's providers and the API's notices for the model follow
    its results as ``Note:`` lines; related searches follow the list, one line per query.
    *snippet_bytes* caps each hit's snippet (in list order), to fit the output limit with every
    title and URL kept.
    """
    blocks: list[str] = []
    related_lines: list[str] = []
    number = 0
    several = len(queries) > 1
    for query, outcome in zip(queries, _answers(outcomes), strict=True):
        items: list[str] = []
        if isinstance(outcome, BaseException):
            items.append(f"Error: {_one_line(str(outcome))}")
        elif not outcome.listings:
            if outcome.repeated:
                items.append(
                    f'No new results for "{_one_line(query)}": its {outcome.repeated} '
                    f"result{'s are' if outcome.repeated > 1 else ' is'} listed above."
                )
            else:
                items.append(f'No results found for "{_one_line(query)}".')
        else:
            for listing in outcome.listings:
                cap = snippet_bytes[number] if snippet_bytes is not None else None
                number += 1
                items.append(format_hit(number, listing.hit, cap, _provenance(listing, queries)))
        if not isinstance(outcome, BaseException):
            related = "; ".join(r for r in (_one_line(x) for x in outcome.response.related) if r)
            if related and outcome.listings:
                related_lines.append(f'Related searches for "{_one_line(query)}": {related}')
            notes = [
                n for n in (_one_line(x) for x in (*outcome.notes, *outcome.response.notices)) if n
            ]
            if notes:
                items.append("\n".join(f"Note: {note}" for note in notes))
        block = "\n\n".join(items)
        blocks.append(f'Query: "{_one_line(query)}"\n{block}' if several else block)
    text = "\n\n".join(blocks)
    if related_lines:
        text += "\n\n" + "\n".join(related_lines)
    return redact_secrets(text), number


TITLE_WIDTH = 300
ERROR_WIDTH = 500


def page_heading(index: int, total: int, page: FetchedPage) -> str:
    """The first line of a page's section."""
    if not page.ok:
        return f"## [{index}/{total}] {_one_line(page.url)} (failed)"
    title = clip(_one_line(page.title), TITLE_WIDTH) if page.title else ""
    return f"## [{index}/{total}] {title or _one_line(page.url)}"


def section_head(index: int, total: int, page: FetchedPage) -> str:
    """Everything of a page's section but its text: heading, URL, facts, notes, summary and
    highlights (always shown whole, whatever the budget), or the failure."""
    lines = [page_heading(index, total, page), f"URL: {_one_line(page.url)}"]
    if not page.ok:
        lines.append(f"Error: {clip(_one_line(page.error), ERROR_WIDTH) or 'unknown error'}")
        return "\n".join(lines)
    if page.final_url and page.final_url != page.url:
        lines.append(f"Final URL: {_one_line(page.final_url)}")
    facts = _facts(page.published, page.author, width=120)
    if facts:
        lines.append(" · ".join(facts))
    for note in page.notes:
        lines.append(f"Note: {_one_line(note)}")
    blocks = []
    if page.summary:
        blocks.append("Summary:\n" + strip_control(page.summary).strip())
    if page.highlights:
        blocks.append("Highlights:\n" + "\n".join(f"- {_one_line(h)}" for h in page.highlights))
    if page.text is not None and blocks:
        blocks.append("Text:")
    return redact_secrets("\n".join(lines) + ("\n\n" + "\n\n".join(blocks) if blocks else ""))


def continuation(url: str, start: int, end: int, page: FetchedPage, next_args: dict) -> str | None:
    """The line after a window of the page's (cleaned) text: where it sits in the page, and the
    exact call that reads on (``None`` when a whole page was shown from its start)."""
    total = len(page.text or "")
    more = "+" if page.more_text else ""
    if start >= total and not page.more_text:
        if total == 0:
            return (
                None if start == 0 else f"[Offset {start} is past the end: this page has no text.]"
            )
        return (
            f"[Offset {start} is past the end of this page's text ({total} characters). "
            f"Use an offset below {total}.]"
        )
    if end < total or page.more_text:
        call = json.dumps({"urls": [url], **next_args, "offset": end}, ensure_ascii=False)
        return f"[Showing characters {start}–{end} of {total}{more}. Next: web_fetch {call}]"
    if start > 0:
        return f"[Showing characters {start}–{end} of {total}: the end of the page.]"
    return None


def join_sections(parts: Sequence[str]) -> str:
    """Page sections, clearly separated, in request order."""
    return redact_secrets("\n\n---\n\n".join(parts))


def section(head: str, text: str, tail: str | None, has_text: bool) -> str:
    """One page's section from its head, the window of text shown and the continuation line."""
    result = head
    if has_text:  # right under a "Text:" label, else after a blank line
        # The window is shown exactly as it is (offsets count every character of it).
        result += ("\n" if head.endswith("Text:") else "\n\n") + (text or "(no text content)")
    if tail:
        result += "\n\n" + tail
    return result
