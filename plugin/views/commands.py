"""The ``pi-web`` subcommands this plugin adds: tool shortcuts, ``pi-web config``,
``pi-web cache`` and ``pi-web usage``."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from pi_hostspec.types import Command

__all__ = ["COMMANDS"]


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Search the web. Unquoted words are one query (pi-web search how to use asyncio); "
        'give several queries with a repeated -q (pi-web search -q "rust async" -q "tokio").'
    )
    parser.add_argument("words", nargs="*", help="the words of one query")
    parser.add_argument(
        "-q",
        "--query",
        action="append",
        dest="queries",
        metavar="QUERY",
        help="a query; repeat for several (at most 10), run at once",
    )
    parser.add_argument("--limit", type=int, help="results per query (1 to 50)")
    parser.add_argument(
        "--provider",
        help="a configured provider to use instead of the default; several, comma-separated, "
        "or 'all' send each query to each of them and merge the results",
    )
    parser.add_argument("--fresh", action="store_true", help="skip the cache")


def _search(options: argparse.Namespace, cli: Any) -> int:
    queries = ([" ".join(options.words)] if options.words else []) + list(options.queries or [])
    if not queries:
        print(
            'pi-web search: give a query: pi-web search WORDS... or -q "QUERY" (repeatable)',
            file=sys.stderr,
        )
        return 2
    args: dict = {"queries": queries}
    if options.limit is not None:
        args["limit"] = options.limit
    if options.provider:
        names = [name.strip() for name in options.provider.split(",") if name.strip()]
        args["provider"] = names if len(names) > 1 else options.provider
    if options.fresh:
        args["fresh"] = True
    return cli.call_tool("web_search", args)


def _fetch_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("urls", nargs="+", metavar="URL", help="http(s) URLs to read (1 to 20)")
    parser.add_argument("--provider", help="a configured provider to use instead of the default")
    parser.add_argument(
        "--max-chars",
        type=int,
        dest="max_chars",
        help="characters of each page to show (default 12000)",
    )
    parser.add_argument(
        "--offset", type=int, help="start this many characters into each page (to read on)"
    )
    parser.add_argument(
        "--content-hash",
        dest="content_hash",
        metavar="HASH",
        help="with --offset: the hash the previous window's last line gave (says if the page changed)",
    )
    parser.add_argument("--links", action="store_true", help="list each page's links after it")
    parser.add_argument(
        "--question",
        help="show only the passages of each page that answer this question (with offsets)",
    )
    parser.add_argument(
        "--find",
        action="append",
        metavar="TERM",
        help="show every place this word or phrase occurs (case ignored); repeat for several",
    )
    parser.add_argument("--fresh", action="store_true", help="skip the cache")


def _fetch(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"urls": options.urls}
    if options.provider:
        args["provider"] = options.provider
    if options.max_chars is not None:
        args["text_max_characters"] = options.max_chars
    if options.offset is not None:
        args["offset"] = options.offset
    if options.content_hash:
        args["content_hash"] = options.content_hash
    if options.links:
        args["links"] = True
    if options.question is not None:
        args["question"] = options.question
    if options.find:
        args["find"] = options.find
    if options.fresh:
        args["fresh"] = True
    return cli.call_tool("web_fetch", args, rewrite=_as_command_lines)


#: The calls at the end of a page's section: reading on, around a passage, or in windows.
_NEXT_CALL = re.compile(
    r"(Next|Read around it|Read around one|Read it in windows|The rest|read the new copy from "
    r"its start): web_fetch (\{.*?\})(?=\]$|, or look for exact words|\. |$)",
    re.M,
)


def _as_command_lines(text: str) -> str:
    """The model's continuation calls (``Next: web_fetch {...}``, and the calls that read
    around a passage) as the ``pi-web fetch`` command that does so, "pass provider "x"" as
    ``--provider x``, and "with find" as ``--find``."""
    import json
    import shlex

    def command(match: re.Match) -> str:
        try:
            call = json.loads(match.group(2))
        except ValueError:
            return match.group(0)
        words = ["pi-web", "fetch", *call.get("urls", [])]
        if "offset" in call:
            words += ["--offset", str(call["offset"])]
        if "text_max_characters" in call:
            words += ["--max-chars", str(call["text_max_characters"])]
        if "provider" in call:
            words += ["--provider", str(call["provider"])]
        if "question" in call:
            words += ["--question", str(call["question"])]
        for term in call.get("find") or ():
            words += ["--find", str(term)]
        if "content_hash" in call:
            words += ["--content-hash", str(call["content_hash"])]
        return f"{match.group(1)}: {shlex.join(words)}"

    text = _NEXT_CALL.sub(command, text).replace(
        "look for exact words with find.]", "look for exact words with --find.]"
    )
    # "pass provider "local"" (a tool argument) is the --provider option on the command line.
    return _PASS_PROVIDER.sub(
        lambda m: "pass " + " or ".join(f"--provider {n}" for n in re.findall(r'"([^"]+)"', m[1])),
        text,
    )


_PASS_PROVIDER = re.compile(r'pass provider ((?:"[^"]+"(?: or )?)+)')


def _summarize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the http(s) URL to summarize")
    parser.add_argument(
        "--type",
        dest="summary_type",
        choices=["summary", "takeaway"],
        help="prose (summary, the default) or bullet points (takeaway)",
    )
    parser.add_argument(
        "--engine", choices=["cecil", "agnes"], help="Kagi's summarizer engine (Kagi only)"
    )
    parser.add_argument(
        "--lang", dest="target_language", help="the summary's language, e.g. EN or DE"
    )
    parser.add_argument("--provider", help="a configured provider to use instead of the default")
    parser.add_argument("--fresh", action="store_true", help="skip the cache")


def _summarize(options: argparse.Namespace, cli: Any) -> int:
    args: dict = {"url": options.url}
    for key in ("summary_type", "engine", "target_language", "provider", "fresh"):
        if getattr(options, key):
            args[key] = getattr(options, key)
    return cli.call_tool("summarize", args)


def _config(options: argparse.Namespace, cli: Any) -> int:
    from .config_report import config_report

    text, ok = config_report()
    cli.print(text)
    return 0 if ok else 1


def _cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["show", "clear"],
        default="show",
        help="show (the default): where the cache is and its size; clear: empty it",
    )


def _cache(options: argparse.Namespace, cli: Any) -> int:
    import sqlite3

    from ..api.errors import ConfigError
    from ..runtime import cache
    from ..runtime.registry import current_config

    try:
        settings = current_config().cache
    except ConfigError:
        settings = cache.CacheSettings()  # the cache works whatever the config's state
    from ..runtime import state as shared_state

    shared = shared_state.describe() if shared_state.configured() else None
    try:
        if options.action == "clear":
            removed = cache.clear(settings)
            cli.print(
                f"Cache cleared: {removed} entr{'y' if removed == 1 else 'ies'} removed from {cache.cache_directory()}"
            )
            if shared is not None:
                cli.print(_clear_shared(shared))
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
        f"Size: {size / 1_000_000:.1f} MB of at most {settings.max_megabytes:g} MB",
        f"Time to live: {ttl}",
    ]
    lines += [f"Warning: {notice.removeprefix('cache: ')}" for notice in cache.notices()]
    aside = cache.set_aside_files()
    if aside:
        lines.append(
            f"Moved aside (never read; others could have written them): {', '.join(aside)}; "
            "pi-web cache clear deletes them"
        )
    if shared is not None:
        problem = shared_state.check()
        lines.append(
            f"Shared state: {shared}: answers are kept there for every replica; this directory "
            "serves while it is unavailable" + (f" (it is now: {problem})" if problem else "")
        )
    lines.append("Empty it with: pi-web cache clear")
    cli.print("\n".join(lines))
    return 0


def _clear_shared(shared: str) -> str:
    """Delete the shared state's answers; the line that says how it went."""
    from ..runtime import state

    problem = state.check()
    backend = state.remote() if problem is None else None
    if backend is None:
        return f"Shared state {shared} unavailable ({problem}): its answers were not cleared"
    try:
        removed = backend.clear()
    except state.Unavailable as exc:
        return f"Shared state {shared} unavailable ({exc}): its answers were not cleared"
    return f"Shared answers cleared: {removed} removed from {shared} (every replica's cache)"


def _usage_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Calls to providers per caller (a token's name on a team server), per provider and UTC "
        "day, as counted in the shared state (PI_WEB_STATE)."
    )
    parser.add_argument(
        "--days", type=int, default=7, help="how many days back from today (1 to 40; default 7)"
    )
    parser.add_argument("--json", action="store_true", help="print the counts as one JSON object")


def _usage(options: argparse.Namespace, cli: Any) -> int:
    import datetime
    import json

    from ..runtime import state

    if not 1 <= options.days <= state.USAGE_DAYS:
        print(f"pi-web usage: --days must be 1 to {state.USAGE_DAYS}", file=sys.stderr)
        return 2
    where = state.describe()
    if state.configured() is None:
        cli.print(
            f"Usage counts are kept in the shared state, and none is set: set {state.STATE_ENV}"
            "=redis://HOST:6379/0 (as the team server has it) and run pi-web usage again. A "
            "server without one logs each call with its caller (pi-web mcp: call ... caller=NAME)."
        )
        return 1
    problem = state.check()
    if problem is not None:
        cli.print(f"Shared state {where} unavailable: {problem}")
        return 1
    today = datetime.datetime.now(datetime.timezone.utc).date()
    days = [str(today - datetime.timedelta(days=n)) for n in range(options.days)]
    counts = state.usage(days)
    if options.json:
        cli.print(json.dumps({"state": where, "days": counts}, sort_keys=True))
        return 0
    rows = [
        (day, caller, provider, n)
        for day in days
        for caller, providers in sorted(counts.get(day, {}).items())
        for provider, n in sorted(providers.items())
    ]
    span = "today" if options.days == 1 else f"the last {options.days} days"
    lines = [f"Calls to providers per caller in {where}, {span} (UTC):"]
    if not rows:
        lines.append("none")
    else:
        widths = [max(len(str(row[i])) for row in rows) for i in range(3)]
        widths = [
            max(w, len(h)) for w, h in zip(widths, ("day", "caller", "provider"), strict=True)
        ]
        head = ("day", "caller", "provider")
        lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + "  calls")
        for row in rows:
            cells = "  ".join(str(v).ljust(w) for v, w in zip(row[:3], widths, strict=True))
            lines.append(f"{cells}  {row[3]:>5}")
        callers = {row[1] for row in rows}
        lines.append(
            f"Total: {sum(row[3] for row in rows)} calls by {len(callers)} "
            f"caller{'s' if len(callers) != 1 else ''}."
        )
    cli.print("\n".join(lines))
    return 0


def provider_plugins_line() -> str:
    """``provider plugins: kagi, exa, ... (pi-web-tools 0.1.0); fancy (fancy-search 1.2)``:
    every entry point of the provider group, by distribution (nothing is imported)."""
    from importlib.metadata import entry_points

    from pi_hostspec.host import distribution_of

    from ..api.hookspecs import ENTRY_POINT_GROUP

    by_distribution: dict[str, list[str]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        by_distribution.setdefault(distribution_of(point), []).append(point.name)
    parts = [f"{', '.join(names)} ({dist})" for dist, names in by_distribution.items()]
    return f"provider plugins: {'; '.join(parts) or 'none'}"


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
    Command(
        name="usage",
        help="calls to providers per caller, provider and day, from the shared state",
        add_arguments=_usage_arguments,
        run=_usage,
    ),
)
