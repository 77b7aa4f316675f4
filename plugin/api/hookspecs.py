"""The plugin's own hooks: provider types and site readers register through them (pluggy
project ``pi_web_tools``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .readers import Reader
    from .types import ProviderType

PROJECT = "pi_web_tools"
ENTRY_POINT_GROUP = "pi_web_tools.providers"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_provider_types(register: Callable[[ProviderType], None]) -> None:
    """Called the first time a tool needs a provider: call ``register(provider_type)``.

    A :class:`~pi_web_tools.ProviderType` names the ``type`` used in ``web-search.json`` and
    declares what it offers; its factory builds a provider from a
    :class:`~pi_web_tools.ProviderConfig`. Built-in types (kagi, exa, direct) register exactly
    this way, through the ``pi_web_tools.providers`` entry-point group.
    """


@hookspec
def register_readers(register: Callable[[Reader], None]) -> None:
    """Called the first time ``web_fetch`` reads a URL on its default path: call
    ``register(reader)`` for each :class:`~pi_web_tools.Reader` the plugin offers.

    A reader claims the URLs of the hosts it names and reads them through the site's own API
    (GitHub, PyPI, Stack Exchange, ...). Built-in readers register exactly this way, through
    the ``pi_web_tools.providers`` entry-point group.
    """
