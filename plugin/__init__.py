"""pi_web_tools: web_search, web_fetch and summarize for pi-style hosts.

The provider API is importable from here, the way ``import llm`` gives ``hookimpl`` and
``Tool``::

    from pi_web_tools import hookimpl, ProviderType, SearchResponse, HttpClient

Names load on first access (PEP 562): a host that imports the plugin pays for none of them.
"""

from __future__ import annotations

import importlib
from typing import Any

from .version import __version__

_HOME = {
    "hookimpl": "hookspecs",
    "CAPABILITIES": "api",
    "DEFAULT_TEXT_MAX_CHARACTERS": "api",
    "SEARCH_FILTERS": "api",
    "ApiOptions": "api",
    "CommonOptions": "api",
    "FetchRequest": "api",
    "FetchResponse": "api",
    "FetchedPage": "api",
    "OptionValueError": "api",
    "Provider": "api",
    "ProviderConfig": "api",
    "ProviderType": "api",
    "SearchHit": "api",
    "SearchRequest": "api",
    "SearchResponse": "api",
    "SummarizeRequest": "api",
    "SummaryResponse": "api",
    "at_least": "api",
    "between": "api",
    "http_url": "api",
    "one_of": "api",
    "option": "api",
    "positive": "api",
    "url_key": "api",
    "list_field": "api",
    "number_field": "api",
    "one_line": "api",
    "text_field": "api",
    "html_to_text": "content",
    "ConfigError": "errors",
    "ProviderError": "errors",
    "HttpClient": "http",
    "run_interruptible": "http",
    "RetryPolicy": "retry",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_web_tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = ["__version__", *sorted(_HOME)]
