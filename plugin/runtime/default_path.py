"""What ``web_fetch``'s default path (a call that names no ``provider``) adds around the chosen
fetcher: site readers first, help on a page that is not found, a site root's ``llms.txt``.

- :func:`read_sites`: URLs a site reader claims are read through the site's own API
  (:mod:`.readers`) before any fetcher is given them; their pages are entered exactly like a
  fetcher's (control characters stripped, keys redacted, cached; content at a fixed version kept
  long). A reader that fell back leaves a note for the usual fetch's page.
- :func:`help_on_not_found`: a page fetched now that answered 404 or 410 gets URLs that exist
  (a reader's own, else the site's ``llms.txt`` or ``sitemap.xml`` when the page was fetched
  on this machine), else a ready ``web_search`` call; and is remembered a while, so the same
  guess fails at once with the same help (:func:`remembered`).
- :func:`with_llms_txt`: a site root's page says when the site offers ``/llms.txt``.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs
from pi_hostspec import strip_control
from pi_hostspec.types import ToolContext

from ..api import redaction
from ..api.types import FetchedPage
from . import cache, readers, site_help
from .page_cache import store_page, with_extra
from .registry import Selection

__all__ = [
    "DEAD",
    "DEAD_URL_SECONDS",
    "help_on_not_found",
    "read_sites",
    "remembered",
    "with_llms_txt",
    "with_note",
]

#: Statuses of a page that does not exist; such a page gets help and is remembered a while.
DEAD = frozenset({404, 410})
#: How long a URL that answered 404 or 410 fails at once, with the same help.
DEAD_URL_SECONDS = 600.0


def _reads_privately(chosen: Selection) -> bool:
    """Whether the readers' and the help's requests may reach private networks: the default
    fetcher is one on this machine whose options allow it."""
    return bool(
        chosen.type.fetches_locally
        and getattr(chosen.entry.options, "allow_private_network", False)
    )


def _cancel(ctx: ToolContext | None):  # noqa: ANN202 - an Event or None
    return getattr(ctx, "cancel", None)


def read_sites(
    chosen: Selection,
    urls: list[str],
    modes: dict[str, bool],
    ctx: ToolContext | None,
    deadline: float,
    budget: cache.Budget,
) -> tuple[dict[str, FetchedPage], dict[str, str]]:
    """The pages site readers read of *urls*, and the notes of the URLs a reader left to the
    usual fetch."""
    if modes.get("highlights") or modes.get("summary"):
        return {}, {}  # highlights and summaries are a service's; readers give text
    outcomes = readers.read(
        urls, chosen.config, ctx, deadline, allow_private=_reads_privately(chosen)
    )
    pages: dict[str, FetchedPage] = {}
    notes: dict[str, str] = {}
    for url, outcome in outcomes.items():
        if outcome.page is None:
            if outcome.note:
                notes[url] = redaction.redact_secrets(outcome.note)
            continue
        page = redaction.redact_value(outcome.page)
        if page.text is not None:
            page = attrs.evolve(page, text=strip_control(page.text))
        if page.ok:
            store_page(
                chosen,
                url,
                modes,
                page,
                f"(reader {outcome.reader})",
                budget,
                immutable=outcome.immutable,
            )
        pages[url] = page
    return pages, notes


def with_note(page: FetchedPage, note: str) -> FetchedPage:
    """*page* with *note* said first (or added to its error when it failed)."""
    if page.ok:
        return attrs.evolve(page, notes=(note, *page.notes))
    return with_extra(page, note)


def with_llms_txt(
    chosen: Selection, url: str, page: FetchedPage, ctx: ToolContext | None, deadline: float
) -> FetchedPage:
    """*page*, with a note when it is a site's root fetched on this machine and the site
    offers ``/llms.txt``."""
    where = page.final_url or url
    if not (page.ok and chosen.type.fetches_locally and site_help.is_site_root(where)):
        return page
    link = site_help.llms_txt(
        where, deadline=deadline, cancel=_cancel(ctx), allow_private=_reads_privately(chosen)
    )
    if link is None:
        return page
    return with_note(page, f"this site offers {link}: an index of its pages for language models")


def help_on_not_found(
    chosen: Selection,
    pages: list[FetchedPage],
    ages: list[float | None],
    modes: dict[str, bool],
    ctx: ToolContext | None,
    deadline: float,
    budget: cache.Budget,
    by_readers: set[str],
    fell_back: Collection[str] = (),
) -> list[FetchedPage]:
    """*pages*, those fetched now that answered 404 or 410 with help (see the module), each
    remembered for :data:`DEAD_URL_SECONDS`, unless a reader fell back on it (its cause, a
    spent limit, may clear at once: the next call tries the reader again)."""
    helped: dict[str, FetchedPage] = {}
    for page, age in zip(pages, ages, strict=True):
        if age is not None or page.ok or page.status not in DEAD or page.url in helped:
            continue
        by_reader = page.url in by_readers
        if page.suggestions:
            found = page
        elif by_reader or not chosen.type.fetches_locally:
            found = with_extra(
                page, f"search the site: web_search {site_help.search_call(page.url)}"
            )
        else:
            offered = site_help.not_found_help(
                page.final_url or page.url,
                deadline=deadline,
                cancel=_cancel(ctx),
                allow_private=_reads_privately(chosen),
            )
            found = attrs.evolve(page, suggestions=offered.suggestions)
            if offered.words():
                found = with_extra(found, offered.words())
        via = "(reader)" if by_reader else chosen.entry.name
        if page.url not in fell_back:
            store_page(chosen, page.url, modes, found, via, budget, ttl=DEAD_URL_SECONDS)
        helped[page.url] = found
    return [
        helped.get(page.url, page) if age is None else page
        for page, age in zip(pages, ages, strict=True)
    ]


def remembered(page: FetchedPage, age: float) -> FetchedPage:
    """A cached page that was not found, saying so and until when."""
    if page.ok or page.status not in DEAD:
        return page
    return with_extra(
        page,
        f"this URL answered HTTP {page.status} {age:.0f} s ago and is remembered for "
        f"{DEAD_URL_SECONDS / 60:g} minutes; pass fresh: true to try again now",
    )
