"""Acme's documentation site as a pi-web-tools site reader: the guide pages of docs.acme.example
read as Markdown through Acme's documentation API instead of the site's HTML."""

from __future__ import annotations

from urllib.parse import urlsplit

from pi_web_tools import Reader, ReaderError, Reading, hookimpl, text_field

API = "https://api.acme.example/v1/pages"


def read(url, web):
    """One guide page through the API; ``None`` for the site's other pages (the usual fetch
    reads them)."""
    path = urlsplit(url).path.strip("/")
    if not path.startswith("guide/"):
        return None
    response = web.get(
        f"{API}/{path}", headers={"Accept": "application/json"}, source="the Acme docs API"
    )
    if response.status == 404:
        raise ReaderError(f"HTTP 404: the Acme docs have no page {path}", status=404)
    if not response.ok:  # the API is down: the usual fetch reads the HTML page instead
        raise ReaderError(
            f"the Acme docs API answered HTTP {response.status}",
            status=response.status,
            fall_back=True,
        )
    page = response.json()  # a body that is not JSON is a clean ReaderError naming the API
    if not isinstance(page, dict) or not text_field(page.get("markdown")):
        raise ReaderError("the Acme docs API answered an unexpected shape", fall_back=True)
    return Reading(title=text_field(page.get("title")), text=page["markdown"])


ACME_DOCS_SITE = Reader(
    name="acme-docs-site",
    label="Acme docs",
    hosts=("docs.acme.example",),
    read=read,
    source="the Acme docs API",
    description="guide pages as Markdown",
)


@hookimpl
def register_readers(register):
    """Register the reader."""
    register(ACME_DOCS_SITE)
