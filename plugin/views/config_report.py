"""``pi-web config``: which file is read, its providers (keys redacted), problems, warnings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.defaults import TOOL_FOR as _TOOLS
from ..api.errors import ConfigError
from ..api.options import option_key, options_fields
from ..api.redaction import redact_secrets, without_password
from ..api.types import ProviderType
from ..runtime.config import config_path, load_config, other_files_hint
from ..runtime.config_shapes import TOOL_DEFAULT_KEYS, Config, env_provider, example_config
from ..runtime.registry import (
    plugin_problems,
    provider_types,
    resolve_provider,
    search_fallbacks,
    search_fusion,
)

__all__ = ["config_report"]


def _shown(value: object) -> object:
    """An option's value as the report shows it: a URL's password as ``***``."""
    return without_password(value) if isinstance(value, str) else value


def _coverage(config: Config, types: Mapping[str, ProviderType]) -> list[str]:
    """One line per tool that no configured provider serves by default: a warning when the
    tool will fail, a note when a built-in fallback or an on-request provider is involved."""
    lines = []
    for capability, tool in _TOOLS.items():
        able = [p for p in config.providers if types[p.type].can(capability)]
        by_default = [p for p in able if types[p.type].serves_by_default(capability)]
        if by_default:
            continue
        named = config.default_for(capability)
        if named:
            continue
        fallback = next((t for t in types.values() if capability in t.fallback_for), None)
        env = [
            e.origin
            for e in (env_provider(t) for t in types.values() if t.serves_by_default(capability))
            if e is not None
        ]
        on_request = ", ".join(p.name for p in able)
        if fallback is not None:
            line = (
                f"Note: no provider serves {tool} by default; it uses the built-in "
                f"{fallback.name} provider."
            )
            if on_request:
                key = TOOL_DEFAULT_KEYS[capability]
                line += (
                    f' {on_request} can too when asked: pass provider="{able[0].name}" or '
                    f'set "{key}": "{able[0].name}".'
                )
            lines.append(line)
        elif env:
            lines.append(
                f"Note: {tool} uses the provider implied by {env[0].removeprefix('env ')}."
            )
        else:
            kinds = ", ".join(
                t.name
                + (
                    f" (get a key at {t.key.url})"
                    if t.key and t.key.url
                    else " (keyless)"
                    if not t.key
                    else ""
                )
                for t in types.values()
                if t.can(capability)
            )
            lines.append(
                f"Warning: no configured provider can {capability}: {tool} will fail until you "
                f"add one (types that can: {kinds or 'none'})."
            )
    return lines


def _default_fetcher(config: Config) -> str | None:
    """The provider a web_fetch call without ``provider`` starts with, or ``None``."""
    try:
        return resolve_provider("fetch", config=config).entry.name
    except ConfigError:
        return None


def _ladder_line(config: Config, types: Mapping[str, ProviderType]) -> str:
    """What ``fetchLadder`` makes of this config, in one line."""
    if config.fetch_ladder is False:
        return "Fetch ladder: off (fetchLadder: false)"
    first = _default_fetcher(config)
    if config.fetch_ladder is True:
        names = [p.name for p in config.providers if types[p.type].serves_by_default("fetch")]
        how = "the other fetchers that serve by default"
    else:
        names = list(config.fetch_ladder)
        how = "fetchLadder"
    listed = ", ".join(name for name in names if name != first) or "none configured"
    after = f"after {first}, " if first else ""
    return (
        f"Fetch ladder: on ({after}{how}: {listed}); a page refused to bots or needing JavaScript is "
        "tried there, never a URL with credentials, nor a private host unless that provider "
        "allows private networks"
    )


def _cost(names: list[str], config: Config, types: Mapping[str, ProviderType]) -> str:
    """What sending each query to *names* costs: calls per query, and which are paid."""
    paid = [
        name
        for name in names
        if (entry := config.get(name)) is not None and types[entry.type].needs_api_key
    ]
    said = f"{len(names)} calls per query"
    if paid:
        return f"{said}, {len(paid)} of them paid: {', '.join(paid)}"
    return f"{said}, none of them paid"


def _search_lines(config: Config, types: Mapping[str, ProviderType]) -> list[str]:
    """What ``searchFallback`` and ``searchFusion`` make of this config: the failover order,
    and what fusion costs."""
    try:
        first = resolve_provider("search", config=config)
    except ConfigError:
        return []
    lines = []
    if config.search_fusion is not None:
        lines.append(
            "Search failover: not used (searchFusion sends each query to several providers; one "
            "that fails is named and the others kept)"
        )
    elif config.search_fallback is False:
        lines.append("Search failover: off (searchFallback: false)")
    else:
        chain = [first.entry.name, *(s.entry.name for s in search_fallbacks(first))]
        how = "searchFallback" if config.search_fallback is not True else "the providers' order"
        if len(chain) > 1:
            lines.append(
                f"Search failover: {' -> '.join(chain)} ({how}); a query whose provider fails "
                "for quota, a rate limit, authentication, a timeout or an outage goes to the "
                "next, at once; a call that names its provider never fails over"
            )
        else:
            lines.append(f"Search failover: none ({chain[0]} is the only search provider)")
    every = search_fusion(config, "all")
    if config.search_fusion is not None:
        names = search_fusion(config, config.search_fusion)
        lines.append(
            f"Search fusion: on for calls that name no provider (searchFusion): each query goes "
            f"to {', '.join(names)} at once ({_cost(names, config, types)})"
        )
    elif len(every) > 1:
        lines.append(
            'Search fusion: off; a call may pass provider "all" to send each query to '
            f"{', '.join(every)} at once ({_cost(every, config, types)}), or a list of names"
        )
    return lines


def _reader_lines(config: Config) -> list[str]:
    """The site readers: which are on, what each reads, and the GitHub token's source."""
    from ..runtime.readers import settings_warnings, token_state
    from ..runtime.registry import readers

    try:
        found = readers()
    except Exception:  # noqa: BLE001 - a broken third-party reader plugin
        return ["Site readers: could not be loaded"]
    settings = config.readers
    if not settings.enabled:
        return ["Site readers: off (readers: false); web_fetch downloads every page itself"]
    lines = [
        "Site readers (web_fetch without provider reads these sites through their own APIs; "
        '"readers": {"<name>": false} switches one off):'
    ]
    for reader in found.values():
        state = "on" if settings.is_on(reader.name) else "off"
        line = f"- {reader.name}: {reader.label}, {reader.description or 'pages'} ({state})"
        token = token_state(reader)
        if token and state == "on":
            line += f"; {token}"
        base_url = settings.base_url(reader.name)
        if base_url:
            line += f"; baseUrl {base_url}"
        lines.append(line)
    lines += [f"Warning: {warning}" for warning in settings_warnings(config)]
    return lines


def _team_lines(config: Config) -> list[str]:
    """The shared state (reached now) and the team's limits, when either is set."""
    from ..runtime import state

    lines = []
    if state.configured() is not None:
        problem = state.check()
        reached = (
            "answers"
            if problem is None
            else f"unavailable: {problem}; each process uses its own state meanwhile"
        )
        lines.append(f"Shared state: {state.describe()} ({reached})")
    limits = config.limits
    if limits.configured:
        parts = []
        if limits.per_token:
            parts.append(f"each caller {limits.per_token}")
        parts += [f"{name} {rates}" for name, rates in limits.tokens]
        parts += [f"provider {name} {rates}" for name, rates in limits.providers]
        where = "in the shared state" if state.configured() else "in each process (no shared state)"
        lines.append(f"Limits ({where}): {'; '.join(parts) or 'none readable'}")
        try:
            import limits as _library  # noqa: F401
        except ImportError:
            from pi_hostspec.install import install_command

            lines.append(
                "Warning: limits are set but cannot be enforced here: the limits library is not "
                f"installed ({install_command('team')}); the calls they limit are refused"
            )
    return lines


def config_report() -> tuple[str, bool]:
    """The report's text and whether the config is usable."""
    path = config_path()
    lines = [f"Config file: {path}"]
    try:
        types = provider_types()
    except Exception as exc:  # noqa: BLE001 - a broken third-party provider plugin
        lines.append(f"Error: could not load provider types: {exc}")
        return "\n".join(lines), False
    described = [f"{name} ({', '.join(sorted(kind.capabilities))})" for name, kind in types.items()]
    lines.append(f"Provider types: {'; '.join(described)}")
    lines += [f"Warning: {problem}" for problem in plugin_problems()]
    try:
        config = load_config(types, path, plugin_problems())
    except ConfigError as exc:
        lines.append("Status: invalid")
        lines.append(str(exc))
        for kind in types.values():
            for capability in sorted(kind.fallback_for):
                lines.append(
                    f"Note: {_TOOLS[capability]} still works: it uses the built-in {kind.name} "
                    "provider and says that this file was ignored."
                )
        if any("fetch" in kind.fallback_for for kind in types.values()):
            # web_fetch then runs with the file ignored: every reader on, as with no file
            lines += _reader_lines(Config(path=path, source="ignored"))
        return "\n".join(lines), False
    implied = [t for t in types.values() if t.env_key_implies_provider]
    if config.source == "none":
        variables = [t.api_key_env for t in implied]
        if len(variables) == 1:
            lines.append(f"Status: no config file and {variables[0]} is not set.")
        else:
            listed = ", ".join(variables) or "no key variable"
            lines.append(f"Status: no config file and none of {listed} is set.")
        fallbacks = [t for t in types.values() if t.fallback_for]
        for kind in fallbacks:
            tools = ", ".join(
                f"web_{c}" if c != "summarize" else c for c in sorted(kind.fallback_for)
            )
            lines.append(
                f"{tools} works with the built-in {kind.name} provider; other tools need a provider."
            )
        lines += _reader_lines(config)
        first = implied[0].name if implied else next(iter(types), "kagi")
        lines.append(f"Create {path} like this:\n{example_config(first)}")
        hint = other_files_hint()
        if hint:
            lines.append(hint.lstrip("\n"))
        lines += [kind.setup_hint for kind in types.values() if kind.setup_hint]
        return "\n".join(lines), True
    if config.source == "env":
        origins = ", ".join(p.origin.removeprefix("env ") for p in config.providers)
        lines.append(f"Status: no config file; using implicit providers from {origins}.")
    elif config.key_problems:
        count = len(config.key_problems)
        lines.append(f"Status: {count} problem{'s' if count != 1 else ''} (see Problem below)")
    elif config.shape == "shared":
        lines.append(
            'Status: valid, with no "providers" list (the shared file of pi extensions): '
            "providers come from flat keys and key variables, in this order."
        )
    else:
        lines.append("Status: valid")
    if config.default_provider:
        lines.append(f"Default provider: {config.default_provider}")
    for capability, name in config.tool_defaults:
        lines.append(f"Default for {_TOOLS[capability]}: {name}")
    lines.append(_ladder_line(config, types))
    lines += _search_lines(config, types)
    lines += _reader_lines(config)
    lines += _team_lines(config)
    lines.append("Providers:")
    for provider in config.providers:
        kind = types[provider.type]
        key = provider.redacted_key()
        if provider.key_from_env:
            key += f" (from {provider.key_from_env})"
        if not kind.needs_api_key:
            key = "not needed"
        origin = {"file": "the file"}.get(provider.origin, provider.origin)
        lines.append(
            f"- {provider.name}: type {provider.type}, can {', '.join(sorted(kind.capabilities))}, "
            f"key {key}, from {origin}"
        )
        options = provider.options
        if options is not None:
            shown = [
                f"{option_key(field)}={_as_json(_shown(getattr(options, field.name)))}"
                for field in options_fields(type(options))
                if getattr(options, field.name) is not None
                and not (field.name == "allow_private_network" and not getattr(options, field.name))
            ]
            if shown:
                lines.append(f"  options: {', '.join(shown)}")
    for provider in config.providers:
        check = types[provider.type].setup_check
        missing = check(provider.options) if check is not None else None
        if missing:
            lines.append(f"Warning: {provider.name}: {missing}")
        elif check is not None:
            lines.append(f"Note: {provider.name}: ready on this machine")
    for problem in config.key_problems:
        lines.append(f"Problem: {problem}")
    for warning in config.warnings:
        lines.append(f"Warning: {warning}")
    for note in config.notes:
        lines.append(f"Note: {note}")
    lines += _coverage(config, types)
    return redact_secrets("\n".join(lines)), not config.key_problems


def _as_json(value: Any) -> str:
    """An option's value as it is written in web-search.json (true, "v1", ["a", "b"])."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # a value the file cannot hold: as Python shows it
        return repr(value)
