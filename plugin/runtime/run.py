"""Runs a capability: the one call path between the tools and the providers.

Every answer a tool shows comes through here: from the cache when it holds a fresh one, else
from the chosen provider (:meth:`Selection.call <pi_web_tools.runtime.registry.Selection.call>`,
which checks the answer and removes every known key from it), and then into the cache. For
``web_fetch`` this is also where the fetch ladder runs: a page refused to a bot or needing
JavaScript is fetched again through the other configured fetchers.

Before a URL is handed to any fetcher (the chosen one or a rung of the ladder),
:func:`handoff_refusal` decides whether it may be: a private, loopback, link-local, metadata or
single-label host goes only to a fetcher whose options allow private networks. A rung also never
gets a URL that carries credentials (:func:`credential_reason`), and on-request providers (Kagi)
are rungs only when ``fetchLadder`` names them. Every page the ladder touched says which
services received its URL, whether they succeeded or not.

The tools turn arguments into requests and answers into text; they never touch the cache or
another provider themselves.
"""

from __future__ import annotations

import re
import time
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from ..api.defaults import TOOL_FOR

__all__ = [
    "CREDENTIAL_NAMES",
    "CREDENTIAL_PARTS",
    "TOOL_OF",
    "credential_reason",
    "decode",
    "fetch",
    "handoff_refusal",
    "search",
    "summarize",
    "warnings",
]

#: The tool that serves each capability (its name keys the cache's time-to-live).
TOOL_OF = TOOL_FOR
#: Seconds a call runs when its provider sets no ``timeoutSeconds`` (the cache's deadline).
DEFAULT_CALL_SECONDS = 30.0
#: The longest the host check waits for a DNS answer.
DNS_SECONDS = 5.0

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


def warnings(config: Any) -> list[str]:
    """The config's warnings and the cache's (files moved aside, a damaged database), for a
    tool's ``details.warnings``."""
    from . import cache

    return [*config.warnings, *cache.notices()]


def _call_seconds(chosen: Any) -> float:
    return float(getattr(chosen.entry.options, "timeout_seconds", None) or DEFAULT_CALL_SECONDS)


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
    budget = cache.Budget(_call_seconds(chosen))
    key = _cache_key(chosen, capability, attrs.asdict(request))
    hit = None if fresh else cache.get(settings, tool, key, budget=budget)
    if hit is not None:
        found = decode(cls, hit.value)
        if found is not None:
            return found, hit.age_seconds
    response = chosen.call(capability, request, ctx)
    cache.put(settings, tool, key, attrs.asdict(response), budget=budget)
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


# --- which fetcher may get which URL ----------------------------------------------------------

#: Query and fragment parameter names (lower case, ``-`` read as ``_``) that carry credentials.
CREDENTIAL_NAMES = frozenset(
    {
        "auth",
        "authorization",
        "bearer",
        "code",  # OAuth authorization codes
        "googleaccessid",
        "hmac",
        "jwt",
        "key",
        "key_pair_id",  # CloudFront signed URLs
        "otp",
        "pass",
        "pwd",
        "sid",
        "sig",  # Azure SAS, many signed links
        "ticket",
        "st",  # CAS service tickets
    }
)
#: Name parts that make any parameter credential-like (``access_token``, ``X-Amz-Signature``,
#: ``X-Amz-Credential``, ``X-Goog-Signature``, ``PHPSESSID``, ``client_secret``, ``api_key``...).
CREDENTIAL_PARTS = (
    "token",
    "secret",
    "passw",
    "signature",
    "session",
    "sessid",
    "credential",
    "apikey",
    "api_key",
    "accesskey",
    "access_key",
    "auth_key",
    "authkey",
    "private_key",
)
#: A JSON Web Token, whatever the parameter is called.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.")


def _credential_name(name: str) -> bool:
    name = name.strip().lower().replace("-", "_")
    return name in CREDENTIAL_NAMES or any(part in name for part in CREDENTIAL_PARTS)


def credential_reason(url: str) -> str | None:
    """Why *url* carries credentials (a user name or password, a credential-like query or
    fragment parameter, a JSON Web Token), or ``None``. Such a URL is never escalated: it goes
    to no fetcher but the one the call used."""
    from pi_hostspec import clip, strip_control

    try:
        parts = urlsplit(url)
    except ValueError:
        return "the URL cannot be parsed"
    if "@" in parts.netloc:
        return "the URL carries a user name or password"
    for text in (parts.query, parts.fragment):
        for name, value in parse_qsl(text, keep_blank_values=True):
            if _credential_name(name):
                shown = clip(strip_control(name), 40)
                return f"the URL carries a credential-like parameter ({shown})"
            if _JWT.search(value):
                return "the URL carries a token"
    if _JWT.search(parts.path):
        return "the URL carries a token"
    return None


def _allow_hint(selection: Any) -> str:
    from ..api._netguard import allow_hint

    if selection.config.shape == "shared":  # implicit providers: options by type
        hint = (
            f'set "providerOptions": {{"{selection.entry.type}": {{"allowPrivateNetwork": '
            "true}} in the config to allow it"
        )
    elif selection.config.get(selection.entry.name) is None:  # the built-in fallback, no entry
        entry = selection.entry
        hint = (
            f'add {{"name": "{entry.name}", "type": "{entry.type}", "options": '
            f'{{"allowPrivateNetwork": true}}}} to the "providers" list of '
            f"{selection.config.path} to allow it"
        )
    else:
        hint = allow_hint(selection.entry.name)
    # The user may believe it set already: a misspelt key was ignored (a warning said so).
    for warning in selection.config.warnings:
        typo = _MISSPELT_ALLOW.search(warning)
        if typo:
            return (
                f"{hint} ({typo.group(1)} has {typo.group(2)}, which is ignored: did you mean "
                "'allowPrivateNetwork'?)"
            )
    return hint


_MISSPELT_ALLOW = re.compile(
    r"^(.*?): unknown option\(s\) (?:.*, )?('[^']+') \(did you mean 'allowPrivateNetwork'\?\)"
)


def _host_problem(url: str, selection: Any, deadline: float) -> str | None:
    """Why the host of *url* is not public, as *selection* would reach it; ``None`` when it is
    public, or when it cannot be known here (a name that does not resolve)."""
    from ..api.http_client import run_interruptible
    from ..api._netguard import describe_host, is_proxied, literal_address, request_target

    try:
        _, host, port = request_target(url)
    except ValueError:
        return None  # the fetcher says what is wrong with the URL
    host = host.lower().rstrip(".")
    try:
        reason = describe_host(host, port, resolve=False)
    except OSError:
        reason = None
    if reason:
        return reason
    if literal_address(host) is not None:
        return None
    if "." not in host:
        return f"{host} is a single-label name (an intranet host)"
    # Through a proxy, a local fetcher's names are the proxy's to resolve (as the network guard
    # does); a service fetches from elsewhere, so its names are resolved here.
    if selection.type.fetches_locally and is_proxied(url):
        return None
    wait = max(0.1, min(DNS_SECONDS, deadline - time.monotonic()))
    try:
        return run_interruptible(
            lambda: describe_host(host, port), deadline=time.monotonic() + wait
        )
    except TimeoutError:
        return f"where {host} points could not be checked within {wait:g} s (DNS)"
    except OSError:
        return None  # it does not resolve here: nothing private to protect


def handoff_refusal(url: str, selection: Any, deadline: float) -> str | None:
    """Why *url* may not be handed to the fetcher *selection* (one line: what is wrong and
    which option allows it), or ``None``.

    A host that is private, loopback, link-local, CGNAT, a cloud metadata address or a
    single-label name is refused unless the fetcher's options set ``allowPrivateNetwork``.
    """
    if getattr(selection.entry.options, "allow_private_network", False):
        return None
    problem = _host_problem(url, selection, deadline)
    if problem is None:
        return None
    where = "" if selection.type.fetches_locally else f", not sent to {_label(selection)}"
    return f"refused: {problem}{where}; {_allow_hint(selection)}"


def _label(selection: Any) -> str:
    return f"{selection.entry.name} ({selection.entry.type})"


def _refusals(selection: Any, urls: list[str], deadline: float) -> dict[str, str]:
    """Each URL of *urls* that *selection* may not get, with the reason (hosts checked at once)."""
    if not urls or getattr(selection.entry.options, "allow_private_network", False):
        return {}
    if len(urls) == 1:
        reason = handoff_refusal(urls[0], selection, deadline)
        return {urls[0]: reason} if reason else {}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(urls)), thread_name_prefix="host-check") as pool:
        reasons = list(pool.map(lambda url: handoff_refusal(url, selection, deadline), urls))
    return {url: reason for url, reason in zip(urls, reasons, strict=True) if reason}


# --- web_fetch: per-URL pages, the cache and the ladder ---------------------------------------

#: ``via`` of cached pages that the ladder made (failures it paid for): never served to a call
#: that names its provider.
_LADDER = "(fetch ladder)"


def _page_key(chosen: Any, url: str, modes: dict) -> str:
    wanted = sorted(name for name, on in modes.items() if on)
    return _cache_key(chosen, "fetch", {"url": url, "modes": wanted})


def _brief(page: Any) -> bool:
    """A degraded answer (extraction cut short, an application shell, no text): kept briefly."""
    return bool(page.escalate or page.degraded)


def _store_page(chosen: Any, url: str, modes: dict, page: Any, via: str, budget: Any, **kw) -> None:
    import attrs

    from . import cache

    if _brief(page) and "ttl" not in kw:
        kw["ttl"] = cache.BRIEF_TTL_SECONDS
    cache.put(
        chosen.config.cache,
        TOOL_OF["fetch"],
        _page_key(chosen, url, modes),
        {"via": via, "page": attrs.asdict(page)},
        budget=budget,
        **kw,
    )


def _cached_page(hit: Any, chosen: Any, ladder: bool) -> Any:
    """The page of a cache hit, or ``None``. A call that names its provider (no ladder) gets
    only pages that provider made itself. A call that may climb the ladder does not get a page
    that needs another fetcher (an application shell, a refusal) which a call naming its
    provider stored without the ladder's turn, while the ladder has a rung to give it."""
    from ..api.types import FetchedPage

    if hit is None or not isinstance(hit.value, dict):
        return None
    via = hit.value.get("via")
    if not ladder and via != chosen.entry.name:
        return None
    page = decode(FetchedPage, hit.value.get("page"))
    if (
        ladder
        and page is not None
        and via == chosen.entry.name
        and _needs_another_fetcher(page)
        and chosen.config.fetch_ladder is not False
        and _rungs(chosen)
    ):
        return None
    if page is not None and not page.ok and via == _LADDER:
        page = _with_extra(
            page,
            f"this failure is remembered for {_minutes()} (fetched {hit.age_seconds:.0f} s ago); "
            "pass fresh: true to try again now",
        )
    return page


def _minutes() -> str:
    from . import cache

    return f"{cache.BRIEF_TTL_SECONDS / 60:g} minutes"


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
    (``None``: fetched now); the API's warnings. A URL the chosen provider may not get
    (:func:`handoff_refusal`) is a failed page saying why. With *ladder* (and ``fetchLadder``
    not off), pages fetched now that were refused or need JavaScript climb the fetch ladder.

    A whole-request failure (key, credit, outage) raises the provider's error once.
    """
    import attrs
    from pi_hostspec import strip_control

    from ..api.types import FetchedPage, FetchRequest
    from . import cache

    settings = chosen.config.cache
    tool = TOOL_OF["fetch"]
    seconds = _call_seconds(chosen)
    budget = cache.Budget(seconds)
    deadline = time.monotonic() + seconds
    found: dict[str, tuple[Any, float | None]] = {}
    for url in dict.fromkeys(urls):
        hit = (
            None
            if fresh
            else cache.get(settings, tool, _page_key(chosen, url, modes), budget=budget)
        )
        page = _cached_page(hit, chosen, ladder)
        if page is not None and (not page.more_text or len(page.text or "") >= need):
            found[url] = (page, hit.age_seconds)
    wanted = [url for url in dict.fromkeys(urls) if url not in found]
    refused = _refusals(chosen, wanted, deadline)
    for url, reason in refused.items():
        found[url] = (FetchedPage(url=url, ok=False, error=reason, code="refused"), None)
    wanted = [url for url in wanted if url not in refused]
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
                _store_page(chosen, url, modes, page, chosen.entry.name, budget)
            elif page.code == OTHER_FETCHER:
                page = attrs.evolve(page, error=f"{page.error}; {_other_fetchers(chosen)}")
            found[url] = (page, None)
    pages = [found[url][0] for url in urls]
    ages = [found[url][1] for url in urls]
    if ladder and chosen.config.fetch_ladder is not False:
        pages = _climb(chosen, pages, ages, modes, need, ctx, budget, deadline)
    return pages, ages, warnings


#: The ``code`` of a page a provider cannot fetch but another fetcher could (Kagi Extract and
#: an http URL): the runtime adds which of the user's providers to name.
OTHER_FETCHER = "other-fetcher"


def _other_fetchers(chosen: Any) -> str:
    """Which of the user's providers to pass as ``provider`` instead of *chosen*: the other
    configured fetchers, else the built-in fallback fetcher."""
    from .registry import provider_types

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


def _rungs(chosen: Any) -> list[Any]:
    """The fetchers of the ladder, in order: ``fetchLadder``'s names, or (``true``) every other
    configured provider that fetches by default (never an on-request one such as Kagi)."""
    from ..api.errors import ConfigError
    from .registry import resolve_provider

    config = chosen.config
    named = config.fetch_ladder
    names = [p.name for p in config.providers] if named is True else list(named)
    rungs = []
    for name in names:
        if name == chosen.entry.name:
            continue
        try:
            rung = resolve_provider("fetch", name, config=config)
        except ConfigError:
            continue  # a provider that cannot fetch (or lacks a key) is not a rung
        if named is True and not rung.type.serves_by_default("fetch"):
            continue
        rungs.append(rung)
    return rungs


def _with_extra(page: Any, extra: str) -> Any:
    """*page* with *extra* said: in its error when it failed, else as a note."""
    import attrs

    if page.ok:
        return attrs.evolve(page, notes=(*page.notes, extra))
    return attrs.evolve(page, error=f"{page.error or 'failed'}; {extra}")


def _climb(
    chosen: Any,
    pages: list[Any],
    ages: list[float | None],
    modes: dict,
    need: int,
    ctx: Any,
    budget: Any,
    deadline: float,
) -> list[Any]:
    """The fetch ladder: a page refused to a bot (401, 403, 429) or that needs JavaScript is
    fetched again through the ladder's fetchers, in order; the first that gives it text wins,
    and the page says which provider produced it and every other one its URL was sent to. A
    URL with credentials is sent to none, a private host only to a fetcher allowed private
    networks; the page says so. A failure the ladder paid for is remembered briefly."""
    import attrs

    from ..api.errors import ProviderError
    from ..api.types import FetchRequest, one_line

    # Pages from the cache already had their turn: reading on never climbs the ladder again.
    reasons = {
        page.url: _needs_another_fetcher(page)
        for page, age in zip(pages, ages, strict=True)
        if age is None
    }
    todo = [url for url, reason in reasons.items() if reason]
    if not todo:
        return pages
    held = {url: why for url in todo if (why := credential_reason(url))}
    rungs = _rungs(chosen) if todo else []
    if any("JavaScript" in reasons[url] for url in todo):
        # An application shell: a fetcher that runs JavaScript on this machine goes first.
        rungs.sort(key=lambda rung: not rung.type.fetch_renders_javascript)
    if not rungs and not held:
        return pages
    wanted = {name for name, on in modes.items() if on}
    sent: dict[str, list[str]] = {url: [] for url in todo}
    kept: dict[str, str] = {}  # a URL no rung could be given, and why
    better: dict[str, Any] = {}
    for rung in rungs:
        if not todo:
            break
        if not wanted <= rung.type.fetch_modes:
            continue
        # A URL with credentials goes only to a fetcher on this machine, never to a service.
        offered = [url for url in todo if url not in held or rung.type.fetches_locally]
        refused = _refusals(rung, offered, deadline)
        for url, reason in refused.items():
            kept.setdefault(url, reason.removeprefix("refused: "))
        allowed = [url for url in offered if url not in refused]
        if not allowed:
            continue
        label = _label(rung)
        try:
            response = rung.call(
                "fetch", FetchRequest(urls=tuple(allowed), text_max_characters=need, **modes), ctx
            )
        except ProviderError as exc:
            for url in allowed:
                sent[url].append(f"{label}: {one_line(exc.message, 160)}")
            continue
        by_url = _by_url(response)
        for url in allowed:
            page = _answer_for(by_url, url)
            if page is not None and page.ok and (page.text or page.summary or page.highlights):
                reason = reasons[url].format(provider=chosen.entry.name)
                if rung.type.fetch_renders_javascript and "JavaScript" in reason:
                    notes = ["rendered in a local browser: the page needs JavaScript"]
                else:
                    notes = [f"fetched through {label}: {reason}"]
                if sent[url]:
                    notes.append(f"also sent to {'; '.join(sent[url])}")
                better[url] = attrs.evolve(page, notes=(*notes, *page.notes))
                todo.remove(url)
                # Read on from the cache: the next window needs no ladder again.
                _store_page(chosen, url, modes, better[url], rung.entry.name, budget)
            else:
                why = "no result returned" if page is None else (page.error or "no text")
                sent[url].append(f"{label}: {one_line(why, 160)}")
    said: dict[str, Any] = {}
    for page in pages:
        url = page.url
        if url in better or url in said or (url not in held and url not in sent):
            continue
        extras = []
        if url in held:
            # It may have gone to a fetcher on this machine (a local browser), never a service.
            where = "any service" if sent.get(url) else "any other fetcher"
            extras.append(f"not sent to {where}: {held[url]}")
        if sent.get(url):
            extras.append(f"also sent to {'; '.join(sent[url])}")
        if url in kept:
            extras.append(f"not sent to the other fetchers: {kept[url]}")
        if not extras:
            continue
        changed = _with_extra(page, "; ".join(extras))
        said[url] = changed
        if sent.get(url):  # services were paid for this: a retry soon is not paid again
            from . import cache

            _store_page(chosen, url, modes, changed, _LADDER, budget, ttl=cache.BRIEF_TTL_SECONDS)
    return [better.get(page.url) or said.get(page.url) or page for page in pages]
