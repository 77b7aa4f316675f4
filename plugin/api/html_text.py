"""HTML as plain text, for providers whose APIs answer with markup (snippets, summaries) and for
the page pipeline's whole-page fallback.

Every pattern here runs in linear time on hostile pages: no lazy ``.*?`` spans (a page of
unclosed ``<script>`` tags made them quadratic), and tag bodies stop at the next ``<``.
"""

from __future__ import annotations

import html
import re

__all__ = ["html_to_text", "page_title"]

_HIDDEN_OPENER = re.compile(r"<!--|<(script|style|noscript|template|svg|head)\b", re.IGNORECASE)
_BLOCK = re.compile(
    r"<\s*/?\s*(p|div|br|li|ul|ol|tr|h[1-6]|section|article|header|footer|nav|table|"
    r"blockquote|pre|hr|dd|dt|main|aside|figure|figcaption)\b[^<>]*>",
    re.IGNORECASE,
)
_TAG = re.compile(r"<[^<>]*>")


def _clean_line_text(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _drop_hidden(page: str) -> str:
    """*page* without comments and script/style/head/... elements, in one linear pass.

    An element that is never closed hides the rest of the page, as it does in a browser.
    """
    lower = page.lower()
    kept: list[str] = []
    position = 0
    while True:
        opener = _HIDDEN_OPENER.search(page, position)
        if opener is None:
            kept.append(page[position:])
            break
        kept.append(page[position : opener.start()])
        kept.append(" ")
        if opener.group(0) == "<!--":
            end = lower.find("-->", opener.end())
            position = end + 3
        else:
            end = lower.find(f"</{opener.group(1).lower()}", opener.end())
            position = lower.find(">", end) + 1 if end != -1 else 0
        if end == -1 or position <= 0:
            break
    return "".join(kept)


def html_to_text(page: str) -> str:
    """The whole page as plain text: scripts and styles dropped, tags stripped, entities unescaped."""
    text = _drop_hidden(page)
    text = _BLOCK.sub("\n", text)
    text = html.unescape(_TAG.sub(" ", text)).replace("\xa0", " ")
    return _clean_line_text(text)


def page_title(page: str) -> str | None:
    """The text of the first ``<title>`` element (found with plain searches: linear time)."""
    lower = page.lower()
    start = lower.find("<title")
    opened = lower.find(">", start) if start != -1 else -1
    end = lower.find("</title", opened) if opened != -1 else -1
    if end == -1:
        return None
    title = " ".join(html.unescape(_TAG.sub(" ", page[opened + 1 : end])).split())
    return title or None
