"""Hacker News items as a site reader, through the Algolia HN API, which answers a story with
its whole comment tree in one request.

Comments are shown depth-first, each indented by its depth and headed by its author and date;
a deleted comment keeps its place. The tree is walked without recursion and bounded (deep
threads are flattened past :data:`MAX_DEPTH`, and at most :data:`MAX_COMMENTS` are shown).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..api import (
    Reader,
    ReaderError,
    Reading,
    hookimpl,
    html_to_markdown,
    list_field,
    number_field,
    text_field,
)

__all__ = ["HACKERNEWS", "read"]

API = "https://hn.algolia.com/api/v1/items"
THE_API = "the Hacker News API (Algolia)"
MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 12
MAX_COMMENTS = 5000


def _comments(root: dict) -> tuple[list[str], int]:
    """The comment tree under *root*, depth-first, as lines; and how many comments it holds."""
    lines: list[str] = []
    count = 0
    stack = [(child, 0) for child in reversed(list_field(root.get("children")))]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict):
            continue
        count += 1
        if count <= MAX_COMMENTS:
            indent = "  " * min(depth, MAX_DEPTH)
            author = text_field(node.get("author")) or "[deleted]"
            when = (text_field(node.get("created_at")) or "")[:10]
            text = html_to_markdown(text_field(node.get("text")) or "") or "[deleted]"
            lines.append(f"{indent}- {author} · {when}".rstrip(" ·"))
            lines += [f"{indent}  {line}".rstrip() for line in text.splitlines()]
        children = list_field(node.get("children"))
        stack.extend((child, depth + 1) for child in reversed(children))
    return lines, count


def read(url: str, web: Any) -> Reading | None:
    """``news.ycombinator.com/item?id=N``: the item and its whole comment tree."""
    parts = urlsplit(url)
    if parts.path != "/item":
        return None
    item_id = parse_qs(parts.query).get("id", [""])[0]
    if not re.fullmatch(r"\d{1,12}", item_id):
        return None
    response = web.get(f"{API}/{item_id}", max_bytes=MAX_BYTES, source=THE_API)
    if response.status == 404:
        raise ReaderError(
            f"HTTP 404: Hacker News has no item {item_id}", status=404, code="not-found"
        )
    if not response.ok:
        raise ReaderError(
            f"{THE_API} answered HTTP {response.status}", status=response.status, fall_back=True
        )
    if response.truncated:
        raise ReaderError(
            f"{THE_API} answered more than 16 MB for item {item_id}; not read", fall_back=True
        )
    item = response.json()
    if not isinstance(item, dict) or number_field(item.get("id")) is None:
        raise ReaderError(
            f"{THE_API} answered an unexpected shape for item {item_id}",
            code="bad-answer",
            fall_back=True,
        )
    kind = text_field(item.get("type")) or "item"
    title = text_field(item.get("title"))
    heading = title or f"{kind} {item_id} by {text_field(item.get('author')) or '?'}"
    facts = [f"Hacker News {kind} {item_id}"]
    if number_field(item.get("points")) is not None:
        facts.append(f"{int(item['points'])} points")
    facts.append(f"by {text_field(item.get('author')) or '[deleted]'}")
    facts.append((text_field(item.get("created_at")) or "?")[:10])
    lines = [f"# {heading}", "", " · ".join(facts)]
    if text_field(item.get("url")):
        lines.append(f"Link: {item['url']}")
    if number_field(item.get("parent_id")) is not None:
        lines.append(f"In reply to: https://news.ycombinator.com/item?id={int(item['parent_id'])}")
    if text_field(item.get("text")):
        lines += ["", html_to_markdown(item["text"])]
    comments, count = _comments(item)
    notes = []
    if comments:
        lines += ["", f"## Comments ({count})", "", *comments]
    if count > MAX_COMMENTS:
        notes.append(f"the first {MAX_COMMENTS} of {count} comments are shown")
    return Reading(title=f"{heading} · Hacker News", text="\n".join(lines), notes=tuple(notes))


HACKERNEWS = Reader(
    name="hackernews",
    label="Hacker News",
    hosts=("news.ycombinator.com",),
    read=read,
    source=THE_API,
    description="items with their whole comment tree",
)


@hookimpl
def register_readers(register):
    """Register the Hacker News reader."""
    register(HACKERNEWS)
