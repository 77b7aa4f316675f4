"""Provider types (registered through ``register_provider_types``) and provider selection."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import pluggy
from attrs import field, frozen

from . import hookspecs
from .config import KAGI_ENV, Config, ProviderConfig, example_config, load_config
from .errors import ConfigError
from .providers.base import CommonOptions

__all__ = ["ProviderType", "close_providers", "get_provider", "provider_types", "resolve_provider"]

BUILTIN_MODULES = {
    "kagi": "pi_web_tools.providers.kagi",
    "exa": "pi_web_tools.providers.exa",
    "direct": "pi_web_tools.providers.direct",
}
CAPABILITIES = ("search", "fetch", "summarize")
_TOOL_WORDS = {"search": "web search", "fetch": "web fetch", "summarize": "summarize"}


@frozen(kw_only=True)
class ProviderType:
    """A kind of provider that ``web-search.json`` can name in ``type``."""

    name: str
    capabilities: frozenset = field(converter=frozenset)
    factory: Callable[[ProviderConfig], Any] = field(repr=False)
    options_class: type = CommonOptions
    needs_api_key: bool = True
    api_key_env: str | None = None
    plugin_name: str | None = None

    def __attrs_post_init__(self) -> None:
        unknown = set(self.capabilities) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"provider type {self.name!r}: unknown capabilities {sorted(unknown)}")


def get_provider_manager(*, load_entrypoints: bool = True, plugins=()) -> pluggy.PluginManager:
    """The plugin manager for provider types: built-ins first, then entry points."""
    import importlib

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name, module in BUILTIN_MODULES.items():
        if not pm.get_plugin(name):
            pm.register(importlib.import_module(module), name=name)
    if load_entrypoints:
        pm.load_setuptools_entrypoints(hookspecs.ENTRY_POINT_GROUP)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    return pm


def collect_provider_types(pm: pluggy.PluginManager) -> dict[str, ProviderType]:
    """Every registered provider type by name; a duplicate name is an error naming both."""
    types: dict[str, ProviderType] = {}
    for impl in pm.hook.register_provider_types.get_hookimpls():

        def register(provider_type: ProviderType, _plugin: str = impl.plugin_name) -> None:
            if not isinstance(provider_type, ProviderType):
                raise TypeError(
                    f"{_plugin} registered {type(provider_type).__name__}, not a ProviderType"
                )
            if provider_type.name in types:
                other = types[provider_type.name].plugin_name
                raise ValueError(
                    f"provider type {provider_type.name!r} is registered by {other} and {_plugin}"
                )
            from attrs import evolve

            types[provider_type.name] = evolve(provider_type, plugin_name=_plugin)

        impl.function(register=register)
    return types


_types_lock = threading.Lock()
_types: dict[str, ProviderType] | None = None


def provider_types() -> dict[str, ProviderType]:
    """The provider types, loaded once on first use (never at plugin import)."""
    global _types
    with _types_lock:
        if _types is None:
            _types = collect_provider_types(get_provider_manager())
        return _types


def set_provider_types(types: dict[str, ProviderType] | None) -> None:
    """Replace the loaded provider types (tests, embedding hosts); ``None`` reloads lazily."""
    global _types
    with _types_lock:
        _types = types
    close_providers()


_instances_lock = threading.Lock()
_instances: dict[str, tuple[tuple, Any]] = {}


def _close(provider: Any) -> None:
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


def get_provider(config: ProviderConfig, types: dict[str, ProviderType] | None = None) -> Any:
    """The provider object for *config*, reused while its entry is unchanged (warm sessions).

    One provider is kept per name: when the entry changes (a config edit), the old provider is
    closed and replaced, so a long-running host does not collect idle sessions.
    """
    types = types if types is not None else provider_types()
    key = (config.type, config.api_key, config.options)
    replaced = None
    with _instances_lock:
        known = _instances.get(config.name)
        if known is not None and known[0] == key:
            return known[1]
        provider = types[config.type].factory(config)
        _instances[config.name] = (key, provider)
        replaced = known[1] if known is not None else None
    if replaced is not None:
        _close(replaced)
    return provider


def _kagi_missing_key(capability: str, config: Config) -> ConfigError:
    return ConfigError(
        f"{KAGI_ENV} environment variable is not set. Set it to your Kagi API key to use "
        f"{_TOOL_WORDS[capability]}. Or configure a provider in {config.path}, for example:\n"
        f"{example_config('kagi')}"
    )


def resolve_provider(
    capability: str, requested: str | None = None, *, config: Config | None = None
) -> tuple[Any, ProviderConfig, Config]:
    """Pick the provider for *capability*: the requested one, the default, the first able one.

    With none able to fetch, the built-in direct fetcher serves. Raises :class:`ConfigError`
    saying exactly what to configure.
    """
    types = provider_types()
    config = config or load_config(types=types)
    able = [p for p in config.providers if capability in types[p.type].capabilities]

    if requested:
        chosen = config.get(requested)
        if chosen is None:
            names = ", ".join(p.name for p in config.providers) or "none configured"
            if requested == "direct" and capability == "fetch" and "direct" in types:
                chosen = _implicit_direct(types)
            else:
                raise ConfigError(
                    f"Unknown provider {requested!r} requested. Configured providers: {names} "
                    f"(in {config.path})."
                )
        elif capability not in types[chosen.type].capabilities:
            others = ", ".join(p.name for p in able) or "none"
            raise ConfigError(
                f"Provider {requested!r} (type {chosen.type}) cannot {capability}. "
                f"Providers that can: {others}."
            )
    else:
        default = config.get(config.default_provider) if config.default_provider else None
        if default is not None and default in able:
            chosen = default
        elif able:
            chosen = able[0]
        elif capability == "fetch" and "direct" in types:
            chosen = _implicit_direct(types)
        elif "kagi" in types and capability in types["kagi"].capabilities:
            env_key = os.environ.get(KAGI_ENV, "").strip()
            if not env_key:
                raise _kagi_missing_key(capability, config)
            chosen = ProviderConfig(
                name="kagi",
                type="kagi",
                api_key=env_key,
                options=types["kagi"].options_class(),
                key_from_env=KAGI_ENV,
            )
        else:
            raise ConfigError(f"No configured provider can {capability}. Add one to {config.path}.")

    if chosen.api_key is None and types[chosen.type].needs_api_key:
        if chosen.type == "kagi":
            raise _kagi_missing_key(capability, config)
        env = types[chosen.type].api_key_env
        hint = f" or set {env}" if env else ""
        raise ConfigError(
            f'Provider {chosen.name!r} has no API key: add "apiKey" to its entry in '
            f"{config.path}{hint}.\nFor example:\n{example_config(chosen.type)}"
        )
    return get_provider(chosen, types), chosen, config


def _implicit_direct(types: dict[str, ProviderType]) -> ProviderConfig:
    return ProviderConfig(name="direct", type="direct", options=types["direct"].options_class())
