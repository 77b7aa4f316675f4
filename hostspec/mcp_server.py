"""``pi-web mcp``: every discovered tool over MCP (stdio), with the official ``mcp`` SDK.

The SDK is an extra (``pip install 'pi-web-tools[mcp]'``) and is imported only when the server
starts; nothing else is imported before the first ``tools/list`` can be answered (the tool
listing is plain data, and tools load what they need on their first call). The
:class:`~pi_hostspec.host.Host` is built once, so plugins load once.

Written against the SDK's 2.x low-level API (``Server(on_list_tools=..., on_call_tool=...)``,
snake_case model fields). Stdout carries the protocol: nothing else is written to it, and the
SDK's loggers are kept at WARNING so no INFO lines reach the client's stderr log either.

The first SIGINT (Ctrl-C) or SIGTERM ends the server at once (exit 130 or 0), as does the end
of stdin (exit 0): stdin is read by a daemon thread, so a read that is waiting for the next
line never holds up the exit. The streamable HTTP transport is in :mod:`.mcp_http`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import Host
    from .types import Tool

__all__ = ["CallLog", "build_server", "run_until_signal", "serve"]

SERVER_NAME = "pi-web-tools"
_QUIET_LOGGERS = ("mcp", "mcp_types", "httpx", "httpcore", "urllib3", "opentelemetry")

#: ``on_call(tool, outcome, seconds)``: told about each finished ``tools/call``; the outcome is
#: ``ok``, ``error`` (an isError result), ``unknown-tool`` or ``cancelled``.
CallLog = Callable[[str, str, float], None]


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


def build_server(
    host: Host,
    *,
    limiter: Any = None,
    on_call: CallLog | None = None,
    present: Callable[[str], str] | None = None,
) -> Any:
    """The low-level MCP server listing *host*'s tools and running calls through it.

    Each call runs in a worker thread; *limiter* (an ``anyio.CapacityLimiter``) bounds how many
    run at once (default: anyio's shared thread limit). *on_call* hears of every finished call.
    *present* rewrites every text sent to the client (results and progress messages).
    """
    import anyio
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    from .host import UnknownToolError
    from .types import ToolContext

    tools = [_mcp_tool(tool) for tool in host.tools.values()]

    def report(name: str, outcome: str, started: float) -> None:
        if on_call is not None:
            on_call(name, outcome, time.monotonic() - started)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        started = time.monotonic()
        name = params.name
        arguments = params.arguments if params.arguments is not None else {}
        try:
            host.get_tool(name)
        except UnknownToolError as exc:  # a protocol error, as the spec asks
            report("?", "unknown-tool", started)
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        tool_ctx = ToolContext(on_update=_progress_reporter(ctx, present))
        try:
            result = await anyio.to_thread.run_sync(
                host.call, name, arguments, tool_ctx, abandon_on_cancel=True, limiter=limiter
            )
        except anyio.get_cancelled_exc_class():
            tool_ctx.cancel.set()  # the client cancelled: tell the tool to stop
            report(name, "cancelled", started)
            raise
        report(name, "error" if result.is_error else "ok", started)
        texts = [part.text for part in result.content] or [""]
        content = [_text_content(present(text) if present else text) for text in texts]
        return types.CallToolResult(content=content, is_error=result.is_error)

    return Server(
        SERVER_NAME,
        version=_version(),
        title="pi web tools",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _progress_reporter(request_ctx: Any, present: Callable[[str], str] | None = None) -> Any:
    """An ``on_update`` for a tool call that turns partial results carrying ``progress`` and
    ``total`` into MCP progress notifications (a no-op for a client that sent no
    ``progressToken``). It runs in the tool's worker thread and never fails the call."""
    import anyio.from_thread
    import anyio.lowlevel

    loop = anyio.lowlevel.current_token()  # the tool reports from threads of its own
    meta = getattr(request_ctx, "meta", None)
    token = getattr(meta, "progress_token", None) if meta is not None else None
    if token is None and isinstance(meta, dict):
        token = meta.get("progressToken") or meta.get("progress_token")
    session = getattr(request_ctx, "session", None)
    if token is None or session is None:
        return None

    async def report(done: float, total: float, message: str) -> None:
        await session.send_progress_notification(
            token, done, total, message, related_request_id=getattr(request_ctx, "request_id", None)
        )

    def on_update(partial: Any) -> None:
        details = partial.details if isinstance(partial.details, dict) else {}
        done, total = details.get("progress"), details.get("total")
        if not isinstance(done, int) or not isinstance(total, int):
            return
        try:
            message = present(partial.text) if present else partial.text
            anyio.from_thread.run(report, float(done), float(total), message, token=loop)
        except Exception:  # noqa: BLE001 - progress is a courtesy, never a failure
            pass

    return on_update


def _error(message: str) -> None:
    print(f"pi-web mcp: {message}", file=sys.stderr, flush=True)


def check_sdk() -> int | None:
    """None when a usable ``mcp`` SDK (2.x) is installed; else say why and return 2."""
    try:
        import anyio  # noqa: F401
        import mcp.types  # noqa: F401
        from mcp.server.lowlevel import Server
    except ImportError:
        from .install import install_command

        _error(f"the MCP server needs the 'mcp' package; install it with: {install_command('mcp')}")
        return 2
    import inspect

    if "on_list_tools" not in inspect.signature(Server.__init__).parameters:
        _error(
            "the installed 'mcp' package is too old (2.x needed); upgrade it with: pip install --upgrade 'mcp>=2'"
        )
        return 2
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return None


def load_server(host: Host | None, **options: Any) -> tuple[Host, Any] | None:
    """(host, server) built with *options* for :func:`build_server`; None (after one line on
    stderr) when a plugin fails to load."""
    from .host import Host

    try:
        # Plugins load here; anything they print must not reach the protocol stream.
        with contextlib.redirect_stdout(sys.stderr):
            host = host if host is not None else Host()
            return host, build_server(host, **options)
    except Exception as exc:  # noqa: BLE001 - a broken plugin: say so and stop
        lines = str(exc).strip().splitlines()
        _error(f"cannot load the tools: {lines[0] if lines else type(exc).__name__}")
        return None


async def run_until_signal(
    main: Callable[[], Awaitable[None]], on_signal: Callable[[int], bool] | None = None
) -> int:
    """Run *main* until it returns (exit status 0) or SIGINT / SIGTERM arrives (130 / 0).

    By default the first signal cancels *main*. With *on_signal*, the signal is passed to it
    first, and *main* is cancelled only when it returns True (a server that drains requests
    asks for a second signal before giving up on them).
    """
    import anyio

    status = 0
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal status
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    status = 130 if signum == signal.SIGINT else 0
                    if on_signal is None or on_signal(signum):
                        group.cancel_scope.cancel()
                        return

        if sys.platform != "win32":  # Windows: Ctrl-C arrives as KeyboardInterrupt instead
            group.start_soon(watch)
        await main()
        group.cancel_scope.cancel()  # main ended by itself: stop watching
    return status


class _StdinLines:
    """The lines of fd 0 for the SDK's stdio transport, read by a daemon thread.

    The SDK reads stdin in an anyio worker thread that cannot be interrupted, so a shutdown
    waited for the next line and the interpreter's exit for the thread. A daemon thread
    reading the raw descriptor (no buffered object shared with the interpreter) never holds
    up either. Decoded as UTF-8 with replacement, like the SDK's own reader.

    At the end of input the SDK cancels requests still in flight, so the end is passed on
    only after *grace* seconds: requests piped in just before it (``pi-web mcp < requests``)
    are still answered, and a call that needs longer is cancelled as before.
    """

    def __init__(self, fd: int = 0, limit: int = 16, grace: float = 0.3):
        self._fd = fd
        self._limit = limit
        self._grace = grace

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        import asyncio

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        room = threading.Semaphore(self._limit)  # lines read ahead of the server, at most

        def deliver(line: str | None) -> bool:
            # No coroutine is made in this thread: one the closing loop never ran was
            # reported as "coroutine 'Queue.put' was never awaited" when a client hung up.
            while not room.acquire(timeout=0.5):
                if loop.is_closed():
                    return False
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the loop is closed: nobody is listening
                return False
            return True

        def pump() -> None:
            pending = bytearray()
            try:
                while chunk := os.read(self._fd, 65536):
                    scanned = len(pending)
                    pending += chunk
                    start = 0
                    while (end := pending.find(b"\n", max(start, scanned))) != -1:
                        if not deliver(pending[start : end + 1].decode("utf-8", "replace")):
                            return
                        start = end + 1
                    del pending[:start]
                if pending:
                    deliver(pending.decode("utf-8", "replace"))
            except OSError:
                pass
            deliver(None)

        threading.Thread(target=pump, name="pi-web mcp stdin", daemon=True).start()
        while (line := await queue.get()) is not None:
            room.release()
            yield line
        await asyncio.sleep(self._grace)


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin=_StdinLines()) as (read_stream, write_stream):  # type: ignore[arg-type] # an async line source
        await server.run(read_stream, write_stream, server.create_initialization_options())


def finish(status: int, grace: float = 0.5) -> int:
    """Return *status*, or end the process with it when a tool thread (which cannot be
    interrupted) is still running after *grace* seconds: an exit must not wait for it."""
    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    return status


def serve(host: Host | None = None) -> int:
    """Serve every tool of *host* (default: every discovered plugin) over MCP on stdin/stdout
    until the client disconnects or a signal arrives.

    Returns 0 at a clean end (end of input, SIGTERM), 130 after SIGINT, 1 when the tools cannot
    be loaded, 2 when the ``mcp`` package is missing or too old.
    """
    problem = check_sdk()
    if problem is not None:
        return problem
    loaded = load_server(host)
    if loaded is None:
        return 1
    _, server = loaded
    import anyio

    try:
        status = anyio.run(run_until_signal, lambda: _serve_stdio(server), backend="asyncio")
    except BaseException as exc:
        if not _only_broken_pipes(exc):
            raise
        # The client closed its end of our stdout: the session is over, as at the end of
        # input. Nothing more may be written there (not even the interpreter's last flush).
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        status = 0
    return finish(status)


def _only_broken_pipes(exc: BaseException) -> bool:
    """True when *exc* is a BrokenPipeError, or a group made only of them."""
    inner = getattr(exc, "exceptions", None)
    if inner is not None:
        return bool(inner) and all(_only_broken_pipes(one) for one in inner)
    return isinstance(exc, BrokenPipeError)
