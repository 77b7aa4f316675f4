"""Page content: the body's character encoding, and HTML turned into readable text.

Every pattern here runs in linear time on hostile pages (no lazy ``.*?`` spans: a page of
unclosed ``<script>`` tags made them quadratic; tag bodies stop at the next ``<``).
"""

from __future__ import annotations

import codecs
import re

from ..api.html_text import html_to_text, page_title

__all__ = [
    "APP_SHELL_NOTE",
    "MIN_EXTRACTED",
    "content_kind",
    "decode_body",
    "extract_html",
    "html_to_text",
    "is_app_shell",
    "page_title",
    "sniff_kind",
]

MIN_EXTRACTED = 200
_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-ndjson",
}

_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9._:-]+)""", re.IGNORECASE)


def decode_body(body: bytes, content_type: str = "") -> str:
    """*body* as text, in the encoding the ``Content-Type`` header, a BOM or the page declares.

    Only the WHATWG Encoding Standard's labels count (:mod:`pi_web_tools.pages.charsets`); any other
    name is ignored. The text is always valid Unicode: no lone surrogate survives.
    """
    from pi_hostspec.sanitize import valid_unicode

    from .charsets import decode

    match = _HEADER_CHARSET.search(content_type or "")
    return valid_unicode(decode(body, _charset(match.group(1) if match else None, body)))


def _charset(header_charset: str | None, body: bytes) -> str:
    """The body's codec: BOM, then the header, then ``<meta>`` / XML declaration, else UTF-8."""
    from .charsets import web_codec

    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith(codecs.BOM_UTF16_LE):
        return "utf-16"
    if body.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    found = web_codec(header_charset and header_charset.strip("\"'"))
    if found:
        return found
    head = body[:2048]
    match = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if match:
        found = web_codec(match.group(1).decode("ascii"), in_document=True)
    return found or "utf-8"


#: An HTML page whose visible text is this short and that has a script-mounted root element is
#: an application shell (its content is drawn by JavaScript).
APP_SHELL_WORDS = 40
_APP_ROOT = re.compile(
    r"""<(?:div|main|body|app-root)\b[^<>]*\bid\s*=\s*["']?(?:root|app|__next|__nuxt|___gatsby|svelte|main-app|application)\b"""
    r"|<app-root\b|data-reactroot|ng-version=",
    re.IGNORECASE,
)
APP_SHELL_NOTE = (
    "this page is an application shell: its content is drawn by JavaScript, which the direct "
    "fetcher does not run"
)


def is_app_shell(page: str, text: str) -> bool:
    """Whether an HTML page is an application shell: almost no text, a root element that
    scripts mount into, and scripts."""
    if len(re.findall(r"\w+", text[:2000])) >= APP_SHELL_WORDS:
        return False
    head = page[:200_000]
    return bool(_APP_ROOT.search(head)) and "<script" in head.lower()


def extract_html(
    page: str, url: str | None = None
) -> tuple[str | None, str, list[str], list[tuple[str, str]]]:
    """(title, text, notes, links) for an HTML page: its main content as Markdown (headings,
    lists, code, tables; no inline link markup) with the page's links apart, or the whole
    page's text with a note when extraction finds nearly nothing."""
    # trafilatura logs the page URL, which may carry a key: redaction's process guards
    # (installed on its import) redact every log record as it is made
    from ..api import redaction  # noqa: F401
    from . import extraction

    found = extraction.extract(page, url)
    title = found.title or page_title(page)
    text = found.text.strip()
    notes: list[str] = []
    if is_app_shell(page, text):
        notes.append(APP_SHELL_NOTE)
    elif found.fallback or not text:
        notes.append("main-content extraction found almost nothing; showing the whole page text")
    if not text:
        text = html_to_text(page)
    return title or None, text, notes, list(found.links)


_BINARY_MAYBE_DOCUMENT = {
    "application/octet-stream",
    "binary/octet-stream",
    "application/download",
    "application/x-download",
    "application/force-download",
}
_FEED_TYPES = {"application/rss+xml", "application/atom+xml", "application/rdf+xml"}


def content_kind(mime: str) -> str | None:
    """What a ``Content-Type`` promises: ``html``, ``pdf``, ``json``, ``feed``, ``text``,
    ``sniff`` (no type, or a generic binary type that may hide a document) or ``None``
    (unsupported: images, audio, archives...)."""
    if not mime or mime in _BINARY_MAYBE_DOCUMENT:
        return "sniff"
    if mime in _HTML_TYPES:
        return "html"
    if mime in ("application/pdf", "application/x-pdf"):
        return "pdf"
    if mime in _FEED_TYPES:
        return "feed"
    if mime == "application/json" or mime.endswith("+json"):
        return "json"
    if mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith("+xml"):
        return "text"
    return None


def sniff_kind(body: bytes) -> str | None:
    """A kind for an untyped body: ``html`` when it starts with ``<``, ``text`` when it decodes
    as UTF-8, else ``None``."""
    if body.lstrip()[:1] == b"<":
        return "html"
    if b"\x00" in body[:4096]:
        return None
    try:
        body[:4096].decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the 4 KB window is still text.
        if exc.start < min(len(body), 4096) - 3:
            return None
    return "text"
