"""Documents that are not HTML pages: PDF as text with page markers, JSON pretty-printed,
RSS and Atom feeds as a list of entries. Each library is imported when a document needs it."""

from __future__ import annotations

import json
import threading

__all__ = ["MAX_JSON_PRETTY", "feed_to_text", "is_feed", "is_pdf", "pdf_to_text", "pretty_json"]

#: JSON larger than this (in characters) is passed through as it came, not re-indented.
MAX_JSON_PRETTY = 2_000_000
#: PDFium is not thread-safe (concurrent documents crash the process): one PDF at a time.
_PDFIUM_LOCK = threading.Lock()
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
        for index in range(total):
            page = document[index]
            try:
                textpage = page.get_textpage()
                try:
                    text = textpage.get_text_bounded().replace("\r\n", "\n").strip()
                finally:
                    textpage.close()
            finally:
                page.close()
            parts.append(
                f"[Page {index + 1} of {total}]\n{text}"
                if text
                else f"[Page {index + 1} of {total}]"
            )
    finally:
        document.close()
    notes = [f"PDF, {total} page{'s' if total != 1 else ''}"]
    if not any("\n" in part for part in parts):
        notes.append(
            "the PDF has no text layer (scanned images?): no text could be extracted; "
            "summarize may read it with OCR"
        )
        return "", notes
    return "\n\n".join(parts), notes


def pretty_json(text: str) -> str:
    """*text* re-indented when it is JSON of reasonable size, else unchanged."""
    if len(text) > MAX_JSON_PRETTY:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return text


def is_feed(body: bytes) -> bool:
    """Whether *body* looks like an RSS or Atom feed."""
    head = body[:2048].lower()
    return b"<rss" in head or (b"<feed" in head and b"atom" in head) or b"<rdf:rdf" in head


def feed_to_text(body: bytes) -> tuple[str | None, str] | None:
    """(feed title, entries as a numbered list) of an RSS or Atom feed, or ``None`` when
    *body* is not one (feedparser parses it without fetching anything)."""
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

            summary = " ".join(html_to_text(summary).split())
            lines.append(f"   {summary[:500]}{'…' if len(summary) > 500 else ''}")
        lines.append("")
    if len(parsed.entries) > MAX_FEED_ENTRIES:
        lines.append(f"({len(parsed.entries) - MAX_FEED_ENTRIES} more entries not listed)")
    return parsed.feed.get("title"), "\n".join(lines).strip()
