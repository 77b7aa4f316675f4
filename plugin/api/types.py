"""The provider API: everything a provider plugin writes against, in one module.

A provider plugin registers a :class:`ProviderType` through the ``register_provider_types`` hook
(:data:`pi_web_tools.hookimpl`). The type *declares* everything the tools need to know (its
capabilities, the search filters it honours, its fetch modes and summary languages, whether it
needs a key and which environment variable may supply it, its options class); the tools never
probe a provider object. Its ``factory`` builds a :class:`Provider` from a
:class:`ProviderConfig`; the provider turns normalized requests into normalized responses and
raises :class:`~pi_web_tools.api.errors.ProviderError` on failure.

Import the names from ``pi_web_tools`` (``from pi_web_tools import ProviderType, ...``).
This module is cheap to import (attrs only): tools quote its constants at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import attrs
from attrs import field, frozen

from .defaults import DEFAULT_TEXT_MAX_CHARACTERS
from .errors import ProviderContractError
from .options import (
    CommonOptions,
)

__all__ = [
    "CAPABILITIES",
    "DATE_FILTERS",
    "DEFAULT_TEXT_MAX_CHARACTERS",
    "DOMAIN_FILTERS",
    "FETCH",
    "SEARCH",
    "SEARCH_FILTERS",
    "SUMMARIZE",
    "FetchRequest",
    "FetchResponse",
    "FetchedPage",
    "ApiKey",
    "Fetch",
    "FetchProvider",
    "Provider",
    "ProviderConfig",
    "ProviderType",
    "Search",
    "SearchHit",
    "SearchProvider",
    "Summarize",
    "SummarizeProvider",
    "SearchRequest",
    "SearchResponse",
    "SummarizeRequest",
    "SummaryResponse",
    "check_response",
    "list_field",
    "number_field",
    "one_line",
    "text_field",
    "url_key",
]

SEARCH = "search"
FETCH = "fetch"
SUMMARIZE = "summarize"
CAPABILITIES = (SEARCH, FETCH, SUMMARIZE)
#: The ``web_search`` filters a provider type may declare in ``search_filters``.
#: The domain filters of ``web_search``, and its date filters (for :class:`Search`).
DOMAIN_FILTERS = frozenset({"include_domains", "exclude_domains"})
DATE_FILTERS = frozenset({"start_published_date", "end_published_date"})
SEARCH_FILTERS = (
    "include_domains",
    "exclude_domains",
    "start_published_date",
    "end_published_date",
    "category",
)


# --- configuration handed to a factory --------------------------------------------------------


@frozen(kw_only=True)
class ProviderConfig:
    """One configured provider, as its type's ``factory`` receives it.

    ``options`` is an instance of the type's ``options_class``; ``api_key`` is ``None`` for a
    keyless type and never appears in a repr. ``origin`` says where the entry came from
    (``"file"``, ``"env KAGI_API_KEY"``, ...), for ``pi-web config``.
    """

    name: str
    type: str
    api_key: str | None = field(default=None, repr=False)
    options: Any = None
    key_from_env: str | None = None
    origin: str = "file"

    def redacted_key(self) -> str:
        """The key as ``pi-web config`` may show it: at most its last 4 characters."""
        if not self.api_key:
            return "(none)"
        tail = self.api_key[-4:] if len(self.api_key) >= 12 else ""
        return f"…{tail}" if tail else "(set)"


# --- requests and responses -------------------------------------------------------------------


@frozen(kw_only=True)
class SearchRequest:
    """One query to run, with the optional filters of ``web_search``."""

    query: str
    limit: int | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()
    start_published_date: str | None = None
    end_published_date: str | None = None
    category: str | None = None


@frozen(kw_only=True)
class SearchHit:
    """One search result, normalized."""

    title: str
    url: str
    snippet: str = ""
    published: str | None = None
    author: str | None = None
    score: float | None = None


@frozen(kw_only=True)
class SearchResponse:
    """The results of one query: hits in rank order, related searches, notes for the model
    (``notices``: text the API meant for the model), ``warnings`` for the details only, and
    the account balance when the API tells it."""

    hits: tuple[SearchHit, ...] = ()
    related: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    balance: float | None = None


@frozen(kw_only=True)
class FetchRequest:
    """URLs to fetch and which contents to return.

    ``text_max_characters`` is the least text the call needs from each page (``None``: all of
    it). Return the whole page text when you have it: ``web_fetch`` shows it in windows and
    caches it, so the model's next window costs nothing. A provider that can only return part
    (an API with a length parameter) returns at least this much and sets
    :attr:`FetchedPage.more_text`.
    """

    urls: tuple[str, ...]
    text: bool = True
    highlights: bool = False
    summary: bool = False
    text_max_characters: int | None = None


@frozen(kw_only=True)
class FetchedPage:
    """One URL's outcome: contents on success, ``error`` (one line) on failure.

    ``more_text``: the provider holds more of the page's text than ``text`` (asked again with a
    larger ``text_max_characters``, it returns more). ``links``: the page's links as (text,
    absolute URL), when the provider knows them. ``escalate``: why another fetcher may do
    better (``"app shell"``: the content needs JavaScript; ``"no text"``), so ``web_fetch`` can
    retry the URL through another configured fetch provider. ``degraded``: why the answer is not
    the page's best and may differ if asked again soon (``"main-content extraction stopped
    after 9.9 s (timeoutSeconds)"``); such answers are cached only briefly. ``suggestions``: for
    a page that was not found, URLs that exist and may be what was meant.
    """

    url: str
    ok: bool
    title: str | None = None
    final_url: str | None = None
    content_type: str | None = None
    text: str | None = None
    highlights: tuple[str, ...] = ()
    summary: str | None = None
    published: str | None = None
    author: str | None = None
    error: str | None = None
    status: int | None = None
    code: str | None = None
    notes: tuple[str, ...] = ()
    more_text: bool = False
    links: tuple[tuple[str, str], ...] = ()
    escalate: str | None = None
    degraded: str | None = None
    suggestions: tuple[str, ...] = ()


@frozen(kw_only=True)
class FetchResponse:
    """Every requested URL's outcome, in request order, and API warnings for the details."""

    pages: tuple[FetchedPage, ...]
    warnings: tuple[str, ...] = ()


@frozen(kw_only=True)
class SummarizeRequest:
    """A URL to summarize and how."""

    url: str
    summary_type: str = "summary"
    engine: str | None = None
    target_language: str | None = None


@frozen(kw_only=True)
class SummaryResponse:
    """The summary text verbatim, the token count, and the balance when known."""

    output: str
    tokens: int | None = None
    balance: float | None = None


_RESPONSES = {SEARCH: SearchResponse, FETCH: FetchResponse, SUMMARIZE: SummaryResponse}


@runtime_checkable
class Provider(Protocol):
    """A configured provider: it has a ``name`` and implements the method of each capability
    its type declares (:class:`SearchProvider`, :class:`FetchProvider`,
    :class:`SummarizeProvider`); a ``close()`` method, when it has one, releases sessions and
    pooled connections (called when the config entry changes).

    Every method gets the call's :class:`~pi_hostspec.ToolContext` as *ctx*: pass it to
    :meth:`HttpClient.request_json <pi_web_tools.api._http_client.HttpClient.request_json>`
    (which stops when the call is cancelled), or check ``ctx.cancelled`` between steps of your
    own. Raise :class:`~pi_web_tools.api.errors.ProviderError` with a one-line message on
    failure.
    """

    name: str


@runtime_checkable
class SearchProvider(Provider, Protocol):
    """A provider of capability ``search``."""

    def search(self, request: SearchRequest, ctx: Any) -> SearchResponse:
        """Run one query."""


@runtime_checkable
class FetchProvider(Provider, Protocol):
    """A provider of capability ``fetch``."""

    def fetch(self, request: FetchRequest, ctx: Any) -> FetchResponse:
        """Fetch every URL of the request; a URL that fails is a page with ``ok=False`` and
        ``error``, not an exception."""


@runtime_checkable
class SummarizeProvider(Provider, Protocol):
    """A provider of capability ``summarize``."""

    def summarize(self, request: SummarizeRequest, ctx: Any) -> SummaryResponse:
        """Summarize one URL."""


# --- provider types ---------------------------------------------------------------------------


def _names(value: Any) -> frozenset:
    return frozenset(value)


def _check_names(kind: str, known: tuple) -> Callable[[Any, Any, Any], None]:
    def check(_instance: Any, _attribute: Any, value: frozenset) -> None:
        unknown = value - set(known)
        if unknown:
            raise ValueError(f"unknown {kind} {sorted(unknown)} (known: {', '.join(known)})")

    return check


@frozen(kw_only=True)
class Search:
    """What a type's ``search`` offers: the ``web_search`` filters it honours (see
    :data:`SEARCH_FILTERS`) and its results per query when the call and options give none."""

    filters: frozenset = field(
        default=frozenset(),
        converter=_names,
        validator=_check_names("search filters", SEARCH_FILTERS),
    )
    default_limit: int | None = None


@frozen(kw_only=True)
class Fetch:
    """What ``web_fetch`` can ask of a type (``modes``: ``text``, ``highlights``, ``summary``),
    and whether it downloads pages from this machine (``local``, as ``direct`` does: a URL
    handed to it reaches no third party, and the host check before it follows the network
    guard's proxy rule; a type that fetches through a service, the default, gets every host
    resolved and judged before the URL is sent), and whether it runs the page's JavaScript
    (``javascript``, as ``browser`` does: the fetch ladder tries it first for application
    shells)."""

    modes: frozenset = field(
        default=frozenset({"text"}),
        converter=_names,
        validator=_check_names("fetch modes", ("text", "highlights", "summary")),
    )
    local: bool = False
    javascript: bool = False


@frozen(kw_only=True)
class Summarize:
    """What a type's summarizer accepts: ``target_language`` codes (``None``: any) and
    ``engine`` values (``None``: it takes no engine)."""

    languages: tuple[str, ...] | None = None
    engines: tuple[str, ...] | None = None


@frozen(kw_only=True)
class ApiKey:
    """How a keyed type gets its key: an environment variable that may supply it when the
    config entry has none (``env``); whether that variable alone, with no config file,
    configures one provider (``env_implies_provider``: how ``KAGI_API_KEY`` works); the flat
    key other pi extensions store it under in the shared ``web-search.json``
    (``shared_file_key``: ``"exaApiKey"``); where a user gets one (``url``, shown by
    ``pi-web config``)."""

    env: str | None = None
    env_implies_provider: bool = False
    shared_file_key: str | None = None
    url: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.env_implies_provider and not self.env:
            raise ValueError("env_implies_provider needs env")


@frozen(kw_only=True)
class ProviderType:
    """A kind of provider that ``web-search.json`` can name in ``type``, and what it offers.

    The capabilities are the ones it describes: ``search``, ``fetch`` and ``summarize`` take a
    :class:`Search`, :class:`Fetch` or :class:`Summarize` (``Search()`` for defaults), so what
    it says of a capability cannot disagree with whether it has it.

    :param name: the ``type`` value in the config file.
    :param factory: builds a provider (:class:`SearchProvider` and so on) from a
        :class:`ProviderConfig`.
    :param label: the service's name in messages (``"Kagi"``); default: *name*.
    :param options_class: an attrs class of :func:`option` fields (default :class:`CommonOptions`;
        use :class:`ApiOptions` or a subclass for ``baseUrl``).
    :param key: an :class:`ApiKey` for a type that needs a key; ``None`` for a keyless type.
    :param fallback_for: capabilities this keyless type serves when no configured provider can
        (``direct`` serves ``fetch``).
    :param on_request: capabilities a configured provider of this type serves only when asked
        for by name: the call's ``provider`` argument, or the config's per-tool default
        (``defaultFetchProvider`` for ``fetch``); never as the ``defaultProvider`` or as the
        first provider able. Kagi declares ``fetch``: Kagi Extract costs credit and reads https
        only, so a Kagi user's ``web_fetch`` keeps the keyless fetcher unless they choose it.
    :param precedence: order among implicit providers (flat keys, environment): lower first.
    :param setup_hint: for a type that is never chosen on its own (an opt-in keyless one), one
        sentence saying how to turn it on; the "nothing configured" message and ``pi-web config``
        quote it.
    :param setup_check: called with a configured provider's options by ``pi-web config``: what
        is missing on this machine to use it (a library, a program) and the one command that
        fixes it, or ``None`` when nothing is.
    :param self_hosted: its API is the user's own server at ``baseUrl`` (no default address;
        SearXNG). The runtime checks that host with the network guard before each call, as it
        checks a page's URL: a private, loopback, link-local or single-label one is refused
        unless the entry's options set ``allowPrivateNetwork``, which then allows that address
        only. Its :class:`~pi_web_tools.api.http_client.HttpClient` should not follow
        redirects (``follow_redirects=False``), so nothing else is reached.
    """

    name: str = field(validator=attrs.validators.matches_re(r"^[a-z][a-z0-9_-]{0,39}$"))
    factory: Callable[[ProviderConfig], Provider] = field(repr=False)
    label: str = ""
    options_class: type = CommonOptions
    search: Search | None = None
    fetch: Fetch | None = None
    summarize: Summarize | None = None
    key: ApiKey | None = None
    fallback_for: frozenset = field(default=frozenset(), converter=_names)
    on_request: frozenset = field(default=frozenset(), converter=_names)
    precedence: int = 100
    setup_hint: str | None = None
    setup_check: Callable[[Any], str | None] | None = field(default=None, repr=False)
    self_hosted: bool = False
    plugin_name: str | None = None

    def __attrs_post_init__(self) -> None:
        problems = []
        if not self.capabilities:
            problems.append("no capabilities (give search=, fetch= or summarize=)")
        if self.fallback_for - self.capabilities:
            problems.append("fallback_for names capabilities it does not have")
        if self.on_request - self.capabilities:
            problems.append("on_request names capabilities it does not have")
        if self.fallback_for and self.needs_api_key:
            problems.append("fallback_for is for keyless types (key=None)")
        for name, spec in (("search", Search), ("fetch", Fetch), ("summarize", Summarize)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, spec):
                problems.append(f"{name} must be a {spec.__name__}(...) or None")
        if self.key is not None and not isinstance(self.key, ApiKey):
            problems.append("key must be an ApiKey(...) or None")
        if not (attrs.has(self.options_class) and issubclass(self.options_class, CommonOptions)):
            problems.append("options_class must be an attrs subclass of CommonOptions")
        if problems:
            raise ValueError(f"provider type {self.name!r}: " + "; ".join(problems))

    @property
    def capabilities(self) -> frozenset:
        """The capabilities it has: those it describes."""
        return frozenset(name for name in CAPABILITIES if getattr(self, name) is not None)

    @property
    def display_name(self) -> str:
        """The service's name for messages."""
        return self.label or self.name

    @property
    def needs_api_key(self) -> bool:
        """Whether a provider of this type needs a key."""
        return self.key is not None

    @property
    def api_key_env(self) -> str | None:
        """The environment variable that may supply its key."""
        return self.key.env if self.key else None

    @property
    def env_key_implies_provider(self) -> bool:
        """Whether that variable alone configures a provider."""
        return bool(self.key and self.key.env_implies_provider)

    @property
    def shared_file_key(self) -> str | None:
        """Its key's flat name in the shared file."""
        return self.key.shared_file_key if self.key else None

    @property
    def fetch_renders_javascript(self) -> bool:
        """Whether its ``fetch`` runs the page's JavaScript (:attr:`Fetch.javascript`)."""
        return bool(self.fetch and self.fetch.javascript)

    @property
    def fetches_locally(self) -> bool:
        """Whether its ``fetch`` downloads pages from this machine (:attr:`Fetch.local`)."""
        return bool(self.fetch and self.fetch.local)

    @property
    def search_filters(self) -> frozenset:
        """The ``web_search`` filters it honours (none without ``search``)."""
        return self.search.filters if self.search else frozenset()

    @property
    def default_search_limit(self) -> int | None:
        """Results per query when the call and options give none."""
        return self.search.default_limit if self.search else None

    @property
    def fetch_modes(self) -> frozenset:
        """What ``web_fetch`` can ask of it (none without ``fetch``)."""
        return self.fetch.modes if self.fetch else frozenset()

    @property
    def summary_languages(self) -> tuple[str, ...] | None:
        """The ``target_language`` codes it accepts (``None``: any)."""
        return self.summarize.languages if self.summarize else None

    @property
    def summary_engines(self) -> tuple[str, ...] | None:
        """The ``engine`` values it accepts (``None``: none)."""
        return self.summarize.engines if self.summarize else None

    def can(self, capability: str) -> bool:
        """Whether providers of this type serve *capability*."""
        return capability in self.capabilities

    def serves_by_default(self, capability: str) -> bool:
        """Whether a provider of this type may be picked for *capability* without being named
        (it can, and *capability* is not one of its :attr:`on_request` ones)."""
        return self.can(capability) and capability not in self.on_request


# --- reading an API's JSON -------------------------------------------------------------------


def text_field(value: Any) -> str | None:
    """*value* when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value.strip() else None


def number_field(value: Any) -> float | None:
    """*value* as a float when it is a JSON number (not a boolean), else ``None``."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def list_field(value: Any) -> list:
    """*value* when it is a list, else empty (a string is not a list of strings to split)."""
    return value if isinstance(value, list) else []


def one_line(text: str, limit: int = 300) -> str:
    """*text* on one line, at most *limit* characters (an ellipsis marks a cut); known keys are
    redacted first, so a key cut in two cannot show in part."""
    from .redaction import redact_secrets

    text = " ".join(redact_secrets(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def url_key(url: str) -> str:
    """A loose form of *url* (scheme and host lower-cased, no trailing slash) for matching the
    URLs an API answers for to the URLs requested."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}{query}"


def check_response(provider: str, capability: str, value: Any) -> Any:
    """*value* when it is the response type of *capability*; else a
    :class:`~pi_web_tools.api.errors.ProviderContractError` naming the provider, what it
    returned and what was expected (a plugin bug, shown as a clean error)."""
    expected = _RESPONSES[capability]
    if isinstance(value, expected):
        if isinstance(value, FetchResponse) and not all(
            isinstance(p, FetchedPage) for p in value.pages
        ):
            raise ProviderContractError(
                f"provider {provider!r} returned a FetchResponse whose pages are not all "
                "FetchedPage objects",
                provider=provider,
            )
        if isinstance(value, SearchResponse) and not all(
            isinstance(h, SearchHit) for h in value.hits
        ):
            raise ProviderContractError(
                f"provider {provider!r} returned a SearchResponse whose hits are not all "
                "SearchHit objects",
                provider=provider,
            )
        return value
    raise ProviderContractError(
        f"provider {provider!r} returned {type(value).__name__} from {capability}, "
        f"expected {expected.__name__}",
        provider=provider,
    )
