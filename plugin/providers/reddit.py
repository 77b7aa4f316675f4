"""Reddit, said plainly: it cannot be read without an account.

Reddit closed anonymous access on 2026-05-29: its pages and its ``.json`` endpoints answer 403
to clients that are not logged in, whatever their User-Agent. Rather than download a refusal,
this reader says so at once. The answer is a refusal (HTTP 403), so the fetch ladder still
tries the fetchers the user configured for refused pages, a local browser among them.
"""

from __future__ import annotations

from typing import Any

from ..api import Reader, ReaderError, hookimpl

__all__ = ["REDDIT", "read"]

CLOSED = (
    "Reddit closed anonymous access on 2026-05-29: its pages and .json API answer 403 to "
    "clients that are not logged in, so it cannot be read keyless; a configured browser "
    "fetcher (see docs/browser.md) or another fetcher on the fetch ladder may read it, and "
    "web_search finds copies and discussions elsewhere"
)


def read(url: str, web: Any) -> None:
    """Every Reddit URL: the plain statement, as a refusal."""
    raise ReaderError(CLOSED, status=403, code="closed")


REDDIT = Reader(
    name="reddit",
    label="Reddit",
    hosts=("reddit.com", "*.reddit.com", "redd.it"),
    read=read,
    source="Reddit",
    description="says that anonymous access is closed (the fetch ladder may still try a browser)",
)


@hookimpl
def register_readers(register):
    """Register the Reddit statement."""
    register(REDDIT)
