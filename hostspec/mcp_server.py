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
import contextvars
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

__all__ = ["CALLER", "CallLog", "build_server", "run_until_signal", "serve"]

#: The name of the bearer token the request in progress was authenticated with (a shared
#: server sets it for each request; ``None`` over stdio): the tools' ``ToolContext.caller``.
CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("pi_web_caller", default=None)

SERVER_NAME = "pi-web-tools"
SERVER_TITLE = "pi web tools"
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
        tool_ctx = ToolContext(on_update=_progress_reporter(ctx, present), caller=CALLER.get())
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
        title=SERVER_TITLE,
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
    """The lines of fd 0 for the SDK's stdio transport, read by a daemon thread from the start.

    The SDK reads stdin in an anyio worker thread that cannot be interrupted, so a shutdown
    waited for the next line and the interpreter's exit for the thread. A daemon thread
    reading the raw descriptor (no buffered object shared with the interpreter) never holds
    up either. Decoded as UTF-8 with replacement, like the SDK's own reader.

    Reading starts when the object is made, before the SDK is imported: each line read until
    the server takes over is shown to *early* (in the reading thread), which may answer it
    at once (see :class:`_EarlyAnswers`); every line still reaches the server, in order.

    At the end of input the SDK cancels requests still in flight, so the end is passed on
    only after *grace* seconds: requests piped in just before it (``pi-web mcp < requests``)
    are still answered, and a call that needs longer is cancelled as before.
    """

    def __init__(
        self,
        fd: int = 0,
        limit: int = 16,
        grace: float = 0.3,
        early: Callable[[str], None] | None = None,
    ):
        self._fd = fd
        self._grace = grace
        self._early = early
        self._room = threading.Semaphore(limit)  # lines read ahead of the server, at most
        self._lock = threading.Lock()
        self._waiting: list[str | None] = []  # read before the server took over
        self._loop: Any = None
        self._queue: Any = None
        threading.Thread(target=self._pump, name="pi-web mcp stdin", daemon=True).start()

    def _deliver(self, line: str | None) -> bool:
        # No coroutine is made in this thread: one the closing loop never ran was reported as
        # "coroutine 'Queue.put' was never awaited" when a client hung up.
        while not self._room.acquire(timeout=0.5):
            if self._loop is not None and self._loop.is_closed():
                return False
        with self._lock:
            if self._loop is None:
                if line is not None and self._early is not None:
                    self._early(line)
                self._waiting.append(line)
                return True
            loop, queue = self._loop, self._queue
        try:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        except RuntimeError:  # the loop is closed: nobody is listening
            return False
        return True

    def _pump(self) -> None:
        pending = bytearray()
        try:
            while chunk := os.read(self._fd, 65536):
                scanned = len(pending)
                pending += chunk
                start = 0
                while (end := pending.find(b"\n", max(start, scanned))) != -1:
                    if not self._deliver(pending[start : end + 1].decode("utf-8", "replace")):
                        return
                    start = end + 1
                del pending[:start]
            if pending:
                self._deliver(pending.decode("utf-8", "replace"))
        except OSError:
            pass
        self._deliver(None)

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        import asyncio

        queue: asyncio.Queue[str | None] = asyncio.Queue()
        with self._lock:  # the server takes over: no more early answers
            for line in self._waiting:
                queue.put_nowait(line)
            self._waiting.clear()
            self._loop, self._queue = asyncio.get_running_loop(), queue
        while (line := await queue.get()) is not None:
            self._room.release()
            yield line
        await asyncio.sleep(self._grace)


class _ProtocolOut:
    """Stdout for the protocol: one writer for the early answers (from the reading thread) and
    the SDK (``stdio_server(stdout=...)``), a line at a time, UTF-8. The SDK's own answer to a
    request answered early is left out (the client has it), and checked against the early
    one: a difference is said on stderr."""

    def __init__(self, stream: Any):
        self._stream = getattr(stream, "buffer", stream)
        self._binary = hasattr(stream, "buffer")
        self._lock = threading.Lock()
        self.answered: dict[str, dict] = {}  # request id (as JSON) -> the early answer

    def write_line(self, line: str) -> None:
        """Write one protocol line (thread-safe)."""
        with self._lock:
            self._stream.write(line.encode("utf-8") if self._binary else line)
            self._stream.flush()

    def _answered_early(self, line: str) -> bool:
        import json

        try:
            message = json.loads(line)
        except ValueError:
            return False
        key = json.dumps(message.get("id")) if isinstance(message, dict) else None
        early = self.answered.pop(key, None) if key is not None else None
        if early is None or not ("result" in message or "error" in message):
            return False
        if _handshake_facts(message) != _handshake_facts(early):
            _error(
                "the early answer to a handshake request differed from the SDK's "
                f"({_handshake_facts(early)} vs {_handshake_facts(message)}); please report it"
            )
        return True

    async def write(self, text: str) -> None:
        import anyio.to_thread

        if self.answered and self._answered_early(text):
            return
        await anyio.to_thread.run_sync(self.write_line, text)

    async def flush(self) -> None:
        return None


#: The protocol versions of the SDK this server is written against (``mcp_types.version``): the
#: handshake ones, oldest to newest, and the 2026-07-28 ones (a test checks them against the
#: installed SDK, whose answers the early ones must equal).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
_ENVELOPE_VERSION = "io.modelcontextprotocol/protocolVersion"
_SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def _server_info() -> dict:
    return {"name": SERVER_NAME, "title": SERVER_TITLE, "version": _version()}


def early_answer(message: Any) -> dict | None:
    """The answer to a well-formed handshake request (``initialize``, or a 2026-07-28
    ``server/discover`` at a version served here) as the SDK gives it, without the SDK; None
    for anything else, which waits for the SDK. It lets ``pi-web mcp`` answer a client's first
    message at once, while the SDK (over a second to import on a busy machine) and the plugins
    load: a client that waits 1 s for its probe gave up on slow servers."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" not in message:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    if message.get("method") == "initialize":
        client = params.get("clientInfo")
        requested = params.get("protocolVersion")
        if not (
            isinstance(requested, str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict)
            and isinstance(client.get("name"), str)
            and isinstance(client.get("version"), str)
        ):
            return None
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        result: dict[str, Any] = {
            "capabilities": _CAPABILITIES,
            "protocolVersion": version,
            "serverInfo": _server_info(),
        }
    elif message.get("method") == "server/discover":
        meta = params.get("_meta")
        if not isinstance(meta, dict) or meta.get(_ENVELOPE_VERSION) not in MODERN_VERSIONS:
            return None
        if not isinstance(meta.get("io.modelcontextprotocol/clientCapabilities"), dict):
            return None
        result = {
            "cacheScope": "private",
            "capabilities": _CAPABILITIES,
            "resultType": "complete",
            "supportedVersions": list(MODERN_VERSIONS),
            "ttlMs": 0,
            "_meta": {_SERVER_INFO_KEY: _server_info()},
        }
    else:
        return None
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


_CAPABILITIES = {"tools": {"listChanged": False}}


def _handshake_facts(answer: dict) -> tuple:
    """What an early answer must share with the SDK's: versions, capabilities, server."""
    result = answer.get("result")
    if not isinstance(result, dict):
        return ("error", (answer.get("error") or {}).get("code"))
    info = result.get("serverInfo") or (result.get("_meta") or {}).get(_SERVER_INFO_KEY)
    return (
        result.get("protocolVersion"),
        result.get("supportedVersions"),
        result.get("capabilities"),
        info,
    )


class _EarlyAnswers:
    """The *early* hook of :class:`_StdinLines`: answers handshake requests on *out* while the
    server loads, and notes them so the SDK's own answer is left out."""

    def __init__(self, out: _ProtocolOut):
        self.out = out

    def __call__(self, line: str) -> None:
        import json

        try:
            answer = early_answer(json.loads(line))
        except ValueError:
            return
        if answer is None:
            return
        self.out.answered[json.dumps(answer["id"])] = answer
        try:
            self.out.write_line(json.dumps(answer, separators=(",", ":")) + "\n")
        except OSError:  # the client is gone; the server finds out on its own
            pass


async def serve_both_eras(server: Any, read_stream: Any, write_stream: Any) -> None:
    """Serve one stdio connection in both protocol eras at once: every request carrying the
    2026-07-28 envelope is served by the SDK's per-request loop, everything else (``initialize``
    first) by its handshake loop.

    The SDK locks a connection to the era of its first request, so a client whose
    ``server/discover`` probe crossed its fallback ``initialize`` (it gave up waiting for the
    probe's answer) had that ``initialize`` refused. Here both are answered, and the client
    goes on in whichever era it chose, from whichever answer it saw first."""
    import anyio
    from mcp.server.runner import serve_loop
    from mcp_types import JSONRPCNotification, JSONRPCRequest

    try:
        from mcp.server.runner import _serve_modern_stream
    except ImportError:  # an SDK without it: its own loop, which locks to one era
        await server.run(read_stream, write_stream, server.create_initialization_options())
        return

    modern_ids: set[str] = set()

    def is_modern(message: Any) -> bool:
        if isinstance(message, JSONRPCRequest):
            meta = (message.params or {}).get("_meta")
            return (
                message.method != "initialize"
                and isinstance(meta, dict)
                and _ENVELOPE_VERSION in meta
            )
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            return repr((message.params or {}).get("requestId")) in modern_ids
        return False

    async with server.lifespan(server) as state:
        legacy_send, legacy_read = anyio.create_memory_object_stream[Any](16)
        modern_send, modern_read = anyio.create_memory_object_stream[Any](16)
        legacy_out, legacy_write = anyio.create_memory_object_stream[Any](16)
        modern_out, modern_write = anyio.create_memory_object_stream[Any](16)

        async def route() -> None:
            async with legacy_send, modern_send:
                async for item in read_stream:
                    message = getattr(item, "message", None)
                    if message is not None and is_modern(message):
                        if isinstance(message, JSONRPCRequest):
                            modern_ids.add(repr(message.id))
                        await modern_send.send(item)
                    else:
                        await legacy_send.send(item)

        async def forward(source: Any, modern: bool) -> None:
            async with source:
                async for item in source:
                    if modern:
                        modern_ids.discard(repr(getattr(item.message, "id", None)))
                    try:
                        await write_stream.send(item)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return  # stdout is gone: the client hung up

        streams: tuple[Any, ...] = (legacy_send, legacy_read, modern_send, modern_read)
        streams += (legacy_out, legacy_write, modern_out, modern_write)
        async with contextlib.AsyncExitStack() as stack:
            for stream in (read_stream, write_stream, *streams):
                await stack.enter_async_context(stream)
            group = await stack.enter_async_context(anyio.create_task_group())
            group.start_soon(route)
            group.start_soon(forward, legacy_write, False)
            group.start_soon(forward, modern_write, True)
            group.start_soon(
                lambda: serve_loop(
                    server,
                    legacy_read,
                    legacy_out,
                    lifespan_state=state,
                    init_options=server.create_initialization_options(),
                )
            )
            group.start_soon(
                lambda: _serve_modern_stream(
                    server, modern_read, modern_out, lifespan_state=state, raise_exceptions=False
                )
            )


async def _serve_stdio(server: Any, lines: _StdinLines, out: _ProtocolOut) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
        await serve_both_eras(server, read_stream, write_stream)


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

    Stdin is read from the start: a client's ``initialize`` or ``server/discover`` is answered
    at once, while the SDK and the plugins load (:func:`early_answer`). Whatever else writes
    to stdout meanwhile (a plugin's print) goes to stderr.

    Returns 0 at a clean end (end of input, SIGTERM), 130 after SIGINT, 1 when the tools cannot
    be loaded, 2 when the ``mcp`` package is missing or too old.
    """
    import importlib.util

    if importlib.util.find_spec("mcp") is None:  # cheap: the import itself takes a second
        return check_sdk() or 2
    # The first answer goes out before the SDK and the plugins load. Until the server watches
    # for signals, SIGINT and SIGTERM end the process at once, quietly, with their statuses:
    # there is nothing to clean up yet (a KeyboardInterrupt inside pydantic's model building
    # printed a traceback; SIGTERM's default is a kill, status -15).
    previous = {sig: signal.signal(sig, _exit_at_once) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _serve_stdin(host)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _exit_at_once(signum: int, frame: Any) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(130 if signum == signal.SIGINT else 0)


def _serve_stdin(host: Host | None) -> int:
    from .stdout import reserved_stdout

    with reserved_stdout() as stream:
        out = _ProtocolOut(stream)
        lines = _StdinLines(early=_EarlyAnswers(out))
        problem = check_sdk()
        if problem is not None:
            return problem
        loaded = load_server(host)
        if loaded is None:
            return 1
        _, server = loaded
        import anyio

        try:
            status = anyio.run(
                run_until_signal, lambda: _serve_stdio(server, lines, out), backend="asyncio"
            )
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
    import anyio

    inner = getattr(exc, "exceptions", None)
    if inner is not None:
        return bool(inner) and all(_only_broken_pipes(one) for one in inner)
    return isinstance(exc, (BrokenPipeError, anyio.BrokenResourceError))
