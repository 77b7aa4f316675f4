"""The ``pi.plugins`` entry point: registers web_search, web_fetch and summarize.

Importing this module is cheap on purpose (hosts import every plugin at every start): the tool
specs are plain data, and config, providers and HTTP load on the first call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_hostspec.hookspecs import hookimpl
from pi_hostspec.types import RenderOptions, Tool, ToolContext, ToolResult

from .tools import summarize, web_fetch, web_search

__all__ = ["register_tools", "render_call", "render_result"]

TOOL_MODULES = (web_search, web_fetch, summarize)
TOOL_NAMES = frozenset(module.NAME for module in TOOL_MODULES)


def _tool(module: Any) -> Tool:
    execute: Callable[[dict, ToolContext], ToolResult] = module.execute
    return Tool(
        name=module.NAME,
        label=module.LABEL,
        description=module.DESCRIPTION,
        parameters=module.PARAMETERS,
        execute=execute,
        prepare_arguments=getattr(module, "prepare_arguments", None),
    )


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Register the three web tools."""
    for module in TOOL_MODULES:
        register(_tool(module))


@hookimpl
def render_call(tool_name: str, args: Any, theme: Any) -> Any:
    """Render calls of our tools; ``None`` for anyone else's."""
    if tool_name not in TOOL_NAMES:
        return None
    from . import render

    return render.render_call(tool_name, args, theme)


@hookimpl
def render_result(tool_name: str, result: ToolResult, options: RenderOptions, theme: Any) -> Any:
    """Render results of our tools; ``None`` for anyone else's."""
    if tool_name not in TOOL_NAMES:
        return None
    from . import render

    return render.render_result(tool_name, result, options, theme)
