"""The provider API: every name a provider plugin imports, in one list.

``pi_web_tools`` re-exports exactly these names (``from pi_web_tools import ProviderType, ...``).
Names load on first access (PEP 562), so a host that imports the plugin pays for none of them;
the modules behind them are this folder's: ``types`` (capabilities, options, requests, responses,
:class:`ProviderType`), ``errors``, ``http_client`` (:class:`HttpClient`), ``retry``,
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
    "ApiOptions": "types",
    "Fetch": "types",
    "FetchProvider": "types",
    "Search": "types",
    "SearchProvider": "types",
    "Summarize": "types",
    "SummarizeProvider": "types",
    "CommonOptions": "types",
    "FetchRequest": "types",
    "FetchResponse": "types",
    "FetchedPage": "types",
    "OptionValueError": "types",
    "Provider": "types",
    "ProviderConfig": "types",
    "ProviderType": "types",
    "SearchHit": "types",
    "SearchRequest": "types",
    "SearchResponse": "types",
    "SummarizeRequest": "types",
    "SummaryResponse": "types",
    "at_least": "types",
    "between": "types",
    "check_response": "types",
    "http_url": "types",
    "list_field": "types",
    "number_field": "types",
    "one_line": "types",
    "one_of": "types",
    "option": "types",
    "option_key": "types",
    "options_fields": "types",
    "positive": "types",
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
