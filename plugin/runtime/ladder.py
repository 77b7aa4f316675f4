"""The fetch ladder: a page refused to a bot (401, 403, 429) or that needs JavaScript is fetched
again through the other configured fetchers, in order; the first that gives it text wins.

Every page the ladder touched says which provider produced it and every other service its URL
was sent to, whether they succeeded or not. A URL with credentials goes to no service (only to a
fetcher on this machine), a private host only to a fetcher allowed private networks
(:mod:`.handoff`), and on-request providers (Kagi) are rungs only when ``fetchLadder`` names
them. A failure the ladder paid for is remembered briefly.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import attrs
from attrs import frozen
from pi_hostspec.types import ToolContext

from ..api.errors import ConfigError, ProviderError
from ..api.redaction import redact_secrets
from ..api.types import FetchedPage, FetchRequest, FetchResponse, one_line
from . import cache
from .handoff import credential_reason, label, refusals
from .page_cache import LADDER, store_page, with_extra
from .registry import Selection, resolve_provider

__all__ = ["REFUSALS", "Ladder", "NeedsAnotherFetcher", "Why", "needs_another_fetcher", "rungs"]

#: Statuses with which sites refuse bots; another fetcher (an API with its own crawler) may pass.
REFUSALS = frozenset({401, 403, 429})


class Why(enum.Enum):
    """Why a page is worth fetching again through another fetcher."""

    REFUSED = "refused"  # the site refused the fetcher (HTTP 401, 403, 429)
    APP_SHELL = "app shell"  # an application shell: the content is drawn by JavaScript
    FOUND = "found"  # another reason the provider gave (``FetchedPage.escalate``)


@frozen
class NeedsAnotherFetcher:
    """Why a page climbs the ladder, and what to say about it once another fetcher served it."""

    why: Why
    status: int | None = None
    found: str | None = None

    @property
    def needs_javascript(self) -> bool:
        """The content is drawn by JavaScript: a fetcher that runs it is the one to try."""
        return self.why is Why.APP_SHELL

    def said(self, provider: str) -> str:
        """What the first fetch met, naming its *provider*."""
        if self.why is Why.REFUSED:
            return f"the {provider} fetch was refused (HTTP {self.status})"
        if self.why is Why.APP_SHELL:
            return f"the {provider} fetch found an application shell (the content needs JavaScript)"
        return f"the {provider} fetch found {self.found}"


def needs_another_fetcher(page: FetchedPage) -> NeedsAnotherFetcher | None:
    """Why *page* is worth fetching again through another provider, or ``None``."""
    if not page.ok and page.status in REFUSALS:
        return NeedsAnotherFetcher(Why.REFUSED, status=page.status)
    if page.ok and page.escalate == "app shell":
        return NeedsAnotherFetcher(Why.APP_SHELL)
    if page.ok and page.escalate:
        return NeedsAnotherFetcher(Why.FOUND, found=page.escalate)
    return None


def rungs(chosen: Selection) -> list[Selection]:
    """The fetchers of the ladder, in order: ``fetchLadder``'s names, or (``true``) every other
    configured provider that fetches by default (never an on-request one such as Kagi)."""
    config = chosen.config
    named = config.fetch_ladder
    names = [p.name for p in config.providers] if named is True else list(named or ())
    found = []
    for name in names:
        if name == chosen.entry.name:
            continue
        try:
            rung = resolve_provider("fetch", name, config=config)
        except ConfigError:
            continue  # a provider that cannot fetch (or lacks a key) is not a rung
        if named is True and not rung.type.serves_by_default("fetch"):
            continue
        found.append(rung)
    return found


def answer_for(response: FetchResponse, url: str) -> FetchedPage | None:
    """The page *response* holds for the requested *url*: answers come redacted, so a URL that
    carries a key is matched in its redacted form, and the page gets the URL as requested back
    (the tool's output is redacted again at its edge)."""
    by_url = {page.url: page for page in response.pages}
    page = by_url.get(url) or by_url.get(redact_secrets(url))
    return attrs.evolve(page, url=url) if page is not None and page.url != url else page


class Ladder:
    """One climb for the pages of one ``web_fetch`` call.

    Its state, by URL: ``reasons`` (why each page climbs), ``todo`` (still without a better
    page), ``held`` (carries credentials, so no service gets it), ``sent`` (each service it was
    sent to and what that said), ``kept`` (why no other rung could be given it) and ``better``
    (the page a rung gave).
    """

    def __init__(
        self,
        chosen: Selection,
        modes: dict[str, bool],
        need: int,
        ctx: ToolContext | None,
        budget: cache.Budget,
        deadline: float,
    ):
        self.chosen, self.modes, self.need, self.ctx = chosen, modes, need, ctx
        self.budget, self.deadline = budget, deadline
        self.reasons: dict[str, NeedsAnotherFetcher] = {}
        self.todo: list[str] = []
        self.held: dict[str, str] = {}
        self.sent: dict[str, list[str]] = {}
        self.kept: dict[str, str] = {}
        self.better: dict[str, FetchedPage] = {}

    def climb(
        self, pages: Sequence[FetchedPage], ages: Sequence[float | None]
    ) -> list[FetchedPage]:
        """*pages* with each one that needed another fetcher replaced by the better page a rung
        gave, or saying where its URL went and why it went nowhere else."""
        # Pages from the cache already had their turn: reading on never climbs the ladder again.
        for page, age in zip(pages, ages, strict=True):
            reason = needs_another_fetcher(page) if age is None else None
            if reason is not None:
                self.reasons[page.url] = reason
        self.todo = list(self.reasons)
        if not self.todo:
            return list(pages)
        self.held = {url: why for url in self.todo if (why := credential_reason(url))}
        ladder = rungs(self.chosen)
        if any(reason.needs_javascript for reason in self.reasons.values()):
            # An application shell: a fetcher that runs JavaScript on this machine goes first.
            ladder.sort(key=lambda rung: not rung.type.fetch_renders_javascript)
        if not ladder and not self.held:
            return list(pages)
        self.sent = {url: [] for url in self.todo}
        wanted = {name for name, on in self.modes.items() if on}
        for rung in ladder:
            if not self.todo:
                break
            if wanted <= rung.type.fetch_modes:
                self._try(rung)
        said: dict[str, FetchedPage] = {}
        for page in pages:
            if page.url not in self.better and page.url not in said:
                changed = self._said(page)
                if changed is not None:
                    said[page.url] = changed
        return [self.better.get(page.url) or said.get(page.url) or page for page in pages]

    def _try(self, rung: Selection) -> None:
        """Offer *rung* every URL still to do that it may be given."""
        # A URL with credentials goes only to a fetcher on this machine, never to a service.
        offered = [url for url in self.todo if url not in self.held or rung.type.fetches_locally]
        refused = refusals(rung, offered, self.deadline)
        for url, refusal in refused.items():
            self.kept.setdefault(url, refusal.said)
        allowed = [url for url in offered if url not in refused]
        if not allowed:
            return
        name = label(rung)
        request = FetchRequest(urls=tuple(allowed), text_max_characters=self.need, **self.modes)
        try:
            response = rung.call("fetch", request, self.ctx)
        except ProviderError as exc:
            for url in allowed:
                self.sent[url].append(f"{name}: {one_line(exc.message, 160)}")
            return
        for url in allowed:
            page = answer_for(response, url)
            if page is not None and page.ok and (page.text or page.summary or page.highlights):
                self._won(url, page, rung)
            else:
                why = "no result returned" if page is None else (page.error or "no text")
                self.sent[url].append(f"{name}: {one_line(why, 160)}")

    def _won(self, url: str, page: FetchedPage, rung: Selection) -> None:
        """*rung* gave *url* a page: label it, and cache it so the next window needs no ladder."""
        reason = self.reasons[url]
        if rung.type.fetch_renders_javascript and reason.needs_javascript:
            notes = ["rendered in a local browser: the page needs JavaScript"]
        else:
            notes = [f"fetched through {label(rung)}: {reason.said(self.chosen.entry.name)}"]
        if self.sent[url]:
            notes.append(f"also sent to {'; '.join(self.sent[url])}")
        self.better[url] = attrs.evolve(page, notes=(*notes, *page.notes))
        self.todo.remove(url)
        store_page(self.chosen, url, self.modes, self.better[url], rung.entry.name, self.budget)

    def _said(self, page: FetchedPage) -> FetchedPage | None:
        """*page* saying where its URL went and why it went nowhere else, or ``None`` when the
        ladder has nothing to say about it."""
        url = page.url
        sent = self.sent.get(url)
        extras = []
        if url in self.held:
            # It may have gone to a fetcher on this machine (a local browser), never a service.
            where = "any service" if sent else "any other fetcher"
            extras.append(f"not sent to {where}: {self.held[url]}")
        if sent:
            extras.append(f"also sent to {'; '.join(sent)}")
        if url in self.kept:
            extras.append(f"not sent to the other fetchers: {self.kept[url]}")
        if not extras:
            return None
        changed = with_extra(page, "; ".join(extras))
        if sent:  # services were paid for this: a retry soon is not paid again
            store_page(
                self.chosen,
                url,
                self.modes,
                changed,
                LADDER,
                self.budget,
                ttl=cache.BRIEF_TTL_SECONDS,
            )
        return changed
