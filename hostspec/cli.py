"""``pi-web``: the reference host on the command line.

Core commands are ``tools``, ``call`` and ``mcp``; plugins add their own (``pi-web search``,
``pi-web config``, ...) through the ``register_commands`` hook.

Exit status: 0 success, 1 the tool returned an error, 2 usage error (unknown tool, bad JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable, Sequence

__all__ = ["CommandContext", "main"]


def _host():
    from .host import Host

    return Host()


def _print(text: str, stream=None) -> None:
    stream = stream or sys.stdout
    try:
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()
    except UnicodeEncodeError:
        stream.write(
            text.encode(stream.encoding or "utf-8", "replace").decode(stream.encoding or "utf-8")
            + "\n"
        )


def _run(
    host, name: str, args, *, as_json: bool, expanded: bool, plain: bool, rewrite=None, out=None
) -> int:
    from .theme import default_theme
    from .types import RenderOptions, ToolContext

    line = _ProgressLine(name) if not as_json and sys.stderr.isatty() else None
    ctx = ToolContext(on_update=line.show if line is not None else None)
    result_box = {}

    done = threading.Event()

    def work() -> None:
        try:
            result_box["result"] = host.call(name, args, ctx)
        except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt: raised in main's thread
            result_box["error"] = exc
        finally:
            done.set()

    # An Event, not Thread.join: a join interrupted by Ctrl-C may report the thread finished.
    threading.Thread(target=work, daemon=True).start()
    try:
        while not done.wait(0.1):
            if line is not None:
                line.tick()
    except KeyboardInterrupt:
        _cancelled(ctx, done)
    if line is not None:
        line.clear()
    if "error" in result_box:
        raise result_box["error"]
    result = result_box["result"]
    if as_json:
        _print(json.dumps(result.to_json(), ensure_ascii=False, default=str), out)
    elif plain:
        _print(rewrite(result.text) if rewrite is not None else result.text)
    else:
        theme = default_theme(sys.stdout)
        _print(host.render_call(name, args, theme))
        _print(host.render_result(name, result, RenderOptions(expanded=expanded), theme))
    return 1 if result.is_error else 0


class _ProgressLine:
    """What a long call is doing, on one line of a terminal's stderr: shown once the call has
    taken :data:`PROGRESS_AFTER_SECONDS` (the tool's last progress message, or that it is
    still working, and the seconds so far), rewritten in place each second or on news, erased
    before the answer. A call with nothing to report (one slow URL) shows it too."""

    def __init__(self, name: str) -> None:
        import time

        self.name = name
        self.started = time.monotonic()
        self.message = ""
        self.drawn: tuple[str, int] | None = None
        self.lock = threading.Lock()

    def show(self, partial) -> None:
        """A partial result from the tool: its progress message becomes the line's."""
        details = partial.details if isinstance(partial.details, dict) else {}
        if "progress" not in details:
            return
        from .sanitize import strip_control

        with self.lock:
            self.message = " ".join(strip_control(partial.text).split())[:100]
        self.tick()

    def tick(self) -> None:
        """Redraw the line if the call has run long enough and there is something new."""
        import time

        seconds = time.monotonic() - self.started
        if seconds < PROGRESS_AFTER_SECONDS:
            return
        with self.lock:
            state = (self.message, int(seconds))
            if state == self.drawn:
                return
            text = f"{self.name}: {self.message or 'working'} ({int(seconds)} s)"
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()
            self.drawn = state

    def clear(self) -> None:
        with self.lock:
            if self.drawn is not None:
                sys.stderr.write("\r\x1b[K")
                sys.stderr.flush()


#: A call shows its progress on a terminal only after this long.
PROGRESS_AFTER_SECONDS = 1.0

#: How long a cancelled call may take to wind down before the process exits anyway.
CANCEL_GRACE_SECONDS = 0.5


def _cancelled(ctx, done: threading.Event) -> None:
    """Ctrl-C: tell the tool to stop, give it a moment, then exit with status 130 at once.

    The exit is immediate (``os._exit`` after flushing and the ``atexit`` handlers): a normal
    interpreter exit would join the tool's worker threads (``concurrent.futures`` does), which
    may sit in a socket read until their timeout. A second Ctrl-C exits at once, quietly.
    """
    import atexit
    import os
    import signal

    def now(*_args) -> None:
        os._exit(130)

    try:
        signal.signal(signal.SIGINT, now)
    except ValueError:  # not the main thread: a second Ctrl-C cannot be caught here anyway
        pass
    ctx.cancel.set()
    print("pi-web: cancelled", file=sys.stderr, flush=True)
    done.wait(CANCEL_GRACE_SECONDS)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        atexit._run_exitfuncs()  # plugins' clean-up (worker processes), not thread joins
    except BaseException:  # noqa: BLE001 - exiting regardless
        pass
    os._exit(130)


def _cmd_tools(host) -> int:
    width = max((len(name) for name in host.tools), default=0)
    for name, tool in sorted(host.tools.items()):
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        _print(f"{name.ljust(width)}  {tool.label}: {first}")
    if not host.tools:
        _print("No tools registered (no pi.plugins entry point found).")
    return 0


class CommandContext:
    """What a plugin's command receives besides its parsed options: the host (built on first
    use) and :meth:`call_tool`, which runs a tool the way ``pi-web call`` does."""

    def __init__(self, host_factory=_host):
        self._host_factory = host_factory
        self._host = None

    @property
    def host(self):
        """The :class:`~pi_hostspec.host.Host` with every discovered plugin."""
        if self._host is None:
            self._host = self._host_factory()
        return self._host

    @property
    def loaded_host(self):
        """The host if it is built already, else None (for a caller that builds it later)."""
        return self._host

    def call_tool(
        self, name: str, args: dict, *, view: str = "plain", rewrite: Callable | None = None
    ) -> int:
        """Run tool *name* and print it: ``plain`` (what the model sees), ``rendered`` (call
        line and result view), ``expanded`` or ``json``. *rewrite* may change the plain text
        before it is printed (a command shows its own command line where the model's text
        names a tool call). Returns the exit status (0, 1, 2)."""
        from .host import UnknownToolError
        from .stdout import reserved_stdout

        # JSON is for programs: whatever plugins print while they load and run goes to stderr.
        with reserved_stdout() if view == "json" else contextlib.nullcontext() as out:
            try:
                self.host.get_tool(name)
            except UnknownToolError as exc:
                return _usage_error(str(exc))
            return _run(
                self.host,
                name,
                args,
                as_json=view == "json",
                expanded=view == "expanded",
                plain=view == "plain",
                rewrite=rewrite,
                out=out,
            )

    def print(self, text: str) -> None:
        """Write *text* and a newline to stdout (encoding errors replaced, never raised)."""
        _print(text)


class _Parser(argparse.ArgumentParser):
    """argparse without abbreviations (``--token`` is not ``--token-file``), and whose errors
    never echo the values given to unknown options (one may be a secret)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        if message.startswith("unrecognized arguments:"):
            names = [  # --name=value: the name only
                word.split("=", 1)[0]
                for word in message.split(":", 1)[1].split()
                if word.startswith("-")
            ]
            message = (
                f"unknown option{'s' if len(names) != 1 else ''} {', '.join(names)} "
                "(values not shown)"
                if names
                else "unexpected arguments (not shown)"
            )
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _version(cli: CommandContext | None = None) -> str:
    """``pi-web <version>``, with the distribution that provides this host and each plugin's,
    then the lines plugins add (``version_lines``: a plugin's own plugins, say)."""
    from importlib import metadata

    from .hookspecs import ENTRY_POINT_GROUP

    def owner(module: str) -> str:
        names = metadata.packages_distributions().get(module.split(".")[0]) or []
        if not names:
            return "not installed"
        try:
            return f"{names[0]} {metadata.version(names[0])}"
        except metadata.PackageNotFoundError:
            return names[0]

    plugins = [
        f"{point.name} ({owner(point.value)})"
        for point in metadata.entry_points(group=ENTRY_POINT_GROUP)
    ]
    line = f"pi-web ({owner(__name__)})"
    line += f"; plugins: {', '.join(plugins)}" if plugins else ""
    extra: list[str] = []
    if cli is not None:
        try:
            for lines in cli.host.pm.hook.version_lines():
                extra += [str(text) for text in lines or ()]
        except Exception:  # noqa: BLE001 - a plugin's extra lines are never worth a failure
            pass
    return "\n".join([line, *extra])


#: The parser of each subcommand, by name (for an unknown option's usage line).
_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}


def _parser(commands: dict) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pi-web", description="Run pi tools from the command line, as a host does."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("tools", help="list the registered tools")
    sub.add_parser("version", help="print the version of pi-web and of each plugin")
    call = sub.add_parser("call", help="call one tool with JSON arguments, as a host does")
    call.add_argument("tool", help="the tool's name (see pi-web tools)")
    call.add_argument("args", help="the arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the result as one JSON object")
    call.add_argument("--expanded", action="store_true", help="show the expanded result view")
    mcp = sub.add_parser(
        "mcp",
        help="serve every tool over MCP (stdio, or streamable HTTP with --http); needs the 'mcp' extra",
    )
    _mcp_arguments(mcp)
    for command in commands.values():
        command_parser = sub.add_parser(command.name, help=command.help)
        if command.add_arguments is not None:
            command.add_arguments(command_parser)
    _SUBPARSERS.clear()
    _SUBPARSERS.update(sub.choices)
    return parser


def _mcp_arguments(parser: argparse.ArgumentParser) -> None:
    http = parser.add_argument_group(
        "streamable HTTP",
        "A bearer token (required unless bound to loopback) is read from the environment "
        "variable PI_WEB_MCP_TOKEN or from --token-file, never from the command line.",
    )
    http.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    http.add_argument("--host", help="address to bind (default 127.0.0.1)")
    http.add_argument("--port", type=int, help="port to bind (default 8080; 0: any free port)")
    http.add_argument(
        "--token-file",
        metavar="PATH",
        help="file holding the bearer token, or one 'name: token' line per person",
    )
    http.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a Host header to accept besides loopback names (repeatable; '*' accepts any)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a browser Origin to accept besides loopback ones (repeatable)",
    )
    http.add_argument(
        "--max-calls", type=int, metavar="N", help="tool calls run at once (default 32)"
    )
    parser.add_argument(
        "--state",
        metavar="URL",
        help="shared state for several replicas: redis://HOST:6379/0 (or valkey://, rediss://); "
        "a password belongs in PI_WEB_STATE, not here",
    )


def _mcp(options: argparse.Namespace, cli: CommandContext) -> int:
    if options.state is not None:
        problem = _state_problem(options.state)
        if problem:
            return _usage_error(f"mcp: --state {problem}")
        os.environ["PI_WEB_STATE"] = options.state  # the plugins' shared state (docs/mcp.md)
    http_only = ("host", "port", "token_file", "allow_host", "allow_origin", "max_calls")
    if not options.http:
        given = [name for name in http_only if getattr(options, name) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            return _usage_error(f"mcp: {flag} needs --http")
        from .mcp_server import serve

        return serve(cli.loaded_host)
    from .mcp_http import HttpOptions, serve_http

    return serve_http(
        cli.host,
        HttpOptions(
            host=options.host or "127.0.0.1",
            port=8080 if options.port is None else options.port,
            token_file=options.token_file,
            allow_hosts=tuple(options.allow_host or ()),
            allow_origins=tuple(options.allow_origin or ()),
            max_calls=32 if options.max_calls is None else options.max_calls,
        ),
    )


#: The URL schemes ``--state`` accepts (the Redis client's, Valkey's names for them).
STATE_SCHEMES = ("redis", "rediss", "valkey", "valkeys", "unix")


def _state_problem(url: str) -> str | None:
    """Why *url* cannot be given to ``--state``: a password on a command line (every user can
    read it with ``ps``), not a URL, or not a Redis or Valkey one (the server started, and ran
    every replica on its own state, only saying so at its first call)."""
    from urllib.parse import urlsplit

    from .sanitize import url_password

    try:
        urlsplit(url)
        password = url_password(url)
    except ValueError:
        return "is not a URL (redis://HOST:6379/0)"
    if "://" not in url:
        return "is not a URL (redis://HOST:6379/0)"
    scheme = url.partition("://")[0].lower()
    if scheme not in STATE_SCHEMES:
        return (
            f"{scheme}:// is not a Redis or Valkey URL: give redis://HOST:6379/0 (or "
            "rediss://, valkey://, valkeys://, unix:///path/to/socket)"
        )
    if password:
        return (
            "holds a password, which every user of this machine could read in the command line "
            "(ps): set the URL in the environment variable PI_WEB_STATE instead"
        )
    return None


def _usage_error(message: str) -> int:
    print(f"pi-web: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-web`` console script."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before a command handles it (while loading, say)
        return 130
    except BrokenPipeError:
        return 0


def _main(argv: Sequence[str] | None) -> int:
    from .stdout import reserved_stdout

    cli = CommandContext()
    words = list(sys.argv[1:] if argv is None else argv)
    commands: dict = {}
    if words[:1] != ["mcp"]:  # pi-web mcp needs no plugin command: it loads the tools itself,
        # while it already answers the client's first message (see mcp_server.serve)
        try:
            # Plugins load here; what they print goes to stderr (stdout may carry MCP's protocol).
            with reserved_stdout():
                commands = cli.host.commands
        except Exception as exc:  # noqa: BLE001 - a broken plugin: say so, keep the core commands
            lines = str(exc).strip().splitlines()
            print(
                f"pi-web: plugin commands unavailable: {lines[0] if lines else exc!r}",
                file=sys.stderr,
            )
    parser = _parser(commands)
    options, unknown = parser.parse_known_args(words)
    if unknown:  # said with the usage of the subcommand they were given to
        where = _SUBPARSERS.get(options.command) if options.command else None
        (where or parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    return _dispatch(options, cli, commands, parser)


def _dispatch(
    options: argparse.Namespace,
    cli: CommandContext,
    commands: dict,
    parser: argparse.ArgumentParser | None = None,
) -> int:
    if options.version or options.command == "version":
        _print(_version(cli))
        return 0
    if options.command is None:  # a bare pi-web: what it can do
        if parser is not None:
            parser.print_help(sys.stdout)
            return 0
        return _usage_error("a command is needed (see pi-web --help)")
    if options.command == "mcp":
        return _mcp(options, cli)
    if options.command == "tools":
        return _cmd_tools(cli.host)
    if options.command == "call":
        try:
            args = json.loads(options.args)
        except json.JSONDecodeError as exc:
            return _usage_error(f"arguments are not valid JSON: {exc.msg} (column {exc.colno})")
        return cli.call_tool(
            options.tool,
            args,
            view="json" if options.json else "expanded" if options.expanded else "rendered",
        )
    command = commands.get(options.command)
    if command is None:
        return _usage_error(f"unknown command {options.command}")
    return command.run(options, cli)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
