"""``pi-web mcp``: every discovered tool over MCP (stdio), with the official ``mcp`` SDK.

The SDK is an extra (``pip install 'pi-web-tools[mcp]'``) and is imported only when the server
starts. The :class:`~pi_hostspec.host.Host` is built once, so plugins load once.

Written against the SDK's 2.x low-level API (``Server(on_list_tools=..., on_call_tool=...)``,
snake_case model fields). Stdout carries the protocol: nothing else is written to it, and the
SDK's loggers are kept at WARNING so no INFO lines reach the client's stderr log either.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import Host
    from .types import Tool

__all__ = ["build_server", "serve"]

SERVER_NAME = "pi-web-tools"
INSTALL_HINT = "install it with: pip install 'pi-web-tools[mcp]'"
_QUIET_LOGGERS = ("mcp", "mcp_types", "httpx", "httpcore", "urllib3", "opentelemetry")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("pi-web-tools")
    except Exception:  # noqa: BLE001 - not installed as a distribution (a source checkout)
        return "0"


def _mcp_tool(tool: Tool) -> Any:
    """The MCP listing of *tool*; its annotations carry only the hints the tool declares (the
    protocol's cautious defaults apply to the rest: may write, may be destructive)."""
    from mcp import types

    hints = {
        "read_only_hint": tool.read_only_hint,
        "destructive_hint": tool.destructive_hint,
        "idempotent_hint": tool.idempotent_hint,
        "open_world_hint": tool.open_world_hint,
    }
    annotations = types.ToolAnnotations(
        title=tool.label, **{key: value for key, value in hints.items() if value is not None}
    )
    return types.Tool(
        name=tool.name,
        title=tool.label,
        description=tool.description,
        input_schema=tool.parameters,
        annotations=annotations,
    )


def _text_content(text: str) -> Any:
    from mcp import types

    return types.TextContent(type="text", text=text)


def build_server(host: Host) -> Any:
    """The low-level MCP server listing *host*'s tools and running calls through it."""
    import anyio
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from .host import UnknownToolError
    from .types import ToolContext

    tools = [_mcp_tool(tool) for tool in host.tools.values()]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        name = params.name
        arguments = params.arguments if params.arguments is not None else {}
        try:
            host.get_tool(name)
        except UnknownToolError as exc:  # a protocol error, as the spec asks
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        tool_ctx = ToolContext()
        try:
            result = await anyio.to_thread.run_sync(
                host.call, name, arguments, tool_ctx, abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            tool_ctx.cancel.set()  # the client cancelled: tell the tool to stop
            raise
        content = [_text_content(part.text) for part in result.content] or [_text_content("")]
        return types.CallToolResult(content=content, is_error=result.is_error)

    return Server(
        SERVER_NAME,
        version=_version(),
        title="pi web tools",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _run(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _error(message: str) -> None:
    print(f"pi-web mcp: {message}", file=sys.stderr)


def serve(host: Host | None = None) -> int:
    """Serve every tool of *host* (default: every discovered plugin) over MCP on stdin/stdout
    until the client disconnects.

    Returns 0 at a clean end, 1 when the tools cannot be loaded, 2 when the ``mcp`` package is
    missing or too old.
    """
    try:
        import anyio
        import mcp.types  # noqa: F401
        from mcp.server.lowlevel import Server
    except ImportError:
        _error(f"the MCP server needs the 'mcp' package; {INSTALL_HINT}")
        return 2
    import inspect

    if "on_list_tools" not in inspect.signature(Server.__init__).parameters:
        _error(
            "the installed 'mcp' package is too old (2.x needed); "
            "upgrade it with: pip install --upgrade 'pi-web-tools[mcp]'"
        )
        return 2

    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)

    from .host import Host

    try:
        # Plugins load here; anything they print must not reach the protocol stream.
        with contextlib.redirect_stdout(sys.stderr):
            host = host if host is not None else Host()
            server = build_server(host)
    except Exception as exc:  # noqa: BLE001 - a broken plugin: say so and stop
        lines = str(exc).strip().splitlines()
        _error(f"cannot load the tools: {lines[0] if lines else type(exc).__name__}")
        return 1
    anyio.run(_run, server)
    return 0
