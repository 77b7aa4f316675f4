"""``pi-web config``: which file is read, its providers (keys redacted), problems, warnings."""

from __future__ import annotations

__all__ = ["config_report"]


def config_report() -> tuple[str, bool]:
    """The report's text and whether the config is usable."""
    from .api import option_key, options_fields
    from .config import config_path, example_config, load_config
    from .errors import ConfigError
    from .registry import provider_types
    from .secrets import redact_secrets

    path = config_path()
    lines = [f"Config file: {path}"]
    try:
        types = provider_types()
    except Exception as exc:  # noqa: BLE001 - a broken third-party provider plugin
        lines.append(f"Error: could not load provider types: {exc}")
        return "\n".join(lines), False
    described = [f"{name} ({', '.join(sorted(kind.capabilities))})" for name, kind in types.items()]
    lines.append(f"Provider types: {'; '.join(described)}")
    try:
        config = load_config(types, path)
    except ConfigError as exc:
        lines.append("Status: invalid")
        lines.append(str(exc))
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
        first = implied[0].name if implied else next(iter(types), "kagi")
        lines.append(f"Create {path} like this:\n{example_config(first)}")
        lines += [kind.setup_hint for kind in types.values() if kind.setup_hint]
        return "\n".join(lines), True
    if config.source == "env":
        origins = ", ".join(p.origin.removeprefix("env ") for p in config.providers)
        lines.append(f"Status: no config file; using implicit providers from {origins}.")
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
        options = provider.options
        if options is not None:
            shown = [
                f"{option_key(field)}={getattr(options, field.name)!r}"
                for field in options_fields(type(options))
                if getattr(options, field.name) is not None
            ]
            if shown:
                lines.append(f"  options: {', '.join(shown)}")
    for problem in config.key_problems:
        lines.append(f"Problem: {problem}")
    for warning in config.warnings:
        lines.append(f"Warning: {warning}")
    for capability in ("fetch",):
        if not any(types[p.type].can(capability) for p in config.providers):
            fallback = next((t for t in types.values() if capability in t.fallback_for), None)
            if fallback is not None:
                lines.append(
                    f"Note: no provider can {capability}; web_{capability} uses the built-in "
                    f"{fallback.name} provider."
                )
    return redact_secrets("\n".join(lines)), not config.key_problems
