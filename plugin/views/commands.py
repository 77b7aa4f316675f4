"""The ``pi-web`` subcommands this plugin adds: tool shortcuts, ``pi-web config`` and
``pi-web cache``."""

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
    parser.add_argument("--offset", type=int)
    parser.add_argument("--fresh", action="store_true", help="skip the cache")


def _fetch(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"urls": options.urls}
    if options.provider:
        args["provider"] = options.provider
    if options.max_chars is not None:
        args["text_max_characters"] = options.max_chars
    if options.offset is not None:
        args["offset"] = options.offset
    if options.fresh:
        args["fresh"] = True
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
    from .config_report import config_report

    text, ok = config_report()
    cli.print(text)
    return 0 if ok else 1


def _cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["show", "clear"], default="show")


def _cache(options: argparse.Namespace, cli: Any) -> int:
    import sqlite3

    from pi_hostspec.truncate import format_size

    from ..runtime import cache
    from ..api.errors import ConfigError
    from ..runtime.registry import current_config

    try:
        settings = current_config().cache
    except ConfigError:
        settings = cache.CacheSettings()  # the cache works whatever the config's state
    try:
        if options.action == "clear":
            removed = cache.clear(settings)
            cli.print(
                f"Cache cleared: {removed} entr{'y' if removed == 1 else 'ies'} removed from {cache.cache_directory()}"
            )
            return 0
        directory, size, count = cache.usage(settings)
    except cache.CacheDamaged as exc:
        cli.print(f"Cache unavailable: {exc}")
        return 1
    except (OSError, sqlite3.Error) as exc:  # busy, unreadable: one line, never a traceback
        detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        cli.print(f"Cache unavailable at {cache.cache_directory()}: {detail}; try again later")
        return 1
    except Exception as exc:  # noqa: BLE001 - diskcache's Timeout and the like
        cli.print(
            f"Cache unavailable at {cache.cache_directory()}: {type(exc).__name__}; try again later"
        )
        return 1
    state = "on" if settings.enabled else 'off ("cache": false in web-search.json)'
    ttl = ", ".join(f"{tool} {seconds:g} s" for tool, seconds in settings.ttl_seconds.items())
    lines = [
        f"Cache: {state}",
        f"Directory: {directory}",
        f"Entries: {count}",
        f"Size: {format_size(size)} of at most {settings.max_megabytes:g} MB",
        f"Time to live: {ttl}",
    ]
    lines += [f"Warning: {notice.removeprefix('cache: ')}" for notice in cache.notices()]
    aside = cache.set_aside_files()
    if aside:
        lines.append(
            f"Moved aside (never read; others could have written them): {', '.join(aside)}; "
            "pi-web cache clear deletes them"
        )
    lines.append("Empty it with: pi-web cache clear")
    cli.print("\n".join(lines))
    return 0


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
        name="cache",
        help="show where the answer cache is and its size; 'pi-web cache clear' empties it",
        add_arguments=_cache_arguments,
        run=_cache,
    ),
    Command(
        name="config",
        help="show the config file, its providers (keys redacted) and problems",
        run=_config,
    ),
)
