"""pi_web_tools: web_search, web_fetch and summarize for pi-style hosts.

The provider API (:mod:`pi_web_tools.api`) is importable from here, the way ``import llm``
gives ``hookimpl`` and ``Tool``::

    from pi_web_tools import hookimpl, ProviderType, SearchResponse, HttpClient

The face re-exports exactly ``pi_web_tools.api.__all__``. Names load on first access (PEP 562):
a host that imports the plugin pays for none of them.

The folders are the layers, each importing only those before it: ``api`` (what a provider
writes against) → ``pages`` (bytes to text) → ``providers`` → ``runtime`` (config, registry,
cache, the capability runner) → ``tools`` (arguments in, text out) → ``views`` (what a person
sees).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_hostspec.lazy import lazy_names

from . import api as _api
from .api.version import __version__

__all__ = ["__version__", *_api.__all__]

if TYPE_CHECKING:  # the same names as type checkers see them
    from .api import *  # noqa: F403

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(_api.__all__, "api"))
