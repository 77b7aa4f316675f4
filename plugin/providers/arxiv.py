"""arXiv abstract pages as a site reader: the paper's metadata from arXiv's export API, then its
full text from the HTML version when arXiv has one, else from the PDF (both through the page
pipeline).

arXiv asks API clients for one request every three seconds: requests to its export API from
this process are spaced so (waiting within the call's deadline).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ..api import Reader, ReaderError, Reading, hookimpl

__all__ = ["ARXIV", "read"]

EXPORT_API = "https://export.arxiv.org/api/query"
SITE = "https://arxiv.org"
THE_API = "arXiv's export API"
#: arXiv's terms: at most one API request every three seconds.
API_SPACING_SECONDS = 3.0
MAX_METADATA_BYTES = 1024 * 1024
MAX_FULL_TEXT_BYTES = 32 * 1024 * 1024
_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")

_spacing_lock = threading.Lock()
_last_request = [0.0]


def _wait_turn(web: Any) -> None:
    """Keep API requests three seconds apart (within the call's deadline)."""
    with _spacing_lock:
        wait = _last_request[0] + API_SPACING_SECONDS - time.monotonic()
        if wait > 0:
            if time.monotonic() + wait > web.deadline - 1.0:
                raise ReaderError(
                    f"{THE_API} takes one request every {API_SPACING_SECONDS:g} s; try again in a moment",
                    status=429,
                    code="rate-limited",
                )
            time.sleep(wait)
        _last_request[0] = time.monotonic()


def _text(element: Any, name: str) -> str:
    found = element.find(name)
    return " ".join((found.text or "").split()) if found is not None else ""


def _metadata(web: Any, paper: str) -> dict:
    """The Atom entry of *paper*, as a dict of its fields."""
    import xml.etree.ElementTree as ElementTree

    _wait_turn(web)
    response = web.get(
        EXPORT_API, params={"id_list": paper}, max_bytes=MAX_METADATA_BYTES, source=THE_API
    )
    if not response.ok:
        raise ReaderError(
            f"{THE_API} answered HTTP {response.status}", status=response.status, fall_back=True
        )
    try:
        feed = ElementTree.fromstring(response.body)
    except ElementTree.ParseError:
        raise ReaderError(
            f"{THE_API} answered something that is not an Atom feed",
            code="bad-answer",
            fall_back=True,
        ) from None
    entry = feed.find(f"{_ATOM}entry")
    if (
        entry is None
        or "/api/errors" in _text(entry, f"{_ATOM}id")
        or not _text(entry, f"{_ATOM}title")
    ):
        raise ReaderError(f"HTTP 404: arXiv has no paper {paper}", status=404, code="not-found")
    primary = entry.find(f"{_ARXIV}primary_category")
    return {
        "id": _text(entry, f"{_ATOM}id").rsplit("/abs/", 1)[-1],
        "title": _text(entry, f"{_ATOM}title"),
        "summary": (entry.findtext(f"{_ATOM}summary") or "").strip(),
        "authors": [_text(author, f"{_ATOM}name") for author in entry.findall(f"{_ATOM}author")],
        "published": _text(entry, f"{_ATOM}published")[:10],
        "updated": _text(entry, f"{_ATOM}updated")[:10],
        "categories": [
            c.get("term", "") for c in entry.findall(f"{_ATOM}category") if c.get("term")
        ],
        "primary": primary.get("term", "") if primary is not None else "",
        "doi": _text(entry, f"{_ARXIV}doi"),
        "journal": _text(entry, f"{_ARXIV}journal_ref"),
        "comment": _text(entry, f"{_ARXIV}comment"),
    }


def _full_text(web: Any, paper: str) -> tuple[str, Reading | None]:
    """The paper's text: from ``arxiv.org/html/{id}``, else ``arxiv.org/pdf/{id}``."""
    for kind in ("html", "pdf"):
        response = web.get(
            f"{SITE}/{kind}/{paper}", max_bytes=MAX_FULL_TEXT_BYTES, source=f"arxiv.org/{kind}"
        )
        if response.ok:
            return kind, web.to_text(response)
        if response.status != 404:
            break
    return "", None


def read(url: str, web: Any) -> Reading | None:
    """``arxiv.org/abs/{id}``: metadata and full text."""
    parts = urlsplit(url)
    found = re.match(r"^/abs/(.+?)/?$", parts.path)
    if not found or not _ID.match(found.group(1)):
        return None
    paper = found.group(1)
    facts = _metadata(web, paper)
    kind, body = _full_text(web, paper)
    lines = [
        f"# {facts['title']}",
        "",
        f"Authors: {', '.join(a for a in facts['authors'] if a) or '?'}",
    ]
    dates = f"Submitted {facts['published']}" + (
        f", updated {facts['updated']}"
        if facts["updated"] and facts["updated"] != facts["published"]
        else ""
    )
    about = [f"arXiv:{facts['id'] or paper}", dates]
    if facts["categories"]:
        named = dict.fromkeys(c for c in [facts["primary"], *facts["categories"]] if c)
        about.append(f"categories: {', '.join(named)}")
    lines.append(" · ".join(about))
    for label, key in (("DOI", "doi"), ("Journal reference", "journal"), ("Comments", "comment")):
        if facts[key]:
            lines.append(f"{label}: {facts[key]}")
    lines += ["", "## Abstract", "", facts["summary"]]
    notes = []
    if body is not None and body.text.strip():
        source = "its HTML version" if kind == "html" else "its PDF"
        lines += ["", f"## Full text (from {source})", "", body.text.strip()]
        notes += list(body.notes)
    else:
        notes.append(f"the full text could not be read: {SITE}/pdf/{paper}")
    return Reading(
        title=f"{facts['title']} · arXiv:{facts['id'] or paper}",
        text="\n".join(lines),
        notes=tuple(notes),
        source="arXiv's export API and arxiv.org",
        immutable=bool(re.search(r"v\d+$", paper)),
    )


ARXIV = Reader(
    name="arxiv",
    label="arXiv",
    hosts=("arxiv.org", "www.arxiv.org"),
    read=read,
    source="arXiv's export API",
    description="abstract pages: metadata and full text (HTML version, else PDF)",
)


@hookimpl
def register_readers(register):
    """Register the arXiv reader."""
    register(ARXIV)
