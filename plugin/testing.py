"""A provider author's kit: register provider types in-process, reset state between tests, and
check a provider type against the provider contract.

::

    from pi_web_tools import testing
    from acme_search import ACME

    def test_acme_follows_the_contract():
        testing.check_provider_type(ACME, options={"baseUrl": "http://127.0.0.1:9"})

    def test_acme_through_the_tool(tmp_path, monkeypatch):
        with testing.provider_types(ACME):
            ...  # call web_search through pi_hostspec.Host as a host would
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Iterator
from typing import Any

import attrs
from pi_hostspec.types import ToolContext

from .api.options import option_key, options_fields, structure_options
from .api.types import (
    FETCH,
    SEARCH,
    SUMMARIZE,
    FetchRequest,
    ProviderConfig,
    ProviderType,
    SearchRequest,
    SummarizeRequest,
    check_response,
)
from .runtime import cache, config, registry, state

__all__ = ["call", "check_provider_type", "provider_types", "read_url", "reset"]

_SAMPLES = {
    SEARCH: SearchRequest(query="pi web tools contract check", limit=3),
    FETCH: FetchRequest(urls=("https://example.com/",)),
    SUMMARIZE: SummarizeRequest(url="https://example.com/"),
}


def reset() -> None:
    """Forget the loaded config, open providers, loaded provider types and the open answer cache
    (call it before and after each test that changes the config file, the environment, the
    types or ``XDG_CACHE_HOME``)."""
    config.clear_cache()
    registry.set_provider_types(None)
    cache.close()
    state.reset()


@contextlib.contextmanager
def provider_types(*extra: Any, builtins: bool = True) -> Iterator[dict[str, ProviderType]]:
    """Register provider types in-process while the block runs, then restore the usual ones.

    Each argument is a :class:`ProviderType`, a :class:`~pi_web_tools.Reader` or a plugin (a
    module or object with a ``register_provider_types`` or ``register_readers`` hook
    implementation). With *builtins* (default) the installed types and readers (entry points)
    are kept beside them; one given here replaces an installed one of the same name (so a
    plugin's own tests can pass its type whether it is installed or not).
    """
    from .api.readers import Reader

    plugins = [item for item in extra if not isinstance(item, (ProviderType, Reader))]
    pm = registry.get_provider_manager(load_entrypoints=builtins, plugins=plugins)
    types = registry.collect_provider_types(pm, raise_for=plugins)
    readers = registry.collect_readers(pm, raise_for=plugins)
    for item in extra:
        if isinstance(item, ProviderType):
            types[item.name] = item
        elif isinstance(item, Reader):
            readers[item.name] = item
    registry.set_provider_types(types, manager=pm, reader_list=readers)
    config.clear_cache()
    try:
        yield types
    finally:
        reset()


def _annotation_problem(attribute: Any) -> str | None:
    kind = attribute.type
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is typing.Literal:
        return None
    if args and typing.get_origin(kind) not in (list, tuple, typing.Literal):
        kind = args[0] if len(args) == 1 else kind
    if typing.get_origin(kind) in (list, tuple):
        inner = [a for a in typing.get_args(kind) if a is not Ellipsis]
        return None if inner == [str] else "lists of strings are the only supported lists"
    if typing.get_origin(kind) is typing.Literal or kind in (str, int, float, bool):
        return None
    return f"unsupported annotation {attribute.type!r} (use str, int, float, bool, list[str] or Literal)"


def check_provider_type(
    provider_type: ProviderType,
    *,
    api_key: str = "test-key-0123456789abcdef",
    options: dict | None = None,
) -> Any:
    """Check *provider_type* against the provider contract and return the provider it builds.

    Checks: every option has a default and a supported annotation and *options* (the JSON an
    entry's ``options`` would hold) structure cleanly; the factory builds a provider from a
    :class:`ProviderConfig`; the provider has a ``name`` and, for every declared capability, a
    method taking ``(request, ctx)``. Raises ``AssertionError`` listing every problem of the
    type, ``ValueError`` when the *options* given are themselves invalid. The provider is
    named ``<type>-check``. Nothing is sent over the network: use :func:`call` against your
    fake API for that.
    """

    problems: list[str] = []
    if not isinstance(provider_type, ProviderType):
        raise AssertionError(f"expected a ProviderType, got {type(provider_type).__name__}")
    attrs.resolve_types(provider_type.options_class)
    for attribute in options_fields(provider_type.options_class):
        if attribute.default is attrs.NOTHING:
            problems.append(f"option {option_key(attribute)!r} has no default")
        problem = _annotation_problem(attribute)
        if problem:
            problems.append(f"option {option_key(attribute)!r}: {problem}")
    built, errors, warnings = structure_options(
        "options", options or {}, provider_type.options_class
    )
    if errors or warnings:  # the caller's sample options are wrong, not the type
        raise ValueError(
            "the options given to check_provider_type are invalid: "
            + "; ".join([*errors, *map(str, warnings)])
        )
    provider = None
    if built is not None:
        entry = ProviderConfig(
            name=f"{provider_type.name}-check",
            type=provider_type.name,
            api_key=api_key if provider_type.needs_api_key else None,
            options=built,
        )
        try:
            provider = provider_type.factory(entry)
        except Exception as exc:  # noqa: BLE001 - reported as a contract problem
            problems.append(f"factory raised {type(exc).__name__}: {exc}")
    if provider is not None:
        if not isinstance(getattr(provider, "name", None), str):
            problems.append("the provider has no 'name' string attribute")
        for capability in sorted(provider_type.capabilities):
            method = getattr(provider, capability, None)
            if not callable(method):
                problems.append(f"declares {capability!r} but has no {capability}() method")
                continue
            try:
                inspect.signature(method).bind(_SAMPLES[capability], None)
            except TypeError:
                problems.append(f"{capability}() must accept (request, ctx)")
        close = getattr(provider, "close", None)
        if close is not None and not callable(close):
            problems.append("'close' is not callable")
    if problems:
        raise AssertionError(
            f"provider type {provider_type.name!r} breaks the contract:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
    return provider


def call(provider: Any, capability: str, request: Any = None, ctx: Any = None) -> Any:
    """Run *capability* on *provider* (with a sample request when none is given) and check
    that the response has the right type, as the tools do; return the response."""
    request = request if request is not None else _SAMPLES[capability]
    response = getattr(provider, capability)(request, ctx or ToolContext())
    try:
        return check_response(getattr(provider, "name", "?"), capability, response)
    except TypeError as exc:
        raise AssertionError(str(exc)) from None


def read_url(
    reader: Any,
    url: str,
    *,
    seconds: float = 10.0,
    network_guard: bool = False,
    base_url: str | None = None,
) -> Any:
    """*url* read by *reader* (a :class:`~pi_web_tools.Reader`) as ``web_fetch`` would: through
    the readers' web, within *seconds*. Returns its :class:`~pi_web_tools.Reading`, or ``None``
    when the reader leaves the URL to the usual fetch; raises its
    :class:`~pi_web_tools.ReaderError`. The network guard is off unless *network_guard* (it
    resolves host names before each request, which a test's fake transport such as
    ``responses`` cannot answer); *base_url* sends every request to ``{base_url}/{host}{path}``
    (a loopback fake), as the config's ``readers`` option does.
    """
    import time

    from .api.readers import Reader, Reading
    from .runtime.reader_web import SiteWeb

    if not isinstance(reader, Reader):
        raise AssertionError(f"expected a Reader, got {type(reader).__name__}")
    web = SiteWeb(
        reader,
        deadline=time.monotonic() + seconds,
        allow_private=not network_guard,
        base_url=base_url,
    )
    found = reader.read(url, web)
    if found is not None and not isinstance(found, Reading):
        raise AssertionError(
            f"reader {reader.name!r} returned {type(found).__name__}, expected a Reading or None"
        )
    return found
