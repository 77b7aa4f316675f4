"""``pi-web config``: which file is read, its providers (keys redacted), problems, warnings."""

from __future__ import annotations

__all__ = ["config_report"]


def config_report() -> tuple[str, bool]:
    """The report's text and whether the config is usable."""
    from .config import KAGI_ENV, config_path, load_config
    from .errors import ConfigError
    from .registry import provider_types

    path = config_path()
    lines = [f"Config file: {path}"]
    try:
        types = provider_types()
    except Exception as exc:  # a broken third-party provider plugin
        lines.append(f"Error: could not load provider types: {exc}")
        return "\n".join(lines), False
    described = [
        f"{name} ({', '.join(sorted(kind.capabilities))})" for name, kind in sorted(types.items())
    ]
    lines.append(f"Provider types: {'; '.join(described)}")
    try:
        config = load_config(path, types)
    except ConfigError as exc:
        lines.append("Status: invalid")
        lines.append(str(exc))
        return "\n".join(lines), False
    if config.source == "none":
        lines.append("Status: no config file and KAGI_API_KEY is not set.")
        lines.append(
            "web_fetch works with the built-in direct fetcher; web_search and summarize need a provider."
        )
        from .config import example_config

        lines.append(f"Create {path} like this:\n{example_config('kagi')}")
        return "\n".join(lines), True
    if config.source == "env":
        lines.append(f"Status: no config file; using one implicit Kagi provider from {KAGI_ENV}.")
    else:
        lines.append("Status: valid")
    if config.default_provider:
        lines.append(f"Default provider: {config.default_provider}")
    lines.append("Providers:")
    for provider in config.providers:
        kind = types[provider.type]
        key = provider.redacted_key()
        if provider.key_from_env:
            key += f" (from {provider.key_from_env})"
        if not kind.needs_api_key:
            key = "not needed"
        lines.append(
            f"- {provider.name}: type {provider.type}, can {', '.join(sorted(kind.capabilities))}, key {key}"
        )
        options = _options_summary(provider.options)
        if options:
            lines.append(f"  options: {options}")
    for problem in config.key_problems:
        lines.append(f"Problem: {problem}")
    for warning in config.warnings:
        lines.append(f"Warning: {warning}")
    if not any("fetch" in types[p.type].capabilities for p in config.providers):
        lines.append("Note: no provider can fetch; web_fetch uses the built-in direct fetcher.")
    from .config import redact_secrets

    return redact_secrets("\n".join(lines)), not config.key_problems


def _options_summary(options: object) -> str:
    from .providers.base import options_fields

    if options is None:
        return ""
    parts = []
    for field in options_fields(type(options)):
        value = getattr(options, field.name)
        if value is not None:
            parts.append(f"{field.metadata['key']}={value!r}")
    return ", ".join(parts)
