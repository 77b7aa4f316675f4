"""Markdown that sites offer: content negotiation and ``<link rel="alternate" type="text/markdown">``.

The direct fetcher asks for Markdown first (:data:`ACCEPT`). A Markdown answer is the page's
text as it came, unless it is an HTML page in disguise (:func:`looks_like_html`); an HTML page
that names a Markdown version of itself (:func:`markdown_alternate`) is read from that version.
Both look at a bounded head of the body with patterns that cannot backtrack.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

__all__ = ["ACCEPT", "MARKDOWN_TYPES", "looks_like_html", "markdown_alternate"]

#: What the direct fetcher asks for: Markdown first, then HTML and the rest as before.
ACCEPT = (
    "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, "
    "application/json;q=0.8, */*;q=0.5"
)
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
#: How much of an HTML body is searched for the alternate link (it belongs in the head).
HEAD_BYTES = 64 * 1024
_HTML_START = re.compile(
    rb"^\s*(?:<!--[^>]{0,200}-->\s*)?<(?:!doctype\s+html|html|head|body)\b", re.I
)
_LINK = re.compile(r"<link\b[^<>]*>", re.I)
_ATTRIBUTE = re.compile(r"""\b(rel|type|href)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)""", re.I)


def looks_like_html(body: bytes) -> bool:
    """Whether *body* is an HTML document (whatever its ``Content-Type`` said)."""
    return bool(_HTML_START.match(body[:1024]))


def markdown_alternate(body: bytes, url: str) -> str | None:
    """The absolute http(s) URL of the Markdown version an HTML page links to in its head
    (``<link rel="alternate" type="text/markdown" href="...">``), or ``None``."""
    head = body[:HEAD_BYTES].decode("utf-8", errors="replace")
    for tag in _LINK.finditer(head):
        attributes = {
            name.lower(): html.unescape(value.strip("\"'"))
            for name, value in _ATTRIBUTE.findall(tag.group(0))
        }
        rels = attributes.get("rel", "").lower().split()
        kind = attributes.get("type", "").split(";", 1)[0].strip().lower()
        href = attributes.get("href", "").strip()
        if "alternate" in rels and kind in MARKDOWN_TYPES and href:
            try:
                target = urljoin(url, href)
                if urlsplit(target).scheme in ("http", "https"):
                    return target
            except ValueError:
                return None
    return None
