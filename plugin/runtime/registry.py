"""Provider types (registered through ``register_provider_types``) and provider selection.

Nothing here knows a provider by name: what a type offers, whether a key in the environment
configures it, and which keyless type serves a capability when nothing configured can, are all
fields its :class:`~pi_web_tools.api.types.ProviderType` declares.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Collection, Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, overload

import pluggy
from attrs import evolve, field, frozen
from pi_hostspec.host import UNKNOWN_DISTRIBUTION, SkippedPlugin, distribution_of
from pi_hostspec.loading import LoadTimeout, load_within
from pi_hostspec.types import ToolContext, ToolError

from ..api import hookspecs, redaction
from ..api.errors import ConfigError, ErrorKind, ProviderError, WebToolsError
from ..api.options import Kind
from ..api.readers import Reader
from ..api.types import (
    FetchRequest,
    FetchResponse,
    Provider,
    ProviderConfig,
    ProviderType,
    SearchRequest,
    SearchResponse,
    SummarizeRequest,
    SummaryResponse,
    check_response,
)
from . import team
from .config import config_path, load_config, other_files_hint
from .config_shapes import Config, InvalidConfig, env_provider, example_config

__all__ = [
    "Selection",
    "close_providers",
    "collect_provider_types",
    "collect_readers",
    "current_config",
    "get_provider",
    "get_provider_manager",
    "plugin_problems",
    "with_plugin_problems",
    "load_secrets",
    "provider_types",
    "readers",
    "resolve_provider",
    "search_fallbacks",
    "search_fusion",
    "set_provider_types",
]

#: A request to a provider, and its answer.
Request = SearchRequest | FetchRequest | SummarizeRequest
Response = SearchResponse | FetchResponse | SummaryResponse

_TOOL_WORDS = {"search": "web search", "fetch": "web fetch", "summarize": "summarize"}


def _problem(entry_point: str, distribution: str, cause: str) -> SkippedPlugin:
    """A provider plugin that registers nothing: its entry point, distribution, the cause in
    one line, and (``str()``) what to do."""
    return SkippedPlugin(
        entry_point=entry_point,
        distribution=distribution,
        cause=cause,
        kind="provider plugin",
        group=hookspecs.ENTRY_POINT_GROUP,
    )


_problems: list[SkippedPlugin] = []

#: The module prefix of this distribution's own provider types.
_BUILT_IN = __name__.split(".")[0] + ".providers."


def plugin_problems() -> tuple[SkippedPlugin, ...]:
    """The provider plugins skipped when the types were loaded (never raises)."""
    provider_types_safely()
    return tuple(_problems)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _misplaced_hook(plugin: Any) -> str | None:
    """Why *plugin* registers nothing although it defines ``register_provider_types`` (or
    ``register_readers``): the function is not marked with ``pi_web_tools.hookimpl`` (another
    project's marker, such as ``pi_hostspec.hookimpl``, or none)."""
    for hook in ("register_provider_types", "register_readers"):
        function = getattr(plugin, hook, None)
        if not callable(function) or hasattr(function, f"{hookspecs.PROJECT}_impl"):
            continue
        others = [name[: -len("_impl")] for name in dir(function) if name.endswith("_impl")]
        marked = f"marked with {others[0]}'s hookimpl" if others else "not marked"
        return f"its {hook} is {marked}, not with pi_web_tools.hookimpl, so it registers nothing"
    return None


def get_provider_manager(
    *, load_entrypoints: bool = True, plugins: Iterable[object] = ()
) -> pluggy.PluginManager:
    """The plugin manager for provider types: the ``pi_web_tools.providers`` entry points
    (built-in types included) and any extra *plugins*. An entry point that cannot be imported,
    or whose hook is not marked with ``pi_web_tools.hookimpl``, is skipped and remembered
    (:func:`plugin_problems`): one broken plugin never takes the others down."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    problems = []
    if load_entrypoints:
        points = list(entry_points(group=hookspecs.ENTRY_POINT_GROUP))
        built_in = {point.name for point in points if point.value.startswith(_BUILT_IN)}
        # This distribution's own entry points first: a third party's of the same name (a
        # `direct` of its own) never displaces a built-in type, and is named instead.
        for point in sorted(points, key=lambda p: not p.value.startswith(_BUILT_IN)):
            if point.name in built_in and not point.value.startswith(_BUILT_IN):
                problems.append(
                    _problem(
                        point.name,
                        distribution_of(point),
                        f"its entry point is named like the built-in provider type {point.name!r}",
                    )
                )
                continue
            if pm.has_plugin(point.name) or pm.is_blocked(point.name):
                continue
            try:
                plugin = load_within(point.load)  # the host plugins' bound and helper
            except LoadTimeout as exc:  # an import that hangs must not hang every call
                problems.append(_problem(point.name, distribution_of(point), str(exc)))
                continue
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the tools
                problems.append(_problem(point.name, distribution_of(point), _one_line(exc)))
                continue
            misplaced = _misplaced_hook(plugin)
            if misplaced is not None:
                problems.append(_problem(point.name, distribution_of(point), misplaced))
                continue
            pm.register(plugin, name=point.name)
    for plugin in plugins:
        if not pm.is_registered(plugin):
            pm.register(plugin)
    pm.check_pending()
    _problems[:] = problems
    return pm


def _plugin_distribution(plugin_name: str) -> str:
    """The distribution that declares the provider entry point *plugin_name*."""
    for point in entry_points(group=hookspecs.ENTRY_POINT_GROUP):
        if point.name == plugin_name:
            return distribution_of(point)
    return UNKNOWN_DISTRIBUTION


def _built_in(impl: Any) -> bool:
    """True for this distribution's own provider modules (collected first)."""
    return getattr(impl.plugin, "__name__", "").startswith(_BUILT_IN)


class _Refused(ValueError):
    """A registration refused (a name taken, not a ProviderType): the cause as it is shown."""


def collect_provider_types(
    pm: pluggy.PluginManager, *, raise_for: Iterable[object] = ()
) -> dict[str, ProviderType]:
    """Every registered provider type by name, in precedence order.

    A plugin whose hook raises, or registers something that is not a :class:`ProviderType`, is
    skipped whole and remembered (:func:`plugin_problems`), as is a type whose name another
    plugin registered first (the built-in types are collected first, so they are never
    displaced): one broken plugin never takes the others down. The plugins in *raise_for*
    (those a test passes in-process) raise instead, so their author sees the error."""
    found = _collect(pm, "register_provider_types", ProviderType, "provider type", raise_for)
    ordered = sorted(found.values(), key=lambda t: (t.precedence, t.name))
    redaction.watch_env(t.api_key_env for t in ordered)
    return {t.name: t for t in ordered}


def collect_readers(
    pm: pluggy.PluginManager, *, raise_for: Iterable[object] = ()
) -> dict[str, Reader]:
    """Every registered site reader by name, built-in ones first (a URL two readers claim goes
    to the first). A broken plugin is skipped and remembered, as for provider types."""
    found: dict[str, Reader] = _collect(pm, "register_readers", Reader, "reader", raise_for)
    # A reader's token variables are keys like any other: redacted wherever they appear.
    redaction.watch_env(
        name for reader in found.values() if reader.token for name in reader.token.env
    )
    return found


def _collect(
    pm: pluggy.PluginManager, hook: str, kind: type[Any], what: str, raise_for: Iterable[object]
) -> dict[str, Any]:
    """What the plugins register through *hook* (instances of *kind*) by name, built-in
    plugins first; a plugin that fails is skipped whole and remembered."""
    strict = list(raise_for)
    found: dict[str, Any] = {}
    impls = sorted(getattr(pm.hook, hook).get_hookimpls(), key=lambda i: not _built_in(i))
    for impl in impls:
        plugin_name = impl.plugin_name
        mine: dict[str, Any] = {}

        def register(item: Any, _plugin: str = plugin_name, _mine: dict = mine) -> None:
            if not isinstance(item, kind):
                raise _Refused(f"{_plugin} registered {type(item).__name__}, not a {kind.__name__}")
            taken = found.get(item.name) or _mine.get(item.name)
            if taken is not None:
                raise _Refused(
                    f"{what} {item.name!r} is registered by {taken.plugin_name} and {_plugin}"
                )
            _mine[item.name] = evolve(item, plugin_name=_plugin)

        try:
            impl.function(register=register)
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the tools
            if any(impl.plugin is plugin for plugin in strict):
                raise
            cause = (
                str(exc) if isinstance(exc, _Refused) else f"its {hook} failed: {_one_line(exc)}"
            )
            _problems.append(_problem(plugin_name, _plugin_distribution(plugin_name), cause))
            continue
        found.update(mine)
    return found


_types_lock = threading.Lock()
_types: dict[str, ProviderType] | None = None
_readers: dict[str, Reader] | None = None
_manager: pluggy.PluginManager | None = None


def provider_types() -> dict[str, ProviderType]:
    """The provider types, loaded once on first use (never at plugin import)."""
    global _types, _manager
    with _types_lock:
        if _types is None:
            _manager = get_provider_manager()
            _types = collect_provider_types(_manager)
        return _types


def readers() -> dict[str, Reader]:
    """The site readers, loaded once on first use (never at plugin import), from the plugins
    that gave the provider types."""
    global _readers, _manager
    provider_types()
    with _types_lock:
        if _readers is None:
            if _manager is None:
                _manager = get_provider_manager()
            _readers = collect_readers(_manager)
        return _readers


def provider_types_safely() -> dict[str, ProviderType]:
    """:func:`provider_types`, or nothing when they cannot be loaded (for reports)."""
    try:
        return provider_types()
    except Exception:  # noqa: BLE001
        return {}


def with_plugin_problems(message: str) -> str:
    """*message* followed by a line for each skipped provider plugin, so an error that may come
    from one (an unknown type, nothing able to serve) names it."""
    problems = plugin_problems()
    return message + "".join(f"\nNote: {problem}" for problem in problems)


def set_provider_types(
    types: dict[str, ProviderType] | None,
    *,
    manager: pluggy.PluginManager | None = None,
    reader_list: dict[str, Reader] | None = None,
) -> None:
    """Replace the loaded provider types (tests, embedding hosts); ``None`` reloads lazily.
    The site readers come from *manager*'s plugins (or are *reader_list*). Open providers are
    closed."""
    global _types, _readers, _manager
    with _types_lock:
        _types = types
        _manager = manager
        _readers = reader_list
    close_providers()


_instances_lock = threading.Lock()
_instances: dict[str, tuple[tuple, Provider]] = {}


def _close(provider: Provider) -> None:
    close = getattr(provider, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - closing an idle session must not fail a call
            pass


def close_providers() -> None:
    """Close and forget every provider (their sessions' pooled connections go with them)."""
    with _instances_lock:
        providers = [provider for _, provider in _instances.values()]
        _instances.clear()
    for provider in providers:
        _close(provider)


def get_provider(config: ProviderConfig, provider_type: ProviderType) -> Provider:
    """The provider object for *config*, reused while its entry is unchanged (warm sessions).

    One provider is kept per name: when the entry changes (a config edit), the old provider is
    closed and replaced, so a long-running host does not collect idle sessions. The factory
    runs outside the registry's lock (a provider whose construction hangs holds up no other),
    and a :class:`Selection` calls this within its call's deadline.
    """
    key = (config.type, config.api_key, config.options, id(provider_type))
    with _instances_lock:
        known = _instances.get(config.name)
        if known is not None and known[0] == key:
            return known[1]
    provider = provider_type.factory(config)
    surplus = None
    with _instances_lock:
        known = _instances.get(config.name)
        if known is not None and known[0] == key:  # another call made it meanwhile
            surplus, provider = provider, known[1]
        else:
            _instances[config.name] = (key, provider)
            surplus = known[1] if known is not None else None
    if surplus is not None:
        _close(surplus)
    return provider


def current_config(path: Path | None = None) -> Config:
    """The config as the tools see it now (read with the registered provider types)."""
    return load_config(provider_types(), path, plugin_problems())


def load_secrets() -> None:
    """Read the config (if not read yet) so its keys are known to redaction; a broken config
    or plugin just adds nothing (redaction must never fail its caller)."""
    try:
        load_config(provider_types(), skipped=plugin_problems())
        readers()
    except Exception:  # noqa: BLE001
        pass


@frozen(kw_only=True)
class Selection:
    """The provider chosen for a call: its object, its config entry, its type, the config."""

    entry: ProviderConfig
    type: ProviderType
    config: Config
    #: The provider object when given; else it is made (:func:`get_provider`) on first use,
    #: within the first call's deadline (a factory that hangs is given up on like a call).
    _provider: Provider | None = field(default=None, eq=False)
    _made: list = field(factory=list, init=False, eq=False, repr=False)

    @property
    def provider(self) -> Provider:
        """The provider object (made now if it was not yet)."""
        if self._provider is not None:
            return self._provider
        if not self._made:
            self._made.append(get_provider(self.entry, self.type))
        return self._made[0]

    @overload
    def call(
        self, capability: Literal["search"], request: SearchRequest, ctx: ToolContext | None
    ) -> SearchResponse: ...
    @overload
    def call(
        self, capability: Literal["fetch"], request: FetchRequest, ctx: ToolContext | None
    ) -> FetchResponse: ...
    @overload
    def call(
        self, capability: Literal["summarize"], request: SummarizeRequest, ctx: ToolContext | None
    ) -> SummaryResponse: ...
    @overload
    def call(self, capability: str, request: Request, ctx: ToolContext | None) -> Response: ...

    def call(self, capability: str, request: Request, ctx: ToolContext | None) -> Response:
        """Run *capability* on the provider, check what it returns, and remove every known key
        from the answer and from a failure's message: the one place where provider text enters
        the product, before anything windows, budgets, caches, titles or logs it. A provider
        that returns the wrong thing is a :class:`ProviderContractError` naming it. The team's
        provider limits, cooldowns and usage counts are kept here too (:mod:`.team`)."""
        # A provider resting after a 429, or over the team's limits, is not called (every
        # replica sharing the state sees the same); a call made is counted as its caller's.
        team.before_call(self, getattr(ctx, "caller", None))

        def work() -> Any:  # the provider is made here too: its factory shares the deadline
            method = getattr(self.provider, capability, None)
            if not callable(method):
                raise ProviderError(
                    f"provider {self.entry.name!r} (type {self.entry.type}) declares "
                    f"{capability} but has no {capability}() method",
                    provider=self.entry.name,
                )
            return method(request, ctx)

        try:
            answered = self._within_deadline(capability, work, ctx)
            answer = check_response(self.entry.name, capability, answered)
        except ProviderError as exc:  # a failure, or a contract breach (ProviderContractError)
            exc.message = redaction.redact_secrets(exc.message)
            exc.args = (exc.message,)
            team.after_failure(self, exc)
            raise
        redacted: Response = redaction.redact_value(answer)
        return redacted

    def _within_deadline(
        self, capability: str, work: Callable[[], Any], ctx: ToolContext | None
    ) -> Any:
        """``work()``, answered at the call's deadline whatever the provider does: its
        ``timeoutSeconds`` (else the longest built-in default for *capability*) plus a grace
        for the provider's own timeout message, or a moment after the call is cancelled. A
        provider that ignores both is left running in its thread (a stray call); at most
        :data:`MAX_STRAY_CALLS` of one provider run at once, then it is not called again
        until one ends."""
        name = self.entry.name
        configured = getattr(self.entry.options, "timeout_seconds", None)
        seconds = float(configured or _DEFAULT_SECONDS.get(capability, 60.0))
        with _strays_lock:
            if _strays.get(name, 0) >= MAX_STRAY_CALLS:
                raise ProviderError(
                    f"{name} is still running {MAX_STRAY_CALLS} calls past their deadline; it "
                    "is not called again until one of them ends",
                    provider=name,
                )
        box: dict[str, Any] = {}
        lock = threading.Lock()
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box["error"] = exc
            with lock:
                done.set()
                if box.get("stray"):
                    with _strays_lock:
                        _strays[name] -= 1

        # The provider's thread sees this thread's context variables (search failover's
        # "another provider is ready", which the retry loop reads).
        context = contextvars.copy_context()
        threading.Thread(
            target=context.run, args=(run,), name=f"pi-web call {name}", daemon=True
        ).start()
        give_up = time.monotonic() + seconds + min(max(2.0, 0.1 * seconds), 30.0)
        cancel = ctx.cancel if ctx is not None else None
        while not done.wait(0.05):
            if cancel is not None and cancel.is_set():
                give_up = min(give_up, time.monotonic() + CANCEL_GRACE_SECONDS)
                cancel = None
            if time.monotonic() > give_up:
                with lock:
                    if not done.is_set():
                        box["stray"] = True
                        with _strays_lock:
                            _strays[name] = _strays.get(name, 0) + 1
                        if ctx is not None and ctx.cancelled:
                            raise ProviderError(f"{name}: cancelled", provider=name)
                        raise ProviderError(
                            f"{name} did not answer within {seconds:g} s (timeoutSeconds)",
                            provider=name,
                            kind=ErrorKind.TIMEOUT,
                        )
        if "error" in box:  # raised outside any handler: no chain back to its words
            error = box["error"]
            raise _as_provider_error(name, error) if isinstance(error, Exception) else error
        return box["value"]


def _as_provider_error(name: str, exc: Exception) -> Exception:
    """*exc* as a provider's failure: a bug of the provider's (``RuntimeError: boom``, raised
    by a third-party provider or our own) becomes a :class:`ProviderError` naming the provider,
    so every tool says it the same way and the rest of the call goes on (other URLs, the fetch
    ladder's next rung); the plugin's own errors (a config problem, a provider's failure) are
    *exc* itself."""
    if isinstance(exc, (WebToolsError, ToolError)):
        return exc
    from ..api.types import one_line

    try:
        words = one_line(str(exc), 300)
    except Exception:  # noqa: BLE001 - a __str__ that raises says nothing
        words = ""
    said = f"{name} failed unexpectedly: {type(exc).__name__}"
    return ProviderError(f"{said}: {words}" if words else said, provider=name)


#: How many calls to one provider may still run past their deadline (a provider that ignores
#: cancellation) before it is not called again until one of them ends.
MAX_STRAY_CALLS = 4
#: How long a cancelled call waits for the provider's own answer before it is given up on.
CANCEL_GRACE_SECONDS = 1.0
#: The deadline of a call to a provider with no ``timeoutSeconds``: the longest default of the
#: built-in providers for each capability (Kagi Extract and Tavily fetch 60 s, summaries 120 s).
_DEFAULT_SECONDS = {"search": 30.0, "fetch": 60.0, "summarize": 120.0}
_strays_lock = threading.Lock()
_strays: dict[str, int] = {}


def _ignored(exc: ConfigError) -> Config:
    """An empty config standing for an invalid file that a keyless fallback works without;
    ``ignored`` is the error in one line (without the example file)."""
    text = exc.problem if isinstance(exc, InvalidConfig) else str(exc)
    path = config_path()
    return Config(path=path, source="ignored", ignored=" ".join(text.split()))


def _implicit(provider_type: ProviderType, config: Config | None = None) -> ProviderConfig:
    """The built-in fallback of a capability, with the shared file's ``providerOptions`` for
    its type when *config* has them."""
    options = dict(config.provider_options).get(provider_type.name) if config else None
    return ProviderConfig(
        name=provider_type.name,
        type=provider_type.name,
        options=options if options is not None else provider_type.options_class(),
        origin="built-in default",
    )


def _missing_key(capability: str, config: Config, types: dict[str, ProviderType]) -> ConfigError:
    """What to configure when no provider can serve *capability*. With no file: the sentence
    of the first type whose key variable would configure one (the seeds'), else a generic one.
    With a file: what that file lacks, and how to add it in the file's own shape."""
    if config.source == "file":
        return _file_lacks(capability, config, types)
    for provider_type in types.values():
        if provider_type.env_key_implies_provider and provider_type.can(capability):
            error = _env_key_error(provider_type, capability, config, types)
            return ConfigError(str(error) + other_files_hint())
    return ConfigError(
        f"No configured provider can {capability}. Add one to {config.path}."
        + _setup_hints(capability, types)
        + other_files_hint()
    )


def _file_lacks(capability: str, config: Config, types: dict[str, ProviderType]) -> ConfigError:
    """The missing-provider message for an existing file: what it configures, which types could
    serve *capability*, an example in the file's shape, and the key variables that would do."""
    has = ", ".join(
        f"{p.name} ({', '.join(sorted(types[p.type].capabilities))})" for p in config.providers
    )
    keyed = [t for t in types.values() if t.can(capability) and t.needs_api_key]
    able = (
        ", ".join(
            t.name + ("" if t.needs_api_key else " (keyless)")
            for t in types.values()
            if t.can(capability)
        )
        or "none"
    )
    lines = [
        f"{config.path} has no provider that can {capability} "
        f"(it configures: {has or 'no provider pi-web-tools can use'}). "
        f"Provider types that can: {able}."
    ]
    if config.shape == "shared":
        flat = [t.shared_file_key for t in keyed if t.shared_file_key]
        if config.has_note(Kind.FOREIGN_PROVIDERS):
            lines.append(
                '"providers" there is another pi extension\'s object, which pi-web-tools '
                "leaves alone."
            )
        if flat:
            lines.append(
                "Add a top-level key for one of them, e.g. "
                + " or ".join(f'"{key}": "..."' for key in flat)
                + ', or a "providers" list.'
            )
    elif keyed:
        lines.append(
            f'Add one to its "providers" list, for example:\n{example_config(keyed[0].name)}'
        )
    variables = [t.api_key_env for t in keyed if t.api_key_env and t.env_key_implies_provider]
    if variables:
        lines.append(f"Or set {' or '.join(variables)}.")
    return ConfigError("\n".join(lines) + _setup_hints(capability, types))


def _setup_hints(capability: str, types: dict[str, ProviderType]) -> str:
    """The setup hints of opt-in types that could serve *capability*, one per line."""
    hints = [t.setup_hint for t in types.values() if t.setup_hint and t.can(capability)]
    return "".join(f"\n{hint}" for hint in hints)


def _env_key_error(
    provider_type: ProviderType, capability: str, config: Config, types: dict[str, ProviderType]
) -> ConfigError:
    return ConfigError(
        f"{provider_type.api_key_env} environment variable is not set. Set it to your "
        f"{provider_type.display_name} API key to use {_TOOL_WORDS[capability]}. Or configure "
        f"a provider in {config.path}, for example:\n{example_config(provider_type.name)}"
        + _setup_hints(capability, types)
    )


def resolve_provider(
    capability: str, requested: str | None = None, *, config: Config | None = None
) -> Selection:
    """Pick the provider for *capability*: the requested one, the default, the first able one,
    then a keyless type that declares itself the fallback. Raises :class:`ConfigError` saying
    exactly what to configure."""
    types = provider_types()
    fallback = next((t for t in types.values() if capability in t.fallback_for), None)
    if config is None:
        try:
            config = load_config(types, skipped=plugin_problems())
        except ConfigError as exc:
            if fallback is None or requested not in (None, fallback.name):
                raise
            config = _ignored(exc)
    if config.source == "ignored" and fallback is not None:  # only a fallback ignores a file
        implicit = _implicit(fallback)
        return Selection(
            entry=implicit,
            type=types[implicit.type],
            config=config,
        )
    able = [p for p in config.providers if types[p.type].can(capability)]
    by_default = [p for p in able if types[p.type].serves_by_default(capability)]

    chosen: ProviderConfig | None
    if requested:
        chosen = config.get(requested)
        skipped = config.skipped_entry(requested) if chosen is None else None
        if skipped is not None:  # its type's plugin could not be loaded
            raise ConfigError(f"Provider {requested!r}: {skipped.what}; {skipped.suggestion}.")
        if chosen is None:
            names = ", ".join(p.name for p in config.providers) or "none configured"
            if fallback is not None and requested == fallback.name:
                chosen = _implicit(fallback, config)
            else:
                raise ConfigError(
                    f"Unknown provider {requested!r} requested. Configured providers: {names} "
                    f"(in {config.path})."
                )
        elif not types[chosen.type].can(capability):
            others = ", ".join(p.name for p in able) or "none"
            raise ConfigError(
                f"Provider {requested!r} (type {chosen.type}) cannot {capability}. "
                f"Providers that can: {others}."
            )
    else:
        named = config.get(config.default_for(capability) or "")
        default = config.get(config.default_provider) if config.default_provider else None
        if named is not None and named in able:
            chosen = named
        elif default is not None and default in by_default:
            chosen = default
        elif by_default:
            chosen = by_default[0]
        elif fallback is not None:
            chosen = _implicit(fallback, config)
        else:
            implied = (env_provider(t) for t in types.values() if t.serves_by_default(capability))
            chosen = next((entry for entry in implied if entry is not None), None)
    if chosen is None:
        raise _missing_key(capability, config, types)

    provider_type = types[chosen.type]
    withheld = config.withheld_run(chosen.name)
    if withheld is not None:  # a program others could have planted: not run, and said
        raise ConfigError(f"Provider {chosen.name!r}: {withheld.what}; {withheld.suggestion}.")
    if chosen.api_key is None and provider_type.needs_api_key:
        withheld = config.withheld_key(chosen.name)
        if withheld is not None:  # a key kept from a baseUrl others could have planted
            raise ConfigError(f"Provider {chosen.name!r}: {withheld.what}; {withheld.suggestion}.")
        if provider_type.env_key_implies_provider and not chosen.origin.startswith("providers["):
            raise _env_key_error(provider_type, capability, config, types)
        if provider_type.env_key_implies_provider:  # an entry of the file: name it (the seeds'
            # sentence first, then the real problem, as pi-web config says it)
            raise ConfigError(
                f"{provider_type.api_key_env} environment variable is not set. Set it to your "
                f"{provider_type.display_name} API key to use {_TOOL_WORDS[capability]}. Or add "
                f'"apiKey": "..." to the entry {chosen.origin} ({chosen.name}) of {config.path}: '
                "it has no key."
            )
        env = provider_type.api_key_env
        hint = f" or set {env}" if env else ""
        raise ConfigError(
            f'Provider {chosen.name!r} has no API key: add "apiKey" to its entry in '
            f"{config.path}{hint}.\nFor example:\n{example_config(chosen.type)}"
        )
    return Selection(
        entry=chosen,
        type=provider_type,
        config=config,
    )


def search_fallbacks(first: Selection, filters: Collection[str] = ()) -> list[Selection]:
    """The providers a query fails over to after *first* when its call named no provider, in
    order: ``searchFallback``'s names, or (``true``, the default) every other configured
    provider that searches by default, in file order. A provider that cannot apply the call's
    *filters*, or cannot be used (no key), is left out; none when ``searchFallback`` is
    ``false``."""
    config = first.config
    setting = config.search_fallback
    if setting is False:
        return []
    types = provider_types()
    if setting is True:
        names = [
            p.name
            for p in config.providers
            if p.type in types and types[p.type].serves_by_default("search")
        ]
    else:
        names = list(setting)
    found = []
    for name in dict.fromkeys(names):
        if name == first.entry.name:
            continue
        try:
            selection = resolve_provider("search", name, config=config)
        except ConfigError:
            continue  # no key, or no longer a search provider: not a fallback
        if set(filters) <= selection.type.search_filters:
            found.append(selection)
    return found


def search_fusion(
    config: Config, setting: str | Collection[str], filters: Collection[str] = ()
) -> list[str]:
    """The providers a fused call sends each query to, for *setting* (a call's ``provider``, or
    ``searchFusion``): for ``"all"``, every configured provider that searches by default and
    applies the call's *filters*; else the names listed."""
    if setting != "all":
        return list(dict.fromkeys(setting))
    types = provider_types()
    return [
        p.name
        for p in config.providers
        if p.type in types
        and types[p.type].serves_by_default("search")
        and set(filters) <= types[p.type].search_filters
    ]
