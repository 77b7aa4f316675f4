"""web_fetch's pages in the answer cache: one entry per URL and fetch modes, saying which
provider made it (``via``), so a call that names its provider is served only that provider's
pages, and a failure the fetch ladder paid for is remembered briefly."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs
import cattrs

from ..api.defaults import TOOL_FOR
from ..api.types import FetchedPage
from . import cache
from .registry import Selection

__all__ = [
    "DEFAULT_CALL_SECONDS",
    "LADDER",
    "call_seconds",
    "decode",
    "key_for",
    "page_key",
    "store_page",
    "with_extra",
]

#: Seconds a call runs when its provider sets no ``timeoutSeconds`` (the cache's deadline).
DEFAULT_CALL_SECONDS = 30.0
#: ``via`` of cached pages that the ladder made (failures it paid for): never served to a call
#: that names its provider.
LADDER = "(fetch ladder)"

_CONVERTER = cattrs.Converter(forbid_extra_keys=True)
T = TypeVar("T")


def decode(cls: type[T], value: Any) -> T | None:
    """A cached value back as the attrs class *cls*, or ``None`` when it has another shape
    (an entry written by another version: the caller asks again)."""
    try:
        return _CONVERTER.structure(value, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None


def call_seconds(chosen: Selection) -> float:
    """How long a call to *chosen* may take: its ``timeoutSeconds``, else the default."""
    return float(getattr(chosen.entry.options, "timeout_seconds", None) or DEFAULT_CALL_SECONDS)


def key_for(chosen: Selection, capability: str, request: Any) -> str:
    """The cache key of *request* to *chosen*'s *capability*."""
    return cache.make_key(TOOL_FOR[capability], chosen.entry.type, chosen.entry.options, request)


def page_key(chosen: Selection, url: str, modes: dict[str, bool]) -> str:
    """The cache key of one URL's page fetched by *chosen* with *modes*."""
    wanted = sorted(name for name, on in modes.items() if on)
    return key_for(chosen, "fetch", {"url": url, "modes": wanted})


def _brief(page: FetchedPage) -> bool:
    """A degraded answer (extraction cut short, an application shell, no text): kept briefly."""
    return bool(page.escalate or page.degraded)


def store_page(
    chosen: Selection,
    url: str,
    modes: dict[str, bool],
    page: FetchedPage,
    via: str,
    budget: cache.Budget,
    ttl: float | None = None,
    immutable: bool = False,
    reader_turn: str | None = None,
) -> None:
    """Cache *page* for *url* under *chosen*'s key, made by *via* (a provider's name, a
    reader, or :data:`LADDER`); a degraded page only briefly unless *ttl* says otherwise; an
    *immutable* one (content at a fixed version) for days. *reader_turn* names the site reader
    that claimed *url* and left it to *via* (see :func:`~.run.fetch`)."""
    if ttl is None and _brief(page):
        ttl = cache.BRIEF_TTL_SECONDS
    extra = {} if ttl is None else {"ttl": ttl}
    cache.put(
        chosen.config.cache,
        TOOL_FOR["fetch"],
        page_key(chosen, url, modes),
        {"via": via, "page": attrs.asdict(page), "readerTurn": reader_turn},
        budget=budget,
        immutable=immutable and not _brief(page),
        **extra,
    )


def with_extra(page: FetchedPage, extra: str) -> FetchedPage:
    """*page* with *extra* said: in its error when it failed, else as a note."""
    if page.ok:
        return attrs.evolve(page, notes=(*page.notes, extra))
    return attrs.evolve(page, error=f"{page.error or 'failed'}; {extra}")
