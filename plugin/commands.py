"""The ``pi-web`` subcommands this plugin adds: tool shortcuts and ``pi-web config``."""

from __future__ import annotations

import argparse
from typing import Any

from pi_hostspec.types import Command

__all__ = ["COMMANDS"]


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("queries", nargs="+")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--provider")


def _search(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"queries": options.queries}
    if options.limit is not None:
        args["limit"] = options.limit
    if options.provider:
        args["provider"] = options.provider
    return cli.call_tool("web_search", args)


def _fetch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--provider")
    parser.add_argument("--max-chars", type=int, dest="max_chars")


def _fetch(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"urls": options.urls}
    if options.provider:
        args["provider"] = options.provider
    if options.max_chars is not None:
        args["text_max_characters"] = options.max_chars
    return cli.call_tool("web_fetch", args)


def _summarize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url")
    parser.add_argument("--type", dest="summary_type", choices=["summary", "takeaway"])
    parser.add_argument("--engine", choices=["cecil", "agnes"])
    parser.add_argument("--lang", dest="target_language")
    parser.add_argument("--provider")


def _summarize(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"url": options.url}
    for key in ("summary_type", "engine", "target_language", "provider"):
        if getattr(options, key):
            args[key] = getattr(options, key)
    return cli.call_tool("summarize", args)


def _config(options: argparse.Namespace, cli: Any) -> int:
    from .report import config_report

    text, ok = config_report()
    cli.print(text)
    return 0 if ok else 1


COMMANDS = (
    Command(
        name="search",
        help="web_search shortcut: print what the model sees",
        add_arguments=_search_arguments,
        run=_search,
    ),
    Command(
        name="fetch",
        help="web_fetch shortcut: print what the model sees",
        add_arguments=_fetch_arguments,
        run=_fetch,
    ),
    Command(
        name="summarize",
        help="summarize shortcut: print what the model sees",
        add_arguments=_summarize_arguments,
        run=_summarize,
    ),
    Command(
        name="config",
        help="show the config file, its providers (keys redacted) and problems",
        run=_config,
    ),
)
