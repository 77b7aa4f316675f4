"""The provider API: every name a provider plugin imports, in one list.

``pi_web_tools`` re-exports exactly these names (``from pi_web_tools import ProviderType, ...``).
Names load on first access (PEP 562), so a host that imports the plugin pays for none of them;
the modules behind them are this folder's: ``types`` (capabilities, requests, responses,
:class:`ProviderType`), ``options`` (the option language), ``errors``, ``retry``,
``redaction``, ``html_text``, ``readers`` (site readers) and ``hookspecs``. ``_http_client``
(the one HTTP path; :class:`HttpClient` and ``run_interruptible`` are exported from it) and ``_netguard`` (the network guard) are private:
only the fetchers on this machine (``direct``, ``browser``) and the runtime import them. A
provider imports names of this list only, through this face (tests/test_layering.py checks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_hostspec.lazy import lazy_names

#: Each public name and the module of this folder that defines it.
HOME = {
    "hookimpl": "hookspecs",
    "DATE_FILTERS": "types",
    "DOMAIN_FILTERS": "types",
    "DEFAULT_TEXT_MAX_CHARACTERS": "types",
    "ApiKey": "types",
    "ApiOptions": "options",
    "Fetch": "types",
    "FetchProvider": "types",
    "Search": "types",
    "SearchProvider": "types",
    "Summarize": "types",
    "SummarizeProvider": "types",
    "CommonOptions": "options",
    "FetchRequest": "types",
    "FetchResponse": "types",
    "FetchedPage": "types",
    "OptionValueError": "options",
    "Provider": "types",
    "ProviderConfig": "types",
    "ProviderType": "types",
    "SearchHit": "types",
    "SearchRequest": "types",
    "SearchResponse": "types",
    "SummarizeRequest": "types",
    "SummaryResponse": "types",
    "at_least": "options",
    "between": "options",
    "http_url": "options",
    "list_field": "types",
    "number_field": "types",
    "one_line": "types",
    "one_of": "options",
    "option": "options",
    "positive": "options",
    "text_field": "types",
    "url_key": "types",
    "ErrorKind": "errors",
    "ProviderError": "errors",
    "html_to_markdown": "html_text",
    "Reader": "readers",
    "ReaderError": "readers",
    "ReaderToken": "readers",
    "ReaderWeb": "readers",
    "Reading": "readers",
    "WebResponse": "readers",
    "HttpClient": "_http_client",
    "run_interruptible": "_http_client",
    "RetryPolicy": "retry",
}

#: The names of HOME (a literal, for linters and type checkers; a test keeps it in step).
__all__ = [
    "ApiKey",
    "ApiOptions",
    "CommonOptions",
    "DATE_FILTERS",
    "DEFAULT_TEXT_MAX_CHARACTERS",
    "DOMAIN_FILTERS",
    "ErrorKind",
    "Fetch",
    "FetchProvider",
    "FetchRequest",
    "FetchResponse",
    "FetchedPage",
    "HttpClient",
    "OptionValueError",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "ProviderType",
    "Reader",
    "ReaderError",
    "ReaderToken",
    "ReaderWeb",
    "Reading",
    "RetryPolicy",
    "Search",
    "SearchHit",
    "SearchProvider",
    "SearchRequest",
    "SearchResponse",
    "Summarize",
    "SummarizeProvider",
    "SummarizeRequest",
    "SummaryResponse",
    "WebResponse",
    "at_least",
    "between",
    "hookimpl",
    "html_to_markdown",
    "http_url",
    "list_field",
    "number_field",
    "one_line",
    "one_of",
    "option",
    "positive",
    "run_interruptible",
    "text_field",
    "url_key",
]

# The lazy names as type checkers see them (tests/test_plugin.py keeps them in step with the map).
if TYPE_CHECKING:
    from ._http_client import (
        HttpClient,
        run_interruptible,
    )
    from .errors import (
        ErrorKind,
        ProviderError,
    )
    from .hookspecs import (
        hookimpl,
    )
    from .html_text import (
        html_to_markdown,
    )
    from .options import (
        ApiOptions,
        CommonOptions,
        OptionValueError,
        at_least,
        between,
        http_url,
        one_of,
        option,
        positive,
    )
    from .readers import (
        Reader,
        ReaderError,
        ReaderToken,
        ReaderWeb,
        Reading,
        WebResponse,
    )
    from .retry import (
        RetryPolicy,
    )
    from .types import (
        DATE_FILTERS,
        DEFAULT_TEXT_MAX_CHARACTERS,
        DOMAIN_FILTERS,
        ApiKey,
        Fetch,
        FetchedPage,
        FetchProvider,
        FetchRequest,
        FetchResponse,
        Provider,
        ProviderConfig,
        ProviderType,
        Search,
        SearchHit,
        SearchProvider,
        SearchRequest,
        SearchResponse,
        Summarize,
        SummarizeProvider,
        SummarizeRequest,
        SummaryResponse,
        list_field,
        number_field,
        one_line,
        text_field,
        url_key,
    )

__getattr__, __dir__ = lazy_names(__name__, HOME)
