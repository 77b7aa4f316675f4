"""The provider API: every name a provider plugin imports, in one list.

``pi_web_tools`` re-exports exactly these names (``from pi_web_tools import ProviderType, ...``).
Names load on first access (PEP 562), so a host that imports the plugin pays for none of them;
the modules behind them are this folder's: ``types`` (capabilities, requests, responses,
:class:`ProviderType`), ``options`` (the option language), ``errors``, ``http_client`` (:class:`HttpClient`), ``retry``,
``redaction``, ``html_text`` and ``hookspecs``; ``_netguard`` (the network guard) is
private: only the fetchers on this machine (``direct``, ``browser``) and the runtime use it.
"""

from __future__ import annotations

from pi_hostspec.lazy import lazy_names

#: Each public name and the module of this folder that defines it.
HOME = {
    "hookimpl": "hookspecs",
    "CAPABILITIES": "types",
    "DATE_FILTERS": "types",
    "DOMAIN_FILTERS": "types",
    "DEFAULT_TEXT_MAX_CHARACTERS": "types",
    "FETCH": "types",
    "SEARCH": "types",
    "SEARCH_FILTERS": "types",
    "SUMMARIZE": "types",
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
    "check_response": "types",
    "http_url": "options",
    "list_field": "types",
    "number_field": "types",
    "one_line": "types",
    "one_of": "options",
    "option": "options",
    "option_key": "options",
    "options_fields": "options",
    "positive": "options",
    "text_field": "types",
    "url_key": "types",
    "html_to_text": "html_text",
    "ConfigError": "errors",
    "ProviderError": "errors",
    "HttpClient": "http_client",
    "run_interruptible": "http_client",
    "RetryPolicy": "retry",
}

__all__ = sorted(HOME)

__getattr__, __dir__ = lazy_names(__name__, HOME)
