"""HTML as plain text, for providers whose APIs answer with markup (snippets, summaries) and for
the page pipeline's whole-page fallback.

Every pattern here runs in linear time on hostile pages: no lazy ``.*?`` spans (a page of
unclosed ``<script>`` tags made them quadratic), and tag bodies stop at the next ``<``.
"""

from __future__ import annotations

import html
import re

__all__ = ["html_to_markdown", "html_to_text", "page_title"]

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


# --- fragments of known markup as Markdown ----------------------------------------------------

_FRAGMENT_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^<>]*)>")
_ATTRIBUTE = re.compile(r"""\b(href|class|alt)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)""", re.I)
_LANGUAGE = re.compile(r"\b(?:lang|language)-([\w+#.-]{1,30})")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = {"p", "div", "table", "section", "article", "details", "summary", "figure", "dl"}
_MAX_QUOTE_DEPTH = 4
_EMPHASIS = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~"}


def _attributes(text: str) -> dict[str, str]:
    return {
        match.group(1).lower(): html.unescape(match.group(2).strip("\"'"))
        for match in _ATTRIBUTE.finditer(text)
    }


class _Markdown:
    """The state of one :func:`html_to_markdown` pass."""

    def __init__(self) -> None:
        self.parts: list[list[str]] = [[]]  # one buffer per open blockquote
        self.lists: list[list[int]] = []  # [counter] per open list; 0: a bullet list
        self.pre = 0
        self.code = 0
        self.link: str | None = None
        self.link_start = 0
        self.code_start = 0
        self.quotes = 0

    @property
    def out(self) -> list[str]:
        return self.parts[-1]

    def ends_line(self) -> bool:
        tail = "".join(self.out[-2:])
        return not tail or tail.endswith("\n")

    def write(self, text: str) -> None:
        if text:
            self.out.append(text)

    def block(self, gap: str = "\n\n") -> None:
        """End the line, and leave *gap* (one or two newlines) before what follows."""
        had = 0
        while self.out and not self.out[-1].strip(" \n"):
            had = max(had, self.out.pop().count("\n"))
        if self.out:
            self.out[-1] = self.out[-1].rstrip(" ")
            self.out.append("\n" * max(had, len(gap)))

    def text(self, raw: str) -> None:
        value = html.unescape(raw).replace("\xa0", " ")
        if self.pre:
            self.write(value)
            return
        value = re.sub(r"\s+", " ", value)
        if self.ends_line():
            value = value.lstrip()
        self.write(value)

    def open(self, tag: str, attributes: str) -> None:
        if tag == "pre":
            self.block()
            found = _LANGUAGE.search(_attributes(attributes).get("class", ""))
            self.write(f"```{found.group(1) if found else ''}\n")
            self.pre += 1
        elif tag == "code":
            if self.pre:
                found = _LANGUAGE.search(_attributes(attributes).get("class", ""))
                if found and self.out and self.out[-1] == "```\n":
                    self.out[-1] = f"```{found.group(1)}\n"
            else:
                self.code += 1
                self.write("`")
                self.code_start = len(self.out)
        elif tag in _HEADINGS:
            self.block()
            self.write("#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCKS:
            self.block()
        elif tag == "br":
            self.write("\n")
        elif tag == "hr":
            self.block()
            self.write("---")
            self.block()
        elif tag in ("ul", "ol"):
            self.block("\n" if self.lists else "\n\n")
            self.lists.append([1 if tag == "ol" else 0])
        elif tag == "li":
            self.block("\n")
            depth = max(0, len(self.lists) - 1)
            counter = self.lists[-1] if self.lists else [0]
            marker = f"{counter[0]}." if counter[0] else "-"
            if counter[0]:
                counter[0] += 1
            self.write("  " * depth + marker + " ")
        elif tag == "blockquote":
            self.block()
            self.quotes += 1
            if len(self.parts) <= _MAX_QUOTE_DEPTH:  # deeper quotes are plain blocks: linear
                self.parts.append([])
        elif tag in _EMPHASIS and not self.pre:
            self.write(_EMPHASIS[tag])
        elif tag == "a":
            self.link = _attributes(attributes).get("href")
            self.link_start = len(self.out)
        elif tag == "img":
            alt = _attributes(attributes).get("alt", "").strip()
            if alt:
                self.write(f"[image: {alt}]")
        elif tag in ("td", "th"):
            self.write(" | ")
        elif tag == "tr":
            self.block("\n")

    def close(self, tag: str) -> None:
        if tag == "pre" and self.pre:
            self.pre -= 1
            if not self.ends_line():
                self.write("\n")
            self.write("```")
            self.block()
        elif tag == "code" and self.code:
            self.code -= 1
            inner = "".join(self.out[self.code_start :])
            if "`" in inner:  # a longer fence keeps the backticks inside verbatim
                self.out[self.code_start - 1] = "`` "
                self.write(" ``")
            else:
                self.write("`")
        elif tag in _HEADINGS or tag in _BLOCKS:
            self.block()
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()
            self.block("\n" if self.lists else "\n\n")
        elif tag == "blockquote" and self.quotes:
            self.quotes -= 1
            if self.quotes >= _MAX_QUOTE_DEPTH or len(self.parts) == 1:
                self.block()
                return
            inner = _tidy("".join(self.parts.pop()))
            self.write("\n".join(f"> {line}".rstrip() for line in inner.splitlines()))
            self.block()
        elif tag in _EMPHASIS and not self.pre:
            self.write(_EMPHASIS[tag])
        elif tag == "a" and self.link is not None:
            shown = "".join(self.out[self.link_start :]).strip()
            link = self.link
            self.link = None
            # A link whose text is a URL (often shortened with "...") shows the whole target;
            # other links keep their words only (inline link markup costs tokens, not meaning).
            if link.startswith(("http://", "https://")) and shown.startswith(("http", "www.")):
                del self.out[self.link_start :]
                self.write(link)

    def result(self) -> str:
        while self.quotes:
            self.close("blockquote")
        if self.pre:
            self.write("\n```")
        return _tidy("".join(self.out))


def _tidy(text: str) -> str:
    """Trailing spaces and runs of blank lines removed, except inside code fences."""
    kept: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = line.rstrip()
            if not line and (not kept or not kept[-1]):
                continue
        kept.append(line)
    return "\n".join(kept).strip("\n")


def html_to_markdown(fragment: str) -> str:
    """A fragment of simple markup (a Stack Exchange post, a Hacker News comment) as Markdown:
    paragraphs, headings, lists, quotes, emphasis, inline code and fenced code blocks kept
    verbatim; links keep their words (a link written as a URL shows its whole target).

    One linear pass over the tags (no parser, nothing to backtrack), after scripts, styles and
    comments are dropped: hostile markup costs time in proportion to its length.
    """
    state = _Markdown()
    text = _drop_hidden(fragment)
    position = 0
    for match in _FRAGMENT_TAG.finditer(text):
        state.text(text[position : match.start()])
        position = match.end()
        closing, tag = match.group(1), match.group(2).lower()
        if closing:
            state.close(tag)
        else:
            state.open(tag, match.group(3))
    state.text(text[position:])
    return state.result()
