"""What the three tools share: URL checks, provider selection as tool errors, redaction of
results, concurrency."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs
from pi_hostspec.types import Tool, ToolContext, ToolError, ToolResult

__all__ = [
    "FRESH_PARAMETER",
    "PROVIDER_PARAMETER",
    "able_types",
    "admitted",
    "check_engine",
    "check_url",
    "fold_singular",
    "quoted",
    "redacting",
    "resolve",
    "run_all",
    "web_tool",
]

#: The ``fresh`` argument every tool takes.
FRESH_PARAMETER = {
    "type": "boolean",
    "description": "Skip the cache and ask the provider again (the new answer is cached).",
}

#: The ``provider`` argument every tool takes.
PROVIDER_PARAMETER = {
    "type": "string",
    "description": "Name of a configured provider to use instead of the default.",
    "minLength": 1,
    "maxLength": 200,
}


def web_tool(
    name: str,
    label: str,
    description: str,
    parameters: dict,
    execute: Callable[[dict, ToolContext], ToolResult],
    prepare_arguments: Callable[[Any], Any] | None = None,
) -> Tool:
    """A web tool: it reads from the open web and changes nothing (MCP's read-only and
    open-world hints), its caller is held to the team's limits (:func:`admitted`), and no
    configured key leaves it (:func:`redacting`)."""
    return Tool(
        name=name,
        label=label,
        description=description,
        parameters=parameters,
        execute=redacting(admitted(execute)),
        prepare_arguments=prepare_arguments,
        read_only_hint=True,
        open_world_hint=True,
    )


T = TypeVar("T")
R = TypeVar("R")


def quoted(value: str, limit: int = 120) -> str:
    """*value* quoted for an error message, cut at *limit* characters (a model may send
    megabytes); known keys are redacted first, so a key cut in two never shows in part."""
    from ..api.redaction import redact_secrets

    value = redact_secrets(value[: limit + 4096])
    return repr(value[:limit]) + ("…" if len(value) > limit else "")


def check_url(url: str, field: str = "url") -> str:
    """The URL stripped, or a :class:`ToolError` saying why it is not an absolute http(s) URL."""
    from urllib.parse import urlsplit

    candidate = url.strip()
    try:
        parts = urlsplit(candidate)
        host = parts.hostname
    except ValueError:
        parts, host = None, None
    if parts is not None and parts.scheme and parts.scheme.lower() not in ("http", "https"):
        raise ToolError(  # file:///etc/passwd has no host, but its scheme is what is wrong
            f"{field}: {quoted(url)} uses {quoted(parts.scheme, 20)[1:-1]}:, only http and https are supported"
        )
    if parts is None or not parts.scheme or not host:
        raise ToolError(
            f"{field}: {quoted(url)} is not an absolute URL (expected http:// or https://...)"
        )
    if any(ch.isspace() for ch in candidate):
        raise ToolError(f"{field}: {quoted(url)} contains whitespace")
    return candidate


def fold_singular(args: Any, single: str, plural: str) -> Any:
    """Fold a lone *single* string (``query``, ``url``) into the *plural* list argument."""
    if not isinstance(args, dict) or single not in args:
        return args
    args = dict(args)
    value = args.pop(single)
    values = args.get(plural)
    if values is None:
        args[plural] = [value] if isinstance(value, str) else value
    elif isinstance(values, list) and isinstance(value, str) and value not in values:
        args[plural] = [value, *values]
    return args


def admitted(
    execute: Callable[[dict, ToolContext], ToolResult],
) -> Callable[[dict, ToolContext], ToolResult]:
    """Wrap a tool's ``execute`` so a call whose host names its caller (a team server's token
    name, ``ctx.caller``) counts against that caller's limits first, and is refused with a
    :class:`ToolError` saying when to try again once they are reached."""

    @functools.wraps(execute)
    def run(args: dict, ctx: ToolContext) -> ToolResult:
        caller = getattr(ctx, "caller", None)
        if caller is not None:
            from ..api.errors import ConfigError
            from ..runtime import team
            from ..runtime.registry import current_config

            try:
                limits = current_config().limits
            except ConfigError:
                limits = None  # the tool says what is wrong with the file
            if limits is not None:
                try:
                    team.admit(limits, caller)
                except team.LimitReached as exc:
                    raise ToolError(str(exc), details={"caller": caller, "limited": True}) from None
        return execute(args, ctx)

    return run


def redacting(
    execute: Callable[[dict, ToolContext], ToolResult],
) -> Callable[[dict, ToolContext], ToolResult]:
    """Wrap a tool's ``execute`` so no configured API key leaves it: not in the result's text or
    details, a :class:`ToolError`'s message or details, nor a partial result sent to the host.

    Providers redact their own key at the source; this catches every other way in, such as a
    key in a URL's query string given to another provider.
    """

    @functools.wraps(execute)
    def run(args: dict, ctx: ToolContext) -> ToolResult:
        from ..api.redaction import redact_secrets, redact_value

        def clean(result: ToolResult) -> ToolResult:
            return ToolResult(
                content=[
                    attrs.evolve(part, text=redact_secrets(part.text)) for part in result.content
                ],
                details=redact_value(result.details),
                is_error=result.is_error,
            )

        listener = getattr(ctx, "on_update", None)
        if listener is not None:
            ctx = attrs.evolve(ctx, on_update=lambda partial: listener(clean(partial)))
        try:
            result = execute(args, ctx)
        except ToolError as exc:
            exc.message = redact_secrets(exc.message)
            exc.args = (exc.message,)
            exc.details = redact_value(exc.details)
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a bug (ours or a plugin's): its words too;
            unexpected = _scrubbed(exc)  # SystemExit too: the host shows every one's words
        else:
            return clean(result) if isinstance(result, ToolResult) else result
        raise unexpected  # outside the handler: no chain back to the words with the key

    return run


def _scrubbed(exc: BaseException) -> BaseException:
    """An exception that says what *exc* says, with every known key redacted: the same object
    when its words hold none, else a bare exception of the same class name (the host shows
    ``<tool> failed unexpectedly: <class name>: <first line>``) that carries no chain."""
    from ..api.redaction import redact_secrets

    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that raises says nothing
        text = ""
    redacted = redact_secrets(text)
    if redacted == text and not _chain_holds_a_key(exc):
        return exc
    same_name = type(type(exc).__name__, (Exception,), {"__module__": type(exc).__module__})
    return same_name(redacted)


def _chain_holds_a_key(exc: BaseException) -> bool:
    """Whether an exception that *exc* was raised from (or during) says a known key."""
    from ..api.redaction import known_secrets

    secrets = known_secrets()
    seen = set()
    current = exc.__cause__ or exc.__context__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        try:
            text = f"{current} {current.args!r}"
        except Exception:  # noqa: BLE001
            text = ""
        if any(secret in text for secret in secrets):
            return True
        current = current.__cause__ or current.__context__
    return False


def resolve(capability: str, requested: str | None) -> Any:
    """The :class:`~pi_web_tools.runtime.registry.Selection` for *capability*; config problems become
    :class:`ToolError` s."""
    from ..api.errors import ConfigError
    from ..runtime.registry import resolve_provider, with_plugin_problems

    try:
        return resolve_provider(capability, requested)
    except ConfigError as exc:
        raise ToolError(with_plugin_problems(str(exc))) from None


def check_engine(chosen: Any, engine: str | None) -> None:
    """A :class:`ToolError` when the chosen provider's type does not accept the summarizer
    *engine* (``agnes`` is Kagi's), naming the configured providers that do (else the types)."""
    engines = chosen.type.summary_engines
    if engine is None or (engines and engine in engines):
        return
    from ..runtime.registry import provider_types

    types = provider_types()
    accepting = [
        p.name
        for p in chosen.config.providers
        if p.type in types and engine in (types[p.type].summary_engines or ())
    ]
    where = (
        f"configured providers that accept it: {', '.join(accepting)}"
        if accepting
        else f"provider types that accept it: "
        f"{able_types(lambda kind: engine in (kind.summary_engines or ()))}"
    )
    takes = f"accepts {', '.join(engines)}" if engines else "takes no engine"
    raise ToolError(
        f"engine: {quoted(engine, 40)} is not an engine of provider {chosen.entry.name!r} "
        f"({chosen.entry.type}), which {takes}. Leave engine out, or pass provider= with one "
        f"that accepts it ({where})."
    )


def able_types(test: Callable[[Any], bool]) -> str:
    """The names of the provider types that pass *test*, for "use one of these" advice."""
    from ..runtime.registry import provider_types

    return ", ".join(name for name, kind in provider_types().items() if test(kind)) or "none"


def run_all(
    items: Sequence[T],
    work: Callable[[T], R],
    *,
    on_done: Callable[[int, int], None] | None = None,
) -> list[R | BaseException]:
    """Run *work* on every item at once; results or exceptions in item order.

    All items start together (the tools' schemas bound them: 10 queries, 20 URLs), so one
    provider timeout bounds the whole call. *on_done* hears (finished, total) as items finish.
    """
    results: list[Any] = [None] * len(items)
    if len(items) == 1:
        try:
            results[0] = work(items[0])
        except Exception as exc:  # noqa: BLE001 - reported per item by the caller
            results[0] = exc
        return results
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=len(items), thread_name_prefix="pi-web-tool") as pool:
        futures = {pool.submit(work, item): index for index, item in enumerate(items)}
        for done, future in enumerate(as_completed(futures), 1):
            try:
                results[futures[future]] = future.result()
            except Exception as exc:  # noqa: BLE001
                results[futures[future]] = exc
            if on_done is not None:
                on_done(done, len(items))
    return results
