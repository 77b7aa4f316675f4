"""Runs a capability: the one call path between the tools and the providers.

Every answer a tool shows comes through here: from the cache when it holds a fresh one, else
from the chosen provider (:meth:`Selection.call <pi_web_tools.runtime.registry.Selection.call>`,
which checks the answer and removes every known key from it), and then into the cache. For
``web_fetch`` each URL is a cache entry of its own (:mod:`.page_cache`), a URL the chosen
fetcher may not be given is refused before it leaves (:mod:`.handoff`), and a page refused to a
bot or needing JavaScript climbs the fetch ladder (:mod:`.ladder`). On the default path (no
``provider`` named), site readers read the URLs they claim first, a page that is not found gets
help, and a site root its ``llms.txt`` (:mod:`.default_path`). For ``web_search`` a query whose
call named no provider fails over to the next search provider when its own fails for a reason
another does not share (:func:`search_in_turn`).

The tools turn arguments into requests and answers into text; they never touch the cache or
another provider themselves.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TypeVar, cast

import attrs
from attrs import frozen
from pi_hostspec import strip_control
from pi_hostspec.types import ToolContext

from ..api.defaults import TOOL_FOR
from ..api.errors import ProviderError
from ..api.retry import another_provider_ready
from ..api.types import (
    FetchedPage,
    FetchRequest,
    SearchRequest,
    SearchResponse,
    SummarizeRequest,
    SummaryResponse,
    one_line,
)
from . import cache, default_path, readers, state
from .config import Config
from .handoff import base_url_refusal, handoff_refusal, label, refusals
from .ladder import Ladder, answer_for, needs_another_fetcher, rungs
from .page_cache import (
    LADDER,
    call_seconds,
    decode,
    key_for,
    page_key,
    store_page,
    with_extra,
)
from .registry import Selection, provider_types

__all__ = [
    "OTHER_FETCHER",
    "TOOL_OF",
    "Served",
    "fetch",
    "search",
    "search_in_turn",
    "summarize",
    "warnings",
]

#: The tool that serves each capability (its name keys the cache's time-to-live).
TOOL_OF = TOOL_FOR
#: The ``code`` of a page a provider cannot fetch but another fetcher could (Kagi Extract and
#: an http URL): the runtime adds which of the user's providers to name.
OTHER_FETCHER = "other-fetcher"

T = TypeVar("T")


def warnings(config: Config) -> list[str]:
    """The config's warnings and the cache's (files moved aside, a damaged database), for a
    tool's ``details.warnings``."""
    return [*map(str, config.warnings), *cache.notices()]


def _through_cache(
    chosen: Selection,
    capability: str,
    request: SearchRequest | SummarizeRequest,
    ctx: ToolContext | None,
    fresh: bool,
    cls: type[T],
) -> tuple[T, float | None]:
    """The answer to *request* and its cache age (``None``: asked now; the answer is cached)."""
    settings = chosen.config.cache
    tool = TOOL_OF[capability]
    budget = cache.Budget(call_seconds(chosen))
    key = key_for(chosen, capability, attrs.asdict(request))
    hit = None if fresh else cache.get(settings, tool, key, budget=budget)
    if hit is not None:
        found = decode(cls, hit.value)
        if found is not None:
            return found, hit.age_seconds
    response = chosen.call(capability, request, ctx)
    cache.put(settings, tool, key, attrs.asdict(response), budget=budget)
    return cast(T, response), None  # check_response made sure it is a *cls*


def search(
    chosen: Selection, request: SearchRequest, ctx: ToolContext | None, *, fresh: bool = False
) -> tuple[SearchResponse, float | None]:
    """One query's :class:`SearchResponse` and its cache age. A self-hosted provider's address
    must pass :func:`~.handoff.base_url_refusal` first."""
    if chosen.type.self_hosted:
        refusal = base_url_refusal(chosen, time.monotonic() + call_seconds(chosen))
        if refusal is not None:
            base_url = getattr(chosen.entry.options, "base_url", "")
            raise ProviderError(
                f"{label(chosen)} at {base_url} refused: {refusal.said}",
                provider=chosen.entry.name,
                code="refused",
            )
    return _through_cache(chosen, "search", request, ctx, fresh, SearchResponse)


@frozen
class Served:
    """A query's answer and who gave it: the *response*, its cache *age*, the provider that
    answered (*selection*) and each provider before it that failed, with its error
    (*passed*), in order."""

    response: SearchResponse
    age: float | None
    selection: Selection
    passed: tuple[tuple[Selection, ProviderError], ...] = ()


def search_in_turn(
    chain: Sequence[Selection],
    request: SearchRequest,
    ctx: ToolContext | None,
    *,
    fresh: bool = False,
) -> Served:
    """Search failover: the first answer of *chain*'s providers, asked in order. A provider
    that fails for a reason of its own (its error has an
    :class:`~pi_web_tools.api.errors.ErrorKind`: authentication, quota, rate limit, timeout,
    unreachable, outage) hands the query to the next; any other failure (a bad request, a
    refusal, cancellation) ends it there. While a next provider stands ready, a failing one is
    not retried: the next answers sooner than a backoff would. When every provider failed, one
    error names each and what it answered."""
    passed: list[tuple[Selection, ProviderError]] = []
    for index, selection in enumerate(chain):
        last = index == len(chain) - 1
        try:
            with another_provider_ready(not last):
                response, age = search(selection, request, ctx, fresh=fresh)
        except ProviderError as exc:
            if exc.kind is not None and not last:
                passed.append((selection, exc))
                continue
            if not passed:
                raise
            tried = [*passed, (selection, exc)]
            raise ProviderError(
                "every search provider failed: "
                + "; ".join(f"{s.entry.name}: {one_line(e.message, 300)}" for s, e in tried),
                provider=selection.entry.name,
                status=exc.status,
                code=exc.code,
                kind=exc.kind,
            ) from None
        return Served(response=response, age=age, selection=selection, passed=tuple(passed))
    raise ValueError("search_in_turn needs at least one provider")


def summarize(
    chosen: Selection, request: SummarizeRequest, ctx: ToolContext | None, *, fresh: bool = False
) -> tuple[SummaryResponse, float | None]:
    """The :class:`SummaryResponse` for *request* and its cache age. The URL passes the same
    hand-off check as a page for ``web_fetch`` (:func:`~.handoff.handoff_refusal`): a private,
    loopback, metadata or single-label host reaches no summarizer that is not allowed private
    networks."""
    refusal = handoff_refusal(request.url, chosen, time.monotonic() + call_seconds(chosen))
    if refusal is not None:
        raise ProviderError(str(refusal), provider=chosen.entry.name, code="refused")
    return _through_cache(chosen, "summarize", request, ctx, fresh, SummaryResponse)


# --- web_fetch: per-URL pages, the cache and the ladder ---------------------------------------


def _reader_turn(chosen: Selection, url: str) -> str | None:
    """The name of the site reader (on) that claims *url*, or ``None``."""
    reader = readers.claimant(url, chosen.config)
    return reader.name if reader is not None else None


def _cached_page(
    hit: cache.Hit | None, chosen: Selection, ladder: bool, url: str
) -> FetchedPage | None:
    """The page of a cache hit, or ``None``. A call that names its provider (no ladder) gets
    only pages that provider made itself. A call that may climb the ladder does not get a page
    that needs another fetcher (an application shell, a refusal) which a call naming its
    provider stored without the ladder's turn, while the ladder has a rung to give it; nor a
    fetcher's page of a URL a site reader claims that was stored without that reader's turn (by
    a call naming its provider, or while the reader was off): the reader reads it."""
    if hit is None or not isinstance(hit.value, dict):
        return None
    via = hit.value.get("via")
    if not ladder and via != chosen.entry.name:
        return None
    page = decode(FetchedPage, hit.value.get("page"))
    if (
        ladder
        and page is not None
        and page.ok
        and via == chosen.entry.name
        and hit.value.get("readerTurn") != _reader_turn(chosen, url)
    ):
        return None
    if (
        ladder
        and page is not None
        and via == chosen.entry.name
        and needs_another_fetcher(page)
        and chosen.config.fetch_ladder is not False
        and rungs(chosen)
    ):
        return None
    if page is not None and not page.ok and via == LADDER:
        page = with_extra(
            page,
            f"this failure is remembered for {cache.BRIEF_TTL_SECONDS / 60:g} minutes "
            f"(fetched {hit.age_seconds:.0f} s ago); pass fresh: true to try again now",
        )
    elif page is not None:
        page = default_path.remembered(page, hit.age_seconds)
    return page


def fetch(
    chosen: Selection,
    urls: list[str],
    modes: dict[str, bool],
    need: int,
    ctx: ToolContext | None,
    *,
    fresh: bool = False,
    ladder: bool = True,
) -> tuple[list[FetchedPage], list[float | None], tuple[str, ...]]:
    """Every URL's :class:`FetchedPage` in order, from the cache when it holds at least *need*
    characters, else from the provider (successes are cached); each page's cache age
    (``None``: fetched now); the API's warnings. A URL the chosen provider may not get
    (:func:`~.handoff.handoff_refusal`) is a failed page saying why. With *ladder* (and
    ``fetchLadder`` not off), pages fetched now that were refused or need JavaScript climb the
    fetch ladder.

    A page that another call (of this process, or of any replica sharing the state) is
    fetching now is not fetched twice: this call waits for that one, then reads its page from
    the cache (:func:`_lead_or_wait`). ``fresh`` calls fetch at once.

    A whole-request failure (key, credit, outage) raises the provider's error once.
    """
    seconds = call_seconds(chosen)
    budget = cache.Budget(seconds)
    deadline = time.monotonic() + seconds
    found: dict[str, tuple[FetchedPage, float | None]] = {}
    look = _Lookup(chosen, modes, need, ladder, budget)
    wanted = list(dict.fromkeys(urls))
    leases: list[state.Lease] = []
    try:
        if not fresh:
            wanted = look.up(wanted, found)
            wanted, leases = _lead_or_wait(look, wanted, found, seconds, deadline, ctx)
        read_now, fell_back, warnings = _fetch_now(
            chosen, wanted, modes, need, ctx, deadline, budget, ladder, found
        )
        pages = [found[url][0] for url in urls]
        ages = [found[url][1] for url in urls]
        if ladder and chosen.config.fetch_ladder is not False:
            pages = Ladder(chosen, modes, need, ctx, budget, deadline).climb(pages, ages)
        if ladder:
            pages = default_path.help_on_not_found(
                chosen, pages, ages, modes, ctx, deadline, budget, read_now, fell_back
            )
    finally:
        for lease in leases:  # the pages (and the ladder's) are stored: the others read them
            lease.release()
    return pages, ages, warnings


class _Lookup:
    """Reads the cached pages of one fetch call."""

    def __init__(
        self,
        chosen: Selection,
        modes: dict[str, bool],
        need: int,
        ladder: bool,
        budget: cache.Budget,
    ):
        self.chosen, self.modes, self.need, self.ladder = chosen, modes, need, ladder
        self.budget = budget

    def key(self, url: str) -> str:
        return page_key(self.chosen, url, self.modes)

    def up(self, urls: list[str], found: dict[str, tuple[FetchedPage, float | None]]) -> list[str]:
        """Put the cached page of each of *urls* that has one (with at least *need*
        characters) in *found*; return the others."""
        settings, tool = self.chosen.config.cache, TOOL_OF["fetch"]
        missing = []
        for url in urls:
            hit = cache.get(settings, tool, self.key(url), budget=self.budget)
            page = _cached_page(hit, self.chosen, self.ladder, url)
            if (
                hit is not None
                and page is not None
                and (not page.more_text or len(page.text or "") >= self.need)
            ):
                found[url] = (page, hit.age_seconds)
            else:
                missing.append(url)
        return missing


#: How much longer than its call's deadline a fetch may hold others waiting for its pages (the
#: ladder and a page's help run after the first fetcher): then they fetch for themselves.
LEASE_GRACE_SECONDS = 30.0


def _lead_or_wait(
    look: _Lookup,
    wanted: list[str],
    found: dict[str, tuple[FetchedPage, float | None]],
    seconds: float,
    deadline: float,
    ctx: ToolContext | None,
) -> tuple[list[str], list[state.Lease]]:
    """Single-flight: the URLs of *wanted* this call fetches, and its leases on them. A URL
    another call is fetching is waited for (holding no lease meanwhile, so two calls never wait
    for each other) and then read from the cache; one still missing is fetched here."""
    hold = seconds + LEASE_GRACE_SECONDS
    leases = {url: state.lead(look.key(url), hold) for url in wanted}
    theirs = [url for url, lease in leases.items() if lease is None]
    if not theirs:
        return wanted, [lease for lease in leases.values() if lease is not None]
    for lease in leases.values():
        if lease is not None:
            lease.release()
    cancel = ctx.cancel if ctx is not None else None
    for url in theirs:
        state.wait_for(look.key(url), deadline, cancel)
    wanted = look.up(wanted, found)
    mine = [(url, state.lead(look.key(url), hold)) for url in wanted]
    return wanted, [lease for _, lease in mine if lease is not None]


def _fetch_now(
    chosen: Selection,
    wanted: list[str],
    modes: dict[str, bool],
    need: int,
    ctx: ToolContext | None,
    deadline: float,
    budget: cache.Budget,
    ladder: bool,
    found: dict[str, tuple[FetchedPage, float | None]],
) -> tuple[set[str], set[str], tuple[str, ...]]:
    """Fetch *wanted* now into *found* (site readers first on the default path, refusals, then
    the chosen provider; successes cached); the URLs a reader read, those a reader fell back
    on, and the API's warnings."""
    read_now: dict[str, FetchedPage] = {}
    fell_back: dict[str, str] = {}
    if wanted and ladder:  # the default path: site readers first (each of their hops guarded)
        read_now, fell_back = default_path.read_sites(chosen, wanted, modes, ctx, deadline, budget)
        found.update((url, (page, None)) for url, page in read_now.items())
        wanted = [url for url in wanted if url not in read_now]
    refused = refusals(chosen, wanted, deadline)
    for url, refusal in refused.items():
        found[url] = (FetchedPage(url=url, ok=False, error=str(refusal), code="refused"), None)
    wanted = [url for url in wanted if url not in refused]
    warnings: tuple[str, ...] = ()
    if wanted:
        request = FetchRequest(urls=tuple(wanted), text_max_characters=need, **modes)
        response = chosen.call("fetch", request, ctx)
        warnings = response.warnings
        for url in wanted:  # a provider must answer for every URL; never lose one silently
            page = answer_for(response, url) or FetchedPage(
                url=url, ok=False, error="no result returned"
            )
            if page.text is not None:
                page = attrs.evolve(page, text=strip_control(page.text))
            if url in fell_back:
                page = default_path.with_note(page, fell_back[url])
            if ladder:
                page = default_path.with_llms_txt(chosen, url, page, ctx, deadline)
            if page.ok:
                if url not in fell_back:  # else not kept: the next call tries the reader again
                    turn = _reader_turn(chosen, url) if ladder else None
                    store_page(
                        chosen, url, modes, page, chosen.entry.name, budget, reader_turn=turn
                    )
            elif page.code == OTHER_FETCHER:
                page = attrs.evolve(page, error=f"{page.error}; {_other_fetchers(chosen)}")
            found[url] = (page, None)
    return set(read_now), set(fell_back), warnings


def _other_fetchers(chosen: Selection) -> str:
    """Which of the user's providers to pass as ``provider`` instead of *chosen*: the other
    configured fetchers, else the built-in fallback fetcher."""
    types = provider_types()
    names = [
        p.name
        for p in chosen.config.providers
        if p.name != chosen.entry.name and p.type in types and types[p.type].can("fetch")
    ]
    if not names:
        names = [t.name for t in types.values() if "fetch" in t.fallback_for]
    if not names:
        return "configure another fetcher"
    listed = " or ".join(f'"{name}"' for name in names[:3])
    return f"fetch it with another fetcher: pass provider {listed}"
