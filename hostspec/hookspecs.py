"""The host's hook specifications (pluggy project ``pi``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .theme import Theme
    from .types import Command, RenderOptions, Tool, ToolResult

PROJECT = "pi"
ENTRY_POINT_GROUP = "pi.plugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_tools(register: Callable[[Tool], None]) -> None:
    """Called once when the host starts: call ``register(tool)`` for each tool you offer.

    :param register: adds a :class:`~pi_hostspec.Tool`; it raises ``DuplicateToolError`` when
        another plugin already registered the same name (a model-facing name must be stable).
    Keep this cheap: hosts call it on every start, so import heavy modules inside ``execute``.
    """


@hookspec(firstresult=True)
def render_call(tool_name: str, args: Any, theme: Theme) -> str | None:
    """Return a one-line rendering of a call to *tool_name*, or ``None`` to let others render.

    :param args: the call's arguments; they may be incomplete or not even a dict while the
        model is still streaming them, so a renderer must cope with anything.
    Without a renderer (or when one raises) the host shows the tool name.
    """


@hookspec(firstresult=True)
def render_result(
    tool_name: str, result: ToolResult, options: RenderOptions, theme: Theme
) -> str | None:
    """Return the human view of *result* (collapsed or expanded), or ``None`` to defer.

    :param options: ``expanded`` for the full view, ``is_partial`` while the tool still runs.
    Without a renderer (or when one raises) the host shows the result's raw text.
    """


@hookspec
def register_commands(register: Callable[[Command], None]) -> None:
    """Called when ``pi-web`` starts: call ``register(command)`` for each subcommand you add.

    Core commands (``tools``, ``call``, ``mcp``) cannot be replaced; a name registered twice is
    an error naming both plugins. Keep it cheap: import what a command needs inside ``run``.
    """


@hookspec
def version_lines() -> list[str]:
    """Return lines ``pi-web --version`` prints after the host's own: what this plugin is made
    of beyond its entry point (its own plugins, say), one fact a line; ``[]`` for nothing."""
    return []
