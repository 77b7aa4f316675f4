"""Runs a capability: the one call path between the tools and the providers.

Every answer a tool shows comes through here: from the cache when it holds a fresh one, else
from the chosen provider (:meth:`Selection.call <pi_web_tools.runtime.registry.Selection.call>`,
which checks the answer and removes every known key from it), and then into the cache. For
``web_fetch`` this is also where the fetch ladder runs: a page refused to a bot or needing
JavaScript is fetched again through the other configured fetchers.

The tools turn arguments into requests and answers into text; they never touch the cache or
another provider themselves.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..api.defaults import TOOL_FOR

__all__ = ["TOOL_OF", "decode", "fetch", "search", "summarize"]

#: The tool that serves each capability (its name keys the cache's time-to-live).
TOOL_OF = TOOL_FOR

T = TypeVar("T")


def decode(cls: type[T], value: Any) -> T | None:
    """A cached value back as the attrs class *cls*, or ``None`` when it has another shape
    (an entry written by another version: the caller asks again)."""
    import cattrs

    try:
        return _converter().structure(value, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None


_CONVERTER: Any = None


def _converter() -> Any:
    global _CONVERTER
    if _CONVERTER is None:
        import cattrs

        _CONVERTER = cattrs.Converter(forbid_extra_keys=True)
    return _CONVERTER


def _cache_key(chosen: Any, capability: str, request: Any) -> str:
    from . import cache

    return cache.make_key(TOOL_OF[capability], chosen.entry.type, chosen.entry.options, request)


def _through_cache(
    chosen: Any,
    capability: str,
    request: Any,
    ctx: Any,
    fresh: bool,
    cls: type[T],
) -> tuple[T, float | None]:
    """The answer to *request* and its cache age (``None``: asked now; the answer is cached)."""
    import attrs

    from . import cache

    settings = chosen.config.cache
    tool = TOOL_OF[capability]
    key = _cache_key(chosen, capability, attrs.asdict(request))
    hit = None if fresh else cache.get(settings, tool, key)
    if hit is not None:
        found = decode(cls, hit.value)
        if found is not None:
            return found, hit.age_seconds
    response = chosen.call(capability, request, ctx)
    cache.put(settings, tool, key, attrs.asdict(response))
    return response, None


def search(chosen: Any, request: Any, ctx: Any, *, fresh: bool = False) -> tuple[Any, float | None]:
    """One query's :class:`SearchResponse` and its cache age."""
    from ..api.types import SearchResponse

    return _through_cache(chosen, "search", request, ctx, fresh, SearchResponse)


def summarize(
    chosen: Any, request: Any, ctx: Any, *, fresh: bool = False
) -> tuple[Any, float | None]:
    """The :class:`SummaryResponse` for *request* and its cache age."""
    from ..api.types import SummaryResponse

    return _through_cache(chosen, "summarize", request, ctx, fresh, SummaryResponse)


# --- web_fetch: per-URL pages, the cache and the ladder ---------------------------------------


def _page_key(chosen: Any, url: str, modes: dict) -> str:
    return _cache_key(chosen, "fetch", {"url": url, "modes": sorted(modes)})


def fetch(
    chosen: Any,
    urls: list[str],
    modes: dict,
    need: int,
    ctx: Any,
    *,
    fresh: bool = False,
    ladder: bool = True,
) -> tuple[list[Any], list[float | None], tuple[str, ...]]:
    """Every URL's :class:`FetchedPage` in order, from the cache when it holds at least *need*
    characters, else from the provider (successes are cached); each page's cache age
    (``None``: fetched now); the API's warnings. With *ladder*, pages fetched now that were
    refused or need JavaScript climb the fetch ladder.

    A whole-request failure (key, credit, outage) raises the provider's error once.
    """
    import attrs
    from pi_hostspec import strip_control

    from ..api.types import FetchedPage, FetchRequest
    from . import cache

    settings = chosen.config.cache
    tool = TOOL_OF["fetch"]
    found: dict[str, tuple[Any, float | None]] = {}
    for url in urls:
        hit = None if fresh else cache.get(settings, tool, _page_key(chosen, url, modes))
        page = decode(FetchedPage, hit.value) if hit is not None else None
        if page is not None and (not page.more_text or len(page.text or "") >= need):
            found[url] = (page, hit.age_seconds)
    wanted = [url for url in dict.fromkeys(urls) if url not in found]
    warnings: tuple[str, ...] = ()
    if wanted:
        request = FetchRequest(urls=tuple(wanted), text_max_characters=need, **modes)
        response = chosen.call("fetch", request, ctx)
        warnings = response.warnings
        by_url = _by_url(response)
        for url in wanted:  # a provider must answer for every URL; never lose one silently
            page = _answer_for(by_url, url) or FetchedPage(
                url=url, ok=False, error="no result returned"
            )
            if page.text is not None:
                page = attrs.evolve(page, text=strip_control(page.text))
            if page.ok:
                cache.put(settings, tool, _page_key(chosen, url, modes), attrs.asdict(page))
            found[url] = (page, None)
    pages = [found[url][0] for url in urls]
    ages = [found[url][1] for url in urls]
    if ladder:
        pages = _climb(chosen, pages, ages, modes, need, ctx)
    return pages, ages, warnings


def _by_url(response: Any) -> dict[str, Any]:
    return {page.url: page for page in response.pages}


def _answer_for(by_url: dict[str, Any], url: str) -> Any:
    """The page answered for the requested *url*: answers come redacted, so a URL that carries
    a key is matched in its redacted form, and the page gets the URL as requested back (the
    tool's output is redacted again at its edge)."""
    import attrs

    from ..api.redaction import redact_secrets

    page = by_url.get(url) or by_url.get(redact_secrets(url))
    return attrs.evolve(page, url=url) if page is not None and page.url != url else page


#: Statuses with which sites refuse bots; another fetcher (an API with its own crawler) may pass.
_REFUSALS = {401, 403, 429}


def _needs_another_fetcher(page: Any) -> str | None:
    """Why *page* is worth fetching again through another provider, or ``None``."""
    if not page.ok and page.status in _REFUSALS:
        return f"the {{provider}} fetch was refused (HTTP {page.status})"
    if page.ok and page.escalate == "app shell":
        return "the {provider} fetch found an application shell (the content needs JavaScript)"
    if page.ok and page.escalate:
        return f"the {{provider}} fetch found {page.escalate}"
    return None


def _climb(
    chosen: Any,
    pages: list[Any],
    ages: list[float | None],
    modes: dict,
    need: int,
    ctx: Any,
) -> list[Any]:
    """The fetch ladder: a page refused to a bot (401, 403, 429) or that needs JavaScript is
    fetched again through the other configured providers that can fetch, in config order; the
    first that gives it text wins, and the page says which provider produced it."""
    import attrs

    from ..api.errors import ConfigError, ProviderError
    from ..api.types import FetchRequest
    from . import cache
    from .registry import resolve_provider

    # Pages from the cache already had their turn: reading on never climbs the ladder again.
    reasons = {
        page.url: _needs_another_fetcher(page)
        for page, age in zip(pages, ages, strict=True)
        if age is None
    }
    todo = [url for url, reason in reasons.items() if reason]
    if not todo:
        return pages
    config = chosen.config
    wanted = {name for name, on in modes.items() if on}
    rungs = [entry.name for entry in config.providers if entry.name != chosen.entry.name]
    better: dict[str, Any] = {}
    for name in rungs:
        if not todo:
            break
        try:
            rung = resolve_provider("fetch", name, config=config)
        except ConfigError:
            continue  # a provider that cannot fetch (or lacks a key) is not a rung
        if not wanted <= rung.type.fetch_modes:
            continue
        try:
            response = rung.call(
                "fetch", FetchRequest(urls=tuple(todo), text_max_characters=need, **modes), ctx
            )
        except ProviderError:
            continue
        by_url = _by_url(response)
        for url in list(todo):
            page = _answer_for(by_url, url)
            if page is not None and page.ok and (page.text or page.summary or page.highlights):
                reason = reasons[page.url].format(provider=chosen.entry.name)
                note = f"fetched through {rung.entry.name} ({rung.entry.type}): {reason}"
                better[page.url] = attrs.evolve(page, notes=(note, *page.notes))
                todo.remove(page.url)
                # Read on from the cache: the next window needs no ladder again.
                cache.put(
                    config.cache,
                    TOOL_OF["fetch"],
                    _page_key(chosen, page.url, modes),
                    attrs.asdict(better[page.url]),
                )
    if not better:
        return pages
    return [better.get(page.url, page) for page in pages]
