"""What else a site offers, asked for only when it helps: URLs that exist when a page is not
found (404/410), and a site root's ``/llms.txt``.

:func:`not_found_help` looks in the site's ``/llms.txt`` and ``sitemap.xml`` (a sitemap index:
its two best-named sitemaps) for up to :data:`MAX_SUGGESTIONS` pages whose paths share the most
words with the missing one. When neither lists any, it gives a ready ``web_search`` call
restricted to the site (``site:``). :func:`llms_txt` says whether a site root offers
``/llms.txt``. Every request goes through the readers' web (:class:`SiteWeb`: the one HTTP
path, the network guard on every hop) and is bounded in number, bytes and time; a failure of any
of them only means less help.
"""

from __future__ import annotations

import difflib
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urljoin, urlsplit

from attrs import frozen

__all__ = ["MAX_SUGGESTIONS", "Help", "is_site_root", "llms_txt", "not_found_help", "search_call"]

MAX_SUGGESTIONS = 5
#: The longest the help for one URL may take, and the bytes of each file it reads.
HELP_SECONDS = 5.0
HELP_BYTES = 1024 * 1024
#: Child sitemaps of a sitemap index read at most.
CHILD_SITEMAPS = 2
#: The llms.txt probe of a site root: its time and bytes.
LLMS_SECONDS = 3.0
LLMS_BYTES = 256 * 1024
_LOC = re.compile(r"<loc>\s*([^<\s]{1,2048})\s*</loc>", re.I)
_MD_LINK = re.compile(r"\]\(\s*([^()\s]{1,2048})\s*\)")
_WORD = re.compile(r"[a-z0-9]+")
_NOISE = frozenset(
    {"html", "htm", "php", "aspx", "md", "index", "www", "en", "us", "latest", "stable"}
)


@frozen(kw_only=True)
class Help:
    """The help for a missing page: URLs that exist (*suggestions*) and where they were found
    (*found_in*), else a ready ``web_search`` call (*search*)."""

    suggestions: tuple[str, ...] = ()
    found_in: str = ""
    search: str | None = None

    def words(self) -> str:
        """The help as words to add to the page's error."""
        if self.suggestions:
            return f"these pages of the site exist (listed in its {self.found_in})"
        if self.search:
            return f"search the site: web_search {self.search}"
        return ""


def _words(path: str) -> list[str]:
    return [w for w in _WORD.findall(path.lower()) if w not in _NOISE]


def search_call(url: str) -> str:
    """A ``web_search`` call (its JSON arguments) for the page *url* meant, on its site."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    words = _words(parts.path)[-4:]
    query = f"site:{host} {' '.join(words)}".strip()
    return json.dumps({"queries": [query]}, ensure_ascii=False)


def _same_site(a: str, b: str) -> bool:
    return a.lower().removeprefix("www.") == b.lower().removeprefix("www.")


def _rank(dead: str, candidates: list[str]) -> list[str]:
    """The candidates closest to *dead*: most shared path words, then the most similar path."""
    want = set(_words(urlsplit(dead).path))
    dead_path = urlsplit(dead).path.rstrip("/")
    scored = []
    for url in dict.fromkeys(candidates):
        path = urlsplit(url).path.rstrip("/")
        if path == dead_path:
            continue
        have = set(_words(path))
        shared = len(want & have)
        similar = difflib.SequenceMatcher(None, dead_path, path).ratio()
        if shared == 0 and similar < 0.75:
            continue
        union = len(want | have) or 1
        scored.append((shared / union + 0.3 * similar, url))
    scored.sort(key=lambda item: -item[0])
    return [url for _, url in scored[:MAX_SUGGESTIONS]]


def _web(deadline: float, cancel: Any, allow_private: bool, seconds: float) -> Any:
    from .reader_web import SiteWeb

    return SiteWeb(
        None,
        deadline=min(deadline, time.monotonic() + seconds),
        cancel=cancel,
        allow_private=allow_private,
        source="the site",
    )


def _get_text(web: Any, url: str, max_bytes: int) -> str | None:
    """The text of *url* when it answers 2xx with something that is not an HTML page."""
    from ..api.readers import ReaderError

    try:
        response = web.get(url, max_bytes=max_bytes)
    except ReaderError:
        return None
    if not response.ok or response.content_type in ("text/html", "application/xhtml+xml"):
        return None
    from .. import pages

    if pages.looks_like_html(response.body):
        return None
    return response.text()


def _links(text: str, base: str, host: str) -> list[str]:
    found = [urljoin(base, link) for link in _LOC.findall(text) + _MD_LINK.findall(text)]
    return [
        link
        for link in found
        if urlsplit(link).scheme in ("http", "https")
        and _same_site(urlsplit(link).hostname or "", host)
    ]


def not_found_help(
    url: str, *, deadline: float, cancel: Any = None, allow_private: bool = False
) -> Help:
    """Help for *url*, which answered 404 or 410 (see the module's docstring)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    origin = f"{parts.scheme}://{parts.netloc}"
    web = _web(deadline, cancel, allow_private, HELP_SECONDS)
    files = {"llms.txt": f"{origin}/llms.txt", "sitemap.xml": f"{origin}/sitemap.xml"}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="site-help") as pool:
        texts = dict(
            zip(
                files,
                pool.map(lambda u: _get_text(web, u, HELP_BYTES), files.values()),
                strict=True,
            )
        )
    found: dict[str, list[str]] = {}
    if texts["llms.txt"]:
        found["llms.txt"] = _links(texts["llms.txt"], origin + "/", host)
    sitemap = texts["sitemap.xml"]
    if sitemap:
        listed = _links(sitemap, origin + "/", host)
        if "<sitemapindex" in sitemap[:4096].lower():  # an index of sitemaps: read the best two
            children = _rank(url, listed)[:CHILD_SITEMAPS] or listed[:CHILD_SITEMAPS]
            listed = []
            for child in children:
                listed += _links(_get_text(web, child, HELP_BYTES) or "", origin + "/", host)
        found["sitemap.xml"] = listed
    for name in ("llms.txt", "sitemap.xml"):
        ranked = _rank(url, found.get(name, []))
        if ranked:
            return Help(suggestions=tuple(ranked), found_in=name)
    return Help(search=search_call(url))


def is_site_root(url: str) -> bool:
    """Whether *url* is a site's root page (no path, no query)."""
    parts = urlsplit(url)
    return parts.path in ("", "/") and not parts.query


def llms_txt(
    url: str, *, deadline: float, cancel: Any = None, allow_private: bool = False
) -> str | None:
    """The URL of the site's ``/llms.txt`` when the site root *url* offers one, else ``None``."""
    parts = urlsplit(url)
    link = f"{parts.scheme}://{parts.netloc}/llms.txt"
    web = _web(deadline, cancel, allow_private, LLMS_SECONDS)
    text = _get_text(web, link, LLMS_BYTES)
    return link if text and text.strip() else None
