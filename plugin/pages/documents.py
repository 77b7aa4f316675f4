"""Documents that are not HTML pages: PDF as text with page markers, JSON pretty-printed,
RSS and Atom feeds as a list of entries. Each library is imported when a document needs it."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["MAX_JSON_PRETTY", "feed_to_text", "is_feed", "is_pdf", "pdf_to_text", "pretty_json"]

#: JSON larger than this (in characters) is passed through as it came, not re-indented.
MAX_JSON_PRETTY = 2_000_000
#: PDFium is not thread-safe (concurrent documents crash the process): one PDF at a time.
_PDFIUM_LOCK = threading.Lock()
#: Re-indented JSON may be at most this many times the size of the body (deep nesting
#: multiplies indentation: 450 KB of nested arrays re-indent to hundreds of MB).
PRETTY_GROWTH = 4
#: At most this many feed entries are listed.
MAX_FEED_ENTRIES = 200


def is_pdf(body: bytes) -> bool:
    """Whether *body* is a PDF document (by its signature, whatever the server called it)."""
    return body[:1024].lstrip(b"\x00\t\r\n\x0c ").startswith(b"%PDF-")


def pdf_to_text(body: bytes) -> tuple[str, list[str]]:
    """(text, notes) of a PDF: each page's text after a ``[Page N of M]`` marker. A PDF that is
    encrypted, damaged or has no text layer gives empty text and a note saying so."""
    with _PDFIUM_LOCK:
        return _pdf_to_text(body)


def _pdf_to_text(body: bytes) -> tuple[str, list[str]]:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(body)
    except pdfium.PdfiumError as exc:
        message = str(exc).lower()
        if "password" in message:
            return "", ["the PDF is encrypted (password protected); its text cannot be read"]
        return "", [f"the PDF could not be read ({exc})"]
    try:
        total = len(document)
        parts = []
        bad = []
        for index in range(total):
            try:
                text = _page_text(document, index)
            except Exception:  # noqa: BLE001 - one damaged page must not lose the others
                bad.append(index + 1)
                text = ""
            parts.append(
                f"[Page {index + 1} of {total}]\n{text}"
                if text
                else f"[Page {index + 1} of {total}]"
            )
    finally:
        document.close()
    notes = [f"PDF, {total} page{'s' if total != 1 else ''}"]
    if bad:
        listed = ", ".join(str(number) for number in bad[:20]) + ("…" if len(bad) > 20 else "")
        notes.append(f"page{'s' if len(bad) != 1 else ''} {listed} could not be read")
    if not any("\n" in part for part in parts):
        notes.append(
            "the PDF has no text layer (scanned images?): no text could be extracted; "
            "summarize may read it with OCR"
        )
        return "", notes
    return "\n\n".join(parts), notes


def _page_text(document: Any, index: int) -> str:
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            return textpage.get_text_bounded().replace("\r\n", "\n").strip()
        finally:
            textpage.close()
    finally:
        page.close()


class _Unfaithful(ValueError):
    """Re-indenting would change the data (a duplicate key, a non-standard constant, a number
    Python would rewrite)."""


def _pairs(pairs: list) -> dict:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Unfaithful("it has duplicate keys")
    return dict(pairs)


def _constant(name: str) -> Any:
    raise _Unfaithful(f"it uses {name}, which is not standard JSON")


def _number(literal: str) -> float:
    from decimal import Decimal

    value = float(literal)
    if value in (float("inf"), float("-inf")) or Decimal(literal) != Decimal(repr(value)):
        raise _Unfaithful("re-indenting would change its numbers (more digits than a float holds)")
    return value


def pretty_json(text: str) -> tuple[str, list[str]]:
    """(text, notes): *text* re-indented when that is faithful and stays within
    :data:`PRETTY_GROWTH` times its size, else *text* as it came with a note saying why."""
    if len(text) > MAX_JSON_PRETTY:
        return text, []
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_number
        )
    except _Unfaithful as exc:
        return text, [f"JSON shown as it came: {exc}"]
    except (ValueError, RecursionError):
        return text, []
    limit = PRETTY_GROWTH * len(text) + 4096
    out: list[str] = []
    size = 0
    try:
        for chunk in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(value):
            size += len(chunk)
            if size > limit:
                return text, [
                    f"JSON shown as it came: re-indented it would be over {PRETTY_GROWTH} times "
                    "its size"
                ]
            out.append(chunk)
    except (ValueError, RecursionError):
        return text, []
    return "".join(out), []


_PROLOG = re.compile(
    rb"(?:\s+|<\?[^<>]*\?>|<!--(?:[^-]|-(?!->))*-->|<!DOCTYPE[^<>\[]*(?:\[[^\]]*\])?\s*>)",
    re.IGNORECASE,
)
_FEED_ROOT = re.compile(rb"<(?:rss|feed|rdf:rdf)\b", re.IGNORECASE)


def is_feed(body: bytes) -> bool:
    """Whether *body* is an RSS, Atom or RDF feed: its root element (after the XML declaration,
    comments and a doctype) is ``rss``, ``feed`` or ``rdf:RDF``. A page that merely mentions
    ``<rss`` (a script template in its head) is not."""
    head = body[:8192].lstrip(b"\xef\xbb\xbf")
    position = 0
    while True:
        match = _PROLOG.match(head, position)
        if match is None or match.end() == position:
            break
        position = match.end()
    return _FEED_ROOT.match(head, position) is not None


def feed_to_text(body: bytes, secrets: Iterable[str] = ()) -> tuple[str | None, str] | None:
    """(feed title, entries as a numbered list) of an RSS or Atom feed, or ``None`` when
    *body* is not one (feedparser parses it without fetching anything). Each of *secrets* is
    replaced by ``***`` in an entry's decoded summary before it is cut (a key spelled with
    entities in the body is whole only once decoded)."""
    from ..api.redaction import redact

    secrets = tuple(secrets)
    import feedparser

    parsed = feedparser.parse(body, sanitize_html=True, resolve_relative_uris=False)
    if not parsed.entries and not parsed.feed.get("title"):
        return None
    lines = []
    for number, entry in enumerate(parsed.entries[:MAX_FEED_ENTRIES], 1):
        title = " ".join((entry.get("title") or entry.get("link") or "(untitled)").split())
        lines.append(f"{number}. {title}")
        if entry.get("link"):
            lines.append(f"   {entry['link']}")
        date = entry.get("published") or entry.get("updated")
        if date:
            lines.append(f"   Published: {date}")
        summary = entry.get("summary") or ""
        if summary:
            from .content import html_to_text

            summary = redact(" ".join(html_to_text(summary).split()), secrets)
            lines.append(f"   {summary[:500]}{'…' if len(summary) > 500 else ''}")
        lines.append("")
    if len(parsed.entries) > MAX_FEED_ENTRIES:
        lines.append(f"({len(parsed.entries) - MAX_FEED_ENTRIES} more entries not listed)")
    return parsed.feed.get("title"), "\n".join(lines).strip()
