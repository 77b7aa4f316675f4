"""Loading ``~/.pi/agent/web-search.json``: read at invocation, re-read when it changes.

The shape is seed 002's, shared with pi's TypeScript extensions::

    {"defaultProvider": "kagi", "providers": [{"name", "type", "apiKey", "options"}]}

Validation runs in explicit steps (file, JSON, top level, each entry, that type's options) so
every problem names the file, the field and what to write instead. Unknown keys are warnings.
"""

from __future__ import annotations

import json
import math
import os
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from attrs import field, frozen

from .errors import ConfigError
from .providers.base import options_fields

if TYPE_CHECKING:
    from .registry import ProviderType

__all__ = [
    "AGENT_DIR_ENV",
    "KAGI_ENV",
    "Config",
    "ProviderConfig",
    "agent_dir",
    "config_path",
    "example_config",
    "known_secrets",
    "load_config",
    "parse_config",
    "redact_secrets",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
KAGI_ENV = "KAGI_API_KEY"
MAX_CONFIG_BYTES = 1024 * 1024
_TOP_LEVEL_KEYS = ("defaultProvider", "providers")
_ENTRY_KEYS = ("name", "type", "apiKey", "options")


@frozen(kw_only=True)
class ProviderConfig:
    """One provider entry; ``api_key`` never appears in a repr."""

    name: str
    type: str
    api_key: str | None = field(default=None, repr=False)
    options: Any = None
    key_from_env: str | None = None

    def redacted_key(self) -> str:
        """The key as ``pi-web config`` may show it: at most its last 4 characters."""
        if not self.api_key:
            return "(none)"
        tail = self.api_key[-4:] if len(self.api_key) >= 12 else ""
        return f"…{tail}" if tail else "(set)"


@frozen(kw_only=True)
class Config:
    """The validated config: providers in file order, the default, and warnings."""

    path: Path
    source: str  # "file", "env" (no file, KAGI_API_KEY set) or "none"
    providers: tuple[ProviderConfig, ...] = ()
    default_provider: str | None = None
    warnings: tuple[str, ...] = ()
    key_problems: tuple[str, ...] = ()

    def get(self, name: str) -> ProviderConfig | None:
        """The provider called *name*, or ``None``."""
        return next((p for p in self.providers if p.name == name), None)


def agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    override = os.environ.get(AGENT_DIR_ENV, "").strip()
    if override:
        return Path(os.path.expanduser(override))
    return Path.home() / ".pi" / "agent"


def config_path() -> Path:
    """Where the config file is read from."""
    return agent_dir() / "web-search.json"


def example_config(provider_type: str = "kagi") -> str:
    """A minimal valid config for *provider_type*, as text to paste."""
    key = {"kagi": "YOUR_KAGI_API_KEY", "exa": "YOUR_EXA_API_KEY"}.get(provider_type)
    entry = {"name": provider_type, "type": provider_type}
    if key:
        entry["apiKey"] = key
    body = {"defaultProvider": provider_type, "providers": [entry]}
    return json.dumps(body, indent=2)


def _problem(path: Path, message: str, example_type: str = "kagi") -> ConfigError:
    return ConfigError(
        f"Invalid web search config {path}: {message}\n"
        f"A minimal valid file looks like:\n{example_config(example_type)}"
    )


_KIND_CHECKS = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    "integer": (
        lambda v: (
            (isinstance(v, int) and not isinstance(v, bool))
            or (isinstance(v, float) and v.is_integer())
        ),
        "an integer",
    ),
    "boolean": (lambda v: isinstance(v, bool), "true or false"),
    "string-list": (
        lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
        "a list of strings",
    ),
}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {json.dumps(value)[:60]}"
    return "an array" if isinstance(value, list) else "an object"


_converter = cattrs.Converter()


def _structure_options(
    where: str, raw: Any, options_class: type
) -> tuple[Any, list[str], list[str]]:
    """Check *raw* against *options_class*; return (instance, errors, warnings)."""
    errors: list[str] = []
    warnings: list[str] = []
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, [f"{where}: must be an object, got {_describe(raw)}"], []
    fields = {f.metadata["key"]: f for f in options_fields(options_class)}
    unknown = [key for key in raw if key not in fields]
    if unknown:
        known = ", ".join(fields) or "none"
        warnings.append(
            f"{where}: unknown option(s) {', '.join(map(repr, unknown))} ignored (known: {known})"
        )
    values: dict[str, Any] = {}
    for key, attribute in fields.items():
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        test, wanted = _KIND_CHECKS[attribute.metadata["kind"]]
        if not test(value):
            errors.append(f"{where}.{key}: expected {wanted}, got {_describe(value)}")
            continue
        if isinstance(value, float) and not math.isfinite(value):  # JSON 1e999 parses as inf
            errors.append(f"{where}.{key}: must be a finite number, got {_describe(value)}")
            continue
        if attribute.metadata["kind"] == "integer":
            value = int(value)
        check = attribute.metadata.get("check")
        message = check(value) if check else None
        if message:
            errors.append(f"{where}.{key}: {message}, got {_describe(value)}")
            continue
        values[attribute.name] = value
    if errors:
        return None, errors, warnings
    return _converter.structure(values, options_class), errors, warnings


def parse_config(text: str, path: Path, types: dict[str, ProviderType]) -> Config:
    """Validate the file's text against the known provider *types*; raise :class:`ConfigError`."""
    if not text.strip():
        raise _problem(path, "the file is empty.")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _problem(
            path, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
        ) from None
    except RecursionError:
        raise _problem(path, "not valid JSON: nested too deeply.") from None
    if not isinstance(raw, dict):
        raise _problem(path, f"the top level must be an object, got {_describe(raw)}.")
    warnings = []
    unknown_top = [key for key in raw if key not in _TOP_LEVEL_KEYS]
    if unknown_top:
        warnings.append(f"unknown top-level key(s) {', '.join(map(repr, unknown_top))} ignored")
    if "providers" not in raw:
        raise _problem(path, '"providers" is missing: it must be a non-empty list of providers.')
    providers_raw = raw["providers"]
    if not isinstance(providers_raw, list):
        raise _problem(path, f'"providers" must be a list, got {_describe(providers_raw)}.')
    if not providers_raw:
        raise _problem(path, '"providers" is empty: add at least one provider.')

    errors: list[str] = []
    key_problems: list[str] = []
    providers: list[ProviderConfig] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(providers_raw):
        where = f"providers[{index}]"
        if not isinstance(entry, dict):
            errors.append(
                f"{where}: must be an object with name, type and apiKey, got {_describe(entry)}"
            )
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{where}.name: required, a non-empty string (got {_describe(name)})")
            continue
        where = f"{where} ({name})"
        if name in seen:
            errors.append(f"{where}: duplicate name {name!r} (also providers[{seen[name]}])")
            continue
        seen[name] = index
        extra = [key for key in entry if key not in _ENTRY_KEYS]
        if extra:
            warnings.append(f"{where}: unknown key(s) {', '.join(map(repr, extra))} ignored")
        kind = entry.get("type")
        if not isinstance(kind, str) or kind not in types:
            known = ", ".join(sorted(types))
            if kind is None:
                errors.append(f"{where}.type: required; one of {known}")
            else:
                errors.append(f"{where}.type: unknown type {_describe(kind)}; known types: {known}")
            continue
        provider_type = types[kind]
        api_key = entry.get("apiKey")
        key_from_env = None
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            errors.append(
                f"{where}.apiKey: must be a non-empty string, got {_describe(api_key) if not isinstance(api_key, str) else 'an empty string'}"
            )
            continue
        if api_key is not None:
            api_key = api_key.strip()  # a pasted key often carries a newline
        if api_key is None and provider_type.needs_api_key:
            env_name = provider_type.api_key_env
            if env_name and os.environ.get(env_name, "").strip():
                api_key = os.environ[env_name].strip()
                key_from_env = env_name
            else:
                fallback = f" (or set {env_name})" if env_name else ""
                key_problems.append(
                    f'{where}.apiKey: missing; add "apiKey": "..." to this entry{fallback}'
                )
        options, option_errors, option_warnings = _structure_options(
            f"{where}.options", entry.get("options"), provider_type.options_class
        )
        errors.extend(option_errors)
        warnings.extend(option_warnings)
        if option_errors:
            continue
        providers.append(
            ProviderConfig(
                name=name, type=kind, api_key=api_key, options=options, key_from_env=key_from_env
            )
        )

    default = raw.get("defaultProvider")
    if default is not None:
        if not isinstance(default, str):
            errors.append(
                f"defaultProvider: expected a provider name (string), got {_describe(default)}"
            )
        elif default not in seen:
            names = ", ".join(seen) or "none"
            errors.append(f"defaultProvider: {default!r} is not one of the providers ({names})")
    if errors:
        listing = "\n".join(f"- {line}" for line in errors)
        raise _problem(path, f"{len(errors)} problem(s):\n{listing}")
    return Config(
        path=path,
        source="file",
        providers=tuple(providers),
        default_provider=default,
        warnings=tuple(warnings),
        key_problems=tuple(key_problems),
    )


def _read_text(path: Path) -> str | None:
    """The file's text, ``None`` when it does not exist; a clean error for anything odd."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _problem(path, f"cannot read it ({exc.strerror}).") from None
    if stat.S_ISDIR(info.st_mode):
        raise _problem(path, "it is a directory, not a file.")
    try:
        # Non-blocking, so a FIFO swapped in after the stat cannot hang the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _problem(path, f"cannot read it ({exc.strerror}).") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _problem(
                path, "it is not a regular file (a device, FIFO or socket cannot be a config)."
            )
        if info.st_size > MAX_CONFIG_BYTES:
            raise _problem(path, f"it is {info.st_size} bytes; a config file may be at most 1 MiB.")
        try:
            data = handle.read(MAX_CONFIG_BYTES + 1)  # bounded: the file may grow after the stat
        except OSError as exc:
            raise _problem(path, f"cannot read it ({exc.strerror}).") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise _problem(path, "it is larger than 1 MiB; a config file may be at most 1 MiB.")
    if b"\x00" in data:
        raise _problem(path, "it is a binary file, not JSON text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _problem(path, "it is not UTF-8 text.") from None


def permission_warning(path: Path) -> str | None:
    """A warning when a config file that holds keys is readable by group or others."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
        return (
            f"{path} holds API keys and is readable by other users "
            f"(mode {stat.S_IMODE(mode):o}); run: chmod 600 {path}"
        )
    return None


_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, Config]] = {}

#: Keys shorter than this are not redacted from output (they would mangle ordinary words).
MIN_SECRET_LENGTH = 8
_secrets: set[str] = set()


def _remember_secrets(config: Config) -> None:
    for provider in config.providers:
        key = provider.api_key
        if isinstance(key, str) and len(key.strip()) >= MIN_SECRET_LENGTH:
            _secrets.add(key.strip())


def known_secrets(*, load: bool = False) -> tuple[str, ...]:
    """Every API key this process has read from a config or the environment, longest first.

    Output is redacted against all of them, whichever provider served the call: a key can reach
    a tool through a URL's query string or a page that echoes it. With *load*, the config is
    read first (when it has not been yet); a broken config just adds nothing.
    """
    if load:
        try:
            load_config()
        except Exception:  # noqa: BLE001 - redaction must never fail the caller
            pass
    env_key = os.environ.get(KAGI_ENV, "").strip()
    found = set(_secrets)
    if len(env_key) >= MIN_SECRET_LENGTH:
        found.add(env_key)
    return tuple(sorted(found, key=len, reverse=True))


def redact_secrets(text: str, *, load: bool = False) -> str:
    """*text* with every known API key replaced by ``***``."""
    if not text:
        return text
    for secret in known_secrets(load=load):
        if secret in text:
            text = text.replace(secret, "***")
    return text


def load_config(path: Path | None = None, types: dict | None = None) -> Config:
    """Read and validate the config now (cached until the file or KAGI_API_KEY changes).

    With no file, a set ``KAGI_API_KEY`` means one implicit Kagi provider (``source="env"``);
    otherwise the config is empty (``source="none"``) and tools say what to configure.
    """
    from .registry import provider_types

    path = path or config_path()
    types = types if types is not None else provider_types()
    env_key = os.environ.get(KAGI_ENV, "").strip()
    # Every key variable a provider type may fall back to: a change must re-read the config.
    env_keys = tuple(
        os.environ.get(name, "")
        for name in sorted({KAGI_ENV, *(t.api_key_env for t in types.values() if t.api_key_env)})
    )
    try:
        info = path.stat()
        stamp: tuple = (
            info.st_mtime_ns,
            info.st_size,
            info.st_ino,
            info.st_mode,
            env_keys,
            id(types),
        )
    except OSError:
        stamp = (None, env_keys, id(types))
    with _cache_lock:
        cached = _cache.get(str(path))
        if cached and cached[0] == stamp:
            return cached[1]
    text = _read_text(path)
    if text is None:
        if env_key and "kagi" in types:
            config = Config(
                path=path,
                source="env",
                providers=(
                    ProviderConfig(
                        name="kagi",
                        type="kagi",
                        api_key=env_key,
                        options=types["kagi"].options_class(),
                        key_from_env=KAGI_ENV,
                    ),
                ),
                default_provider="kagi",
            )
        else:
            config = Config(path=path, source="none")
    else:
        config = parse_config(text, path, types)
        warning = (
            permission_warning(path)
            if any(p.api_key and not p.key_from_env for p in config.providers)
            else None
        )
        if warning:
            config = attrs.evolve(config, warnings=config.warnings + (warning,))
    _remember_secrets(config)
    with _cache_lock:
        _cache[str(path)] = (stamp, config)
    return config
