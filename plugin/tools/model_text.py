"""Model-facing text: numbered search results, fetched page sections, failure lines.

Everything that came from the web passes :func:`pi_hostspec.strip_control` here. Provider text
arrives with every known key removed (runtime Selection.call); the assembled text is redacted
once more before a tool truncates it, for keys the model itself sent (a query, a URL), so the
full-output temp file holds no key either.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pi_hostspec import clip, strip_control

from ..api.redaction import redact_secrets
from ..api.types import FetchedPage, SearchHit, SearchResponse
from .budget import clip_to, utf8_length
from .fusion import Listing, QueryAnswer, plain

__all__ = [
    "answer_text",
    "close_cut_code",
    "changed_since",
    "content_hash",
    "continuation",
    "find_text",
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
        lines += suggestion_lines(page)
        return redact_secrets("\n".join(lines))
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


def suggestion_lines(page: FetchedPage) -> list[str]:
    """The URLs that exist which a page that was not found offers, one per line."""
    if not page.suggestions:
        return []
    return ["Pages that exist:", *(f"- {_one_line(url)}" for url in page.suggestions)]


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
        call = _read_call(page, next_args, end)
        return f"[Showing characters {start}–{end} of {total}{more}. Next: {call}]"
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
        # The window is shown as it is (offsets count every character of it), but for the
        # fences that open and close a code block it starts or ends inside.
        result += ("\n" if head.endswith("Text:") else "\n\n") + (text or "(no text content)")
    if tail:
        result += "\n\n" + tail
    return result


#: At most this many occurrences are shown for ``find`` in one page.
FIND_OCCURRENCES = 20
#: How much of a long line around an occurrence ``find`` shows (before, after).
FIND_LINE = (120, 200)
#: How much of a long context line (the line before or after) ``find`` shows.
FIND_CONTEXT = 160


def content_hash(text: str, end: int) -> str:
    """A short hash of the first *end* characters of a page's text: what a call that reads on
    from *end* stands on. Given back with that call, it tells whether the copy read now is the
    one the earlier windows came from (:func:`changed_since`)."""
    return hashlib.sha256(text[:end].encode("utf-8", "surrogatepass")).hexdigest()[:8]


def changed_since(page: FetchedPage, offset: int, expected: str) -> bool:
    """Whether *page*'s text before *offset* is not the text *expected* (a continuation's
    ``content_hash``) was made from: the page changed since the earlier windows. A page that
    holds fewer characters than *offset* only because its provider sends text in parts cannot
    be told, and counts as the same."""
    text = page.text or ""
    if offset <= 0 or not page.ok or page.text is None:
        return False
    if len(text) < offset:
        return not page.more_text
    return content_hash(text, offset) != expected


def changed_note(page: FetchedPage, offset: int, expected: str, next_args: dict) -> str:
    """The note a page gets when :func:`changed_since` says it changed."""
    return (
        f"this page changed since the call that gave content_hash {json.dumps(expected)}: its "
        f"text before offset {offset} is not the text the earlier windows showed (their copy "
        "is gone and the page was fetched again), so what follows may repeat or skip text "
        f"where they meet; to read the new copy from its start: {_read_call(page, next_args, None)}"
    )


def _read_call(page: FetchedPage, next_args: dict, offset: int | None) -> str:
    """The ``web_fetch`` call that reads *page* from *offset* with *next_args*; with an offset,
    the ``content_hash`` of the text before it."""
    call = {"urls": [page.url], **next_args}
    if offset:
        call["offset"] = offset
        call["content_hash"] = content_hash(page.text or "", offset)
    return "web_fetch " + json.dumps(call, ensure_ascii=False)


def _label(text: str, start: int, code: bool) -> str:
    """``[offset N]``, with the PDF page it is on and whether it is code."""
    parts = [f"offset {start}"]
    marker = text.rfind("[Page ", 0, start + len("[Page "))
    if marker != -1 and (marker == 0 or text[marker - 1] == "\n"):
        close = text.find("]", marker)
        if 0 < close - marker < 40:
            parts.append(text[marker + 1 : close].replace("Page", "page", 1))
    if code:
        parts.append("code")
    return f"[{' · '.join(parts)}]"


def _excerpts(passages: Sequence) -> list[tuple[int, int, bool]]:
    """The passages as excerpts: neighbours with only white space between them joined."""
    excerpts: list[list] = []
    for passage in passages:
        if excerpts and passage.start - excerpts[-1][1] <= 2:
            excerpts[-1][1] = passage.end
            excerpts[-1][2] = excerpts[-1][2] and passage.code
        else:
            excerpts.append([passage.start, passage.end, passage.code])
    return [(start, end, code) for start, end, code in excerpts]


def _size(total: int, more: bool) -> str:
    return f"{total}+" if more else str(total)


#: How much of a page one question looks through, from its offset: the rest is asked with a
#: later offset (ranking runs in this process, so its work is bounded).
QUESTION_CHARACTERS = 500_000


def past_the_end(page: FetchedPage, offset: int) -> str:
    """The line for an offset at or past the end of a page's text."""
    total = len(page.text or "")
    return (
        f"[Offset {offset} is past the end of this page's text ({total} characters). "
        f"Use an offset below {total}.]"
    )


def _searched(page: FetchedPage, start: int, end: int) -> str:
    """Which characters were looked through: "12388 characters", "characters 500000–612388
    of 612388", "the first 12000+ characters" (a provider holds more)."""
    total = len(page.text or "")
    if start == 0 and end == total:
        return f"{_size(total, page.more_text)} characters"
    return f"characters {start}–{end} of {_size(total, page.more_text)}"


def close_cut_code(part: str) -> tuple[str, str]:
    """*part*, a text cut short, as (what to keep, what to add after it): a code block it leaves
    open is kept to its last whole line and closed with its own fence, so the block is never a
    dangling fragment and what follows it is not read as code; other text is kept whole. In a
    block quote, the fence is closed inside the quote (``> ````)."""
    from .passages import open_fence_line

    fence = open_fence_line(part)
    if fence is None:
        return part, ""
    return part[: part.rfind("\n") + 1], fence


def answer_text(
    page: FetchedPage, question: str, start: int, limit: int, next_args: dict
) -> tuple[str, str, object]:
    """(the passages that answer *question* in the page from *start* on, each after its
    offset label; the line after them: how many, and the exact call that reads around the
    best one; the answer). At most :data:`QUESTION_CHARACTERS` are looked through (the line
    gives the call that asks about the rest), and the passages hold at most *limit*
    characters: a longer one is cut, saying where it goes on."""
    from .passages import answer

    text = page.text or ""
    end = min(len(text), start + QUESTION_CHARACTERS)
    found = answer(text, question, limit, start, end)
    searched = _searched(page, start, end)
    rest = ""
    if end < len(text):
        call = _read_call(page, {"question": question, **next_args}, end)
        rest = f" The rest: {call}."
    if found.best is None:
        return (
            "",
            (
                f"[No passage of this page's {searched} answers the question well: this page "
                f"may not answer the question.{rest} Read it in windows: "
                f"{_read_call(page, next_args, start or None)}, or look for exact words with "
                "find.]"
            ),
            found,
        )
    blocks, used = [], 0
    for first, last, code in _excerpts(found.passages):
        room = limit - used
        if room <= 0:
            break
        shown = text[first:last]
        note = ""
        closing = ""
        if len(shown) > room:
            from .budget import on_boundary

            shown, closing = close_cut_code(on_boundary(shown[:room], True))
            note = f"\n[… cut here: it goes on from offset {first + len(shown)}]"
        used += len(shown)
        body = shown.strip(chr(10)) + (f"\n{closing}" if closing else "")
        blocks.append(f"{_label(text, first, code)}\n{body}{note}")
    count = len(found.passages)
    tail = (
        f"[{count} passage{'s' if count != 1 else ''} for the question, from {searched}; the "
        f"best at offset {found.best.start}.{rest} Read around it: "
        f"{_read_call(page, next_args, found.best.start)}]"
    )
    return "\n\n".join(blocks), tail, found


def _clip_line(line: str, hit: int | None) -> str:
    """*line* shortened around position *hit* (or from its start), with ellipses."""
    if hit is None:
        return line if len(line) <= FIND_CONTEXT else line[:FIND_CONTEXT] + "…"
    before, after = FIND_LINE
    if len(line) <= before + after:
        return line
    start, end = max(0, hit - before), min(len(line), hit + after)
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")


def find_text(
    page: FetchedPage, terms: Sequence[str], start: int, next_args: dict
) -> tuple[str, str, dict[str, int]]:
    """(the places the terms occur, the first :data:`FIND_OCCURRENCES` occurrences: a label
    with each occurrence's offset, then its line and a line either side; the line after them: how
    many occurrences of each term, how many not shown and the call that finds them, and the
    call that reads around the first; how many times each term occurs)."""
    from .passages import find

    text = page.text or ""
    places, counts = find(text, terms, FIND_OCCURRENCES, start)
    named = ", ".join(f'"{_one_line(term)}"' for term in counts)
    size = _searched(page, start, len(text))
    if not places:
        return (
            "",
            f"[No occurrence of {named} in this page's {size} (case ignored).]",
            counts,
        )
    blocks = []
    for place in places:
        label = "; ".join(f'offset {at}: "{_one_line(term)}"' for at, term in place.hits)
        lines = []
        position = place.start
        for line in text[place.start : place.end].split("\n"):
            hits = [at - position for at, _ in place.hits if position <= at <= position + len(line)]
            if line.strip():
                lines.append(_clip_line(line, hits[0] if hits else None))
            position += len(line) + 1
        blocks.append(f"[{label}]\n" + "\n".join(lines))
    total = sum(counts.values())
    each = ", ".join(f'"{_one_line(term)}" {count}' for term, count in counts.items())
    shown = sum(len(place.hits) for place in places)
    last = places[-1].hits[-1][0]
    rest = ""
    if total > shown:  # the call that looks on from just after the last one shown
        call = _read_call(page, {"find": list(terms), **next_args}, last + 1)
        rest = f"; {total - shown} more not shown, after offset {last}. The rest: {call}"
    first = places[0].hits[0][0]
    tail = (
        f"[{total} occurrence{'s' if total != 1 else ''} in {size} ({each}){rest}. "
        f"Read around one: {_read_call(page, next_args, first)}]"
    )
    return "\n\n".join(blocks), tail, counts
