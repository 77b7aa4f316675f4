"""Wikipedia articles as a site reader, through Wikipedia's REST API: the article's Parsoid
HTML (``/api/rest_v1/page/html/{title}``), read by the page pipeline like any page, without the
site's menus. Any language edition, desktop or mobile URL.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ..api import Reader, ReaderError, Reading, hookimpl

__all__ = ["WIKIPEDIA", "read"]

THE_API = "Wikipedia's REST API"
MAX_BYTES = 16 * 1024 * 1024
#: Namespaces the REST API does not serve as articles.
_NOT_ARTICLES = ("Special:",)
_TITLE_SAFE = "()!*,;:@$~'"


def _title(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.path.startswith("/wiki/"):
        title = unquote(parts.path[len("/wiki/") :])
    elif parts.path == "/w/index.php":
        query = parse_qs(parts.query)
        if set(query) - {"title", "oldid"}:
            return None
        title = query.get("title", [""])[0]
    else:
        return None
    if not title or title.startswith(_NOT_ARTICLES):
        return None
    return title.replace(" ", "_")


def read(url: str, web: Any) -> Reading | None:
    """``{lang}.wikipedia.org/wiki/{title}``: the article through the REST API."""
    parts = urlsplit(url)
    title = _title(url)
    host = (parts.hostname or "").lower()
    if title is None or host.count(".") < 2:
        return None
    edition = host.replace(".m.wikipedia.org", ".wikipedia.org")
    # The title as MediaWiki writes it in URLs (parentheses and colons kept, a slash encoded).
    api = f"https://{edition}/api/rest_v1/page/html/{quote(title, safe=_TITLE_SAFE)}"
    response = web.get(api, params={"redirect": "true"}, max_bytes=MAX_BYTES, source=THE_API)
    shown = title.replace("_", " ")
    if response.status == 404:
        raise ReaderError(
            f"HTTP 404: {edition} has no article {shown}", status=404, code="not-found"
        )
    if not response.ok:
        raise ReaderError(
            f"{THE_API} answered HTTP {response.status}", status=response.status, fall_back=True
        )
    found = web.to_text(response)
    return Reading(
        title=f"{found.title or shown} · Wikipedia",
        text=found.text,
        notes=found.notes,
        final_url=f"https://{edition}/wiki/{quote(title, safe=_TITLE_SAFE)}"
        if edition != host
        else None,
    )


WIKIPEDIA = Reader(
    name="wikipedia",
    label="Wikipedia",
    hosts=("*.wikipedia.org",),
    read=read,
    source=THE_API,
    description="articles of every language edition",
)


@hookimpl
def register_readers(register):
    """Register the Wikipedia reader."""
    register(WIKIPEDIA)
