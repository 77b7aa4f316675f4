"""The plugin's own hook: provider types register through it (pluggy project ``pi_web_tools``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
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
