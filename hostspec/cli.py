"""``pi-web``: the reference host on the command line.

Exit status: 0 success, 1 the tool returned an error, 2 usage error (unknown tool, bad JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence

__all__ = ["main"]


def _host():
    from .host import Host

    return Host()


def _print(text: str) -> None:
    stream = sys.stdout
    try:
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()
    except UnicodeEncodeError:
        stream.write(
            text.encode(stream.encoding or "utf-8", "replace").decode(stream.encoding or "utf-8")
            + "\n"
        )


def _run(host, name: str, args, *, as_json: bool, expanded: bool, plain: bool) -> int:
    from .theme import default_theme
    from .types import RenderOptions, ToolContext

    ctx = ToolContext()
    result_box = {}

    def work() -> None:
        result_box["result"] = host.call(name, args, ctx)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        ctx.cancel.set()
        worker.join(5)
        print("pi-web: cancelled", file=sys.stderr)
        return 130
    result = result_box["result"]
    if as_json:
        _print(json.dumps(result.to_json(), ensure_ascii=False, default=str))
    elif plain:
        _print(result.text)
    else:
        theme = default_theme(sys.stdout)
        _print(host.render_call(name, args, theme))
        _print(host.render_result(name, result, RenderOptions(expanded=expanded), theme))
    return 1 if result.is_error else 0


def _cmd_tools(host) -> int:
    width = max((len(name) for name in host.tools), default=0)
    for name, tool in sorted(host.tools.items()):
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        _print(f"{name.ljust(width)}  {tool.label}: {first}")
    if not host.tools:
        _print("No tools registered (no pi.plugins entry point found).")
    return 0


def _cmd_config() -> int:
    try:
        from pi_web_tools.report import config_report
    except ImportError:
        print("pi-web: the pi_web_tools plugin is not installed", file=sys.stderr)
        return 2
    text, ok = config_report()
    _print(text)
    return 0 if ok else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-web", description="Run pi web tools from the command line."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tools", help="list the registered tools")
    call = sub.add_parser("call", help="call one tool with JSON arguments, as a host does")
    call.add_argument("tool")
    call.add_argument("args", help="the arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the result as one JSON object")
    call.add_argument("--expanded", action="store_true", help="show the expanded result view")
    search = sub.add_parser("search", help="web_search shortcut: print what the model sees")
    search.add_argument("queries", nargs="+")
    search.add_argument("--limit", type=int)
    search.add_argument("--provider")
    fetch = sub.add_parser("fetch", help="web_fetch shortcut: print what the model sees")
    fetch.add_argument("urls", nargs="+")
    fetch.add_argument("--provider")
    fetch.add_argument("--max-chars", type=int, dest="max_chars")
    summarize = sub.add_parser("summarize", help="summarize shortcut: print what the model sees")
    summarize.add_argument("url")
    summarize.add_argument("--type", dest="summary_type", choices=["summary", "takeaway"])
    summarize.add_argument("--engine", choices=["cecil", "agnes"])
    summarize.add_argument("--lang", dest="target_language")
    summarize.add_argument("--provider")
    sub.add_parser(
        "config", help="show the config file, its providers (keys redacted) and problems"
    )
    sub.add_parser("mcp", help="serve every tool over MCP (stdio); needs the 'mcp' extra")
    return parser


def _usage_error(message: str) -> int:
    print(f"pi-web: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pi-web`` console script."""
    options = _parser().parse_args(argv)
    try:
        return _dispatch(options)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _dispatch(options: argparse.Namespace) -> int:
    from .host import UnknownToolError

    if options.command == "config":
        return _cmd_config()
    if options.command == "mcp":
        from .mcp_server import serve

        return serve()
    host = _host()
    try:
        if options.command == "tools":
            return _cmd_tools(host)
        if options.command == "call":
            try:
                args = json.loads(options.args)
            except json.JSONDecodeError as exc:
                return _usage_error(f"arguments are not valid JSON: {exc.msg} (column {exc.colno})")
            host.get_tool(options.tool)
            return _run(
                host,
                options.tool,
                args,
                as_json=options.json,
                expanded=options.expanded,
                plain=False,
            )
        if options.command == "search":
            args = {"queries": options.queries}
            if options.limit is not None:
                args["limit"] = options.limit
            if options.provider:
                args["provider"] = options.provider
            return _run(host, "web_search", args, as_json=False, expanded=False, plain=True)
        if options.command == "fetch":
            args = {"urls": options.urls}
            if options.provider:
                args["provider"] = options.provider
            if options.max_chars is not None:
                args["text_max_characters"] = options.max_chars
            return _run(host, "web_fetch", args, as_json=False, expanded=False, plain=True)
        if options.command == "summarize":
            args = {"url": options.url}
            for key in ("summary_type", "engine", "target_language", "provider"):
                if getattr(options, key):
                    args[key] = getattr(options, key)
            return _run(host, "summarize", args, as_json=False, expanded=False, plain=True)
    except UnknownToolError as exc:
        return _usage_error(str(exc))
    return _usage_error(f"unknown command {options.command}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
