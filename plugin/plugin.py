"""The ``pi.plugins`` entry point: registers web_search, web_fetch and summarize, renders them,
and adds the ``pi-web`` subcommands ``search``, ``fetch``, ``summarize`` and ``config``.

Importing this module is cheap on purpose (hosts import every plugin at every start): the tool
specs are plain data, and config, providers and HTTP load on the first call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_hostspec.hookspecs import hookimpl
from pi_hostspec.types import Command, RenderOptions, Tool, ToolResult

from .tools import summarize, web_fetch, web_search

__all__ = [
    "TOOLS",
    "register_commands",
    "register_tools",
    "render_call",
    "render_result",
    "version_lines",
]

TOOLS: tuple[Tool, ...] = (web_search.TOOL, web_fetch.TOOL, summarize.TOOL)
_NAMES = frozenset(tool.name for tool in TOOLS)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Register the three web tools."""
    for tool in TOOLS:
        register(tool)


@hookimpl
def render_call(tool_name: str, args: Any, theme: Any) -> Any:
    """Render calls of our tools; ``None`` for anyone else's."""
    if tool_name not in _NAMES:
        return None
    from .views import human_view as render

    return render.render_call(tool_name, args, theme)


@hookimpl
def render_result(tool_name: str, result: ToolResult, options: RenderOptions, theme: Any) -> Any:
    """Render results of our tools; ``None`` for anyone else's."""
    if tool_name not in _NAMES:
        return None
    from .views import human_view as render

    return render.render_result(tool_name, result, options, theme)


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    """Add the ``pi-web`` shortcuts and ``pi-web config``."""
    from .views.commands import COMMANDS

    for command in COMMANDS:
        register(command)


@hookimpl
def version_lines() -> list[str]:
    """``pi-web --version``'s line for the provider plugins (built-in and third-party)."""
    from .views.commands import provider_plugins_line

    return [provider_plugins_line()]
