"""Loading ``~/.pi/agent/web-search.json``: read at invocation, re-read when it changes.

The shape is seed 002's, shared with pi's TypeScript extensions::

    {"defaultProvider": "kagi", "providers": [{"name", "type", "apiKey", "options"}]}

Validation runs in explicit steps (file, JSON, top level, each entry, that type's options) so
every problem names the file, the field and what to write instead. Unknown keys are warnings.
Everything provider-specific comes from the :class:`~pi_web_tools.api.types.ProviderType` objects
the caller passes in: which types exist, their options, and which of them a key in the
environment configures implicitly.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import stat
import threading
import types as pytypes
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen
from pi_hostspec.schema import describe

from ..api import redaction
from ..api.errors import ConfigError
from ..api.types import OptionValueError, ProviderConfig, ProviderType, option_key, options_fields
from .cache import DEFAULT_TTL_SECONDS, CacheSettings
from .reader_config import ReadersConfig, parse_readers

__all__ = [
    "AGENT_DIR_ENV",
    "Config",
    "agent_dir",
    "clear_cache",
    "config_path",
    "env_provider",
    "example_config",
    "load_config",
    "parse_config",
    "permission_warning",
    "structure_options",
    "trust_warnings",
]

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
MAX_CONFIG_BYTES = 1024 * 1024
#: ``defaultFetchProvider`` and its kind: a provider for one tool only.
TOOL_DEFAULT_KEYS = {
    "search": "defaultSearchProvider",
    "fetch": "defaultFetchProvider",
    "summarize": "defaultSummarizeProvider",
}
_TOP_LEVEL_KEYS = (
    "defaultProvider",
    "providers",
    "cache",
    "fetchLadder",
    "readers",
    "providerOptions",
    *TOOL_DEFAULT_KEYS.values(),
)
#: Top-level keys other pi extensions keep in the shared file (pi-web-access's flat keys, another
#: adapter's objects): never taken for a misspelling of ours.
OTHER_EXTENSIONS_KEYS = frozenset(
    {
        "provider",
        "perplexityApiKey",
        "jinaApiKey",
        "geminiApiKey",
        "searchRouting",
        "search",
        "fetch",
    }
)
_ENTRY_KEYS = ("name", "type", "apiKey", "options")


@frozen(kw_only=True)
class Config:
    """The validated config: providers in file order, the default, and warnings.

    ``source`` is ``"file"``, ``"env"`` (no file; providers implied by key variables),
    ``"none"`` (no file, no key) or ``"ignored"`` (the file is invalid and a keyless fallback
    serves the call without it; ``ignored`` says why).

    ``shape`` is ``"list"`` when the file has a ``providers`` list, ``"shared"`` when it has
    none (the shared file of other pi extensions: providers come from flat keys such as
    ``kagiApiKey`` and key variables). ``notes`` are facts for ``pi-web config`` (keys of other
    extensions ignored); ``warnings`` also reach the tools' details. ``tool_defaults`` maps a
    capability to the provider ``default<Capability>Provider`` names. ``fetch_ladder`` is
    ``fetchLadder``: ``True`` (the other configured fetchers that serve by default, in file
    order), ``False`` (off) or the names of the fetchers to try, in order. ``readers`` is
    ``readers``: which site readers are on, and their ``baseUrl`` overrides.
    """

    path: Path
    source: str
    providers: tuple[ProviderConfig, ...] = ()
    default_provider: str | None = None
    warnings: tuple[str, ...] = ()
    key_problems: tuple[str, ...] = ()
    cache: CacheSettings = CacheSettings()
    shape: str = "list"
    notes: tuple[str, ...] = ()
    tool_defaults: tuple[tuple[str, str], ...] = ()
    ignored: str | None = None
    fetch_ladder: bool | tuple[str, ...] = True
    readers: ReadersConfig = ReadersConfig()

    def get(self, name: str) -> ProviderConfig | None:
        """The provider called *name*, or ``None``."""
        return next((p for p in self.providers if p.name == name), None)

    def default_for(self, capability: str) -> str | None:
        """The provider named by ``default<Capability>Provider`` (``defaultFetchProvider``)."""
        return dict(self.tool_defaults).get(capability)


def agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    override = os.environ.get(AGENT_DIR_ENV, "").strip()
    if override:
        return Path(os.path.expanduser(override))
    return Path.home() / ".pi" / "agent"


def config_path() -> Path:
    """Where the config file is read from."""
    return agent_dir() / "web-search.json"


def other_extension_files() -> list[Path]:
    """Where pi-web-access keeps its ``web-search.json`` (``~/.pi``, ``$XDG_CONFIG_HOME/pi``),
    when such a file exists and is not the one read here."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    ours = config_path()
    found = []
    for candidate in (
        Path.home() / ".pi" / "web-search.json",
        Path(xdg) / "pi" / "web-search.json",
    ):
        try:
            if candidate.is_file() and candidate.resolve() != ours.resolve():
                found.append(candidate)
        except OSError:
            continue
    return found


def other_files_hint() -> str:
    """Lines naming pi-web-access's files that exist while this one does not, and what to do
    (empty when there are none)."""
    ours = config_path()
    if ours.exists():
        return ""
    return "".join(
        f"\nNote: {path} exists (where the pi-web-access extension keeps its keys), but "
        f"pi-web-tools reads {ours}: copy it there (cp {path} {ours}) or link it "
        f"(ln -s {path} {ours})."
        for path in other_extension_files()
    )


def example_config(provider_type: str = "kagi", *, needs_key: bool = True) -> str:
    """A minimal valid config for *provider_type*, as text to paste."""
    entry: dict = {"name": provider_type, "type": provider_type}
    if needs_key:
        entry["apiKey"] = f"YOUR_{provider_type.upper().replace('-', '_')}_API_KEY"
    body = {"defaultProvider": provider_type, "providers": [entry]}
    return json.dumps(body, indent=2)


def _option_names(types: Mapping[str, ProviderType]) -> list[str]:
    """Every option name (as the file spells it) of the registered provider types."""
    names: set[str] = set()
    for provider_type in types.values():
        if provider_type.options_class is not None:
            attrs.resolve_types(provider_type.options_class)
            names.update(option_key(f) for f in options_fields(provider_type.options_class))
    return sorted(names)


def unknown_keys(what: str, keys: list[str], known: Any) -> str:
    """``<what> 'x', 'y' ignored``, with ``(did you mean 'z'?)`` after a key close to a known
    one, and the known ones listed."""
    import difflib

    known = list(known)
    named = []
    for key in keys:
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
        named.append(f"{key!r} (did you mean {close[0]!r}?)" if close else repr(key))
    listed = ", ".join(known) or "none"
    return f"{what} {', '.join(named)} ignored (known: {listed})"


def _problem(
    path: Path, message: str, example_type: str = "kagi", *, needs_key: bool = True
) -> ConfigError:
    return ConfigError(
        f"Invalid web search config {path}: {message}\n"
        f"A minimal valid file looks like:\n{example_config(example_type, needs_key=needs_key)}"
    )


# --- provider options -------------------------------------------------------------------------

_NONE = type(None)


def _expected(kind: Any) -> str:
    """What a value of annotation *kind* looks like, for messages."""
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return "one of " + ", ".join(json.dumps(v) for v in typing.get_args(kind))
    if origin in (list, tuple) or kind in (list, tuple):
        return "a list of strings"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        kind, getattr(kind, "__name__", str(kind))
    )


def _strict(kind: type, test: Any) -> Any:
    def structure(value: Any, _type: Any) -> Any:
        if not test(value):
            raise TypeError(_expected(kind))
        if isinstance(value, float) and not math.isfinite(value):  # JSON 1e999 parses as inf
            raise TypeError("a finite number")
        return kind(value)

    return structure


def _converter() -> Any:
    """A cattrs converter that structures JSON values strictly (no ``"5"`` -> ``5``)."""
    import cattrs

    converter = cattrs.Converter()
    number = (int, float)
    converter.register_structure_hook(str, _strict(str, lambda v: isinstance(v, str)))
    converter.register_structure_hook(bool, _strict(bool, lambda v: isinstance(v, bool)))
    converter.register_structure_hook(
        int,
        _strict(
            int,
            lambda v: (
                isinstance(v, number)
                and not isinstance(v, bool)
                and (isinstance(v, int) or (math.isfinite(v) and v.is_integer()))
            ),
        ),
    )
    converter.register_structure_hook(
        float, _strict(float, lambda v: isinstance(v, number) and not isinstance(v, bool))
    )
    return converter


_CONVERTER: Any = None


def _option_type(attribute: attrs.Attribute) -> Any:
    """The annotation of an option without its ``| None``."""
    kind = attribute.type
    args = [arg for arg in typing.get_args(kind) if arg is not _NONE]
    if typing.get_origin(kind) in (typing.Union, pytypes.UnionType):
        return args[0] if len(args) == 1 else kind
    return kind


def structure_options(
    where: str, raw: Any, options_class: type
) -> tuple[Any, list[str], list[str]]:
    """Structure *raw* (the entry's ``options``) into *options_class* with cattrs; return
    ``(instance or None, errors, warnings)``. Each error names the field, what was expected
    and what was given; unknown keys are warnings."""
    global _CONVERTER
    if _CONVERTER is None:
        _CONVERTER = _converter()
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, [f"{where}: must be an object, got {describe(raw, show=True)}"], []
    attrs.resolve_types(options_class)
    fields = {option_key(f): f for f in options_fields(options_class)}
    errors: list[str] = []
    warnings: list[str] = []
    unknown = [key for key in raw if key not in fields]
    if unknown:
        warnings.append(f"{where}: {unknown_keys('unknown option(s)', unknown, fields)}")
    values: dict[str, Any] = {}
    for key, attribute in fields.items():
        if raw.get(key) is None:
            continue
        value = raw[key]
        kind = _option_type(attribute)
        try:
            if typing.get_origin(kind) in (list, tuple) and not isinstance(value, list):
                raise TypeError("not a list")  # cattrs would split a string into characters
            structured = _CONVERTER.structure(value, kind)
        except Exception:  # noqa: BLE001 - cattrs raises several kinds; all mean a wrong type
            errors.append(
                f"{where}.{key}: expected {_expected(kind)}, got {describe(value, show=True)}"
            )
            continue
        if attribute.validator is not None:
            try:
                attribute.validator(None, attribute, structured)
            except OptionValueError as exc:
                errors.append(f"{where}.{key}: {exc}, got {describe(value, show=True)}")
                continue
            except (ValueError, TypeError) as exc:  # an attrs validator of the plugin's own
                errors.append(f"{where}.{key}: invalid value {describe(value, show=True)} ({exc})")
                continue
        values[attribute.name] = structured
    if errors:
        return None, errors, warnings
    return options_class(**values), errors, warnings


# --- the cache settings -----------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_cache(raw: Any) -> tuple[CacheSettings, list[str]]:
    """The ``cache`` value: ``false`` (off), ``true`` or an object ``{"enabled", "ttlSeconds":
    {"web_search", "web_fetch", "summarize"}, "maxMegabytes"}``. A bad part is a warning and
    keeps its default: a cache setting never makes the tools fail."""
    if raw is None or raw is True:
        return CacheSettings(), []
    if raw is False:
        return CacheSettings(enabled=False), []
    if not isinstance(raw, dict):
        return CacheSettings(), [
            f"cache: expected true, false or an object, got {describe(raw, show=True)}; using the defaults"
        ]
    warnings = []
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        warnings.append(
            f"cache.enabled: expected true or false, got {describe(enabled, show=True)}; the cache stays on"
        )
        enabled = True
    ttl = dict(DEFAULT_TTL_SECONDS)
    given = raw.get("ttlSeconds", {})
    if not isinstance(given, dict):
        warnings.append(
            f"cache.ttlSeconds: expected an object, got {describe(given, show=True)}; using the defaults"
        )
        given = {}
    for tool, seconds in given.items():
        if tool not in ttl:
            warnings.append(
                f"cache.ttlSeconds: unknown tool {tool!r} ignored (known: {', '.join(ttl)})"
            )
        elif not _is_number(seconds) or seconds < 0:
            warnings.append(
                f"cache.ttlSeconds.{tool}: expected seconds (0 or more), got {describe(seconds, show=True)}; using {ttl[tool]}"
            )
        else:
            ttl[tool] = seconds
    size = raw.get("maxMegabytes", CacheSettings().max_megabytes)
    if not _is_number(size) or size <= 0:
        warnings.append(
            f"cache.maxMegabytes: expected a positive number, got {describe(size, show=True)}; using {CacheSettings().max_megabytes}"
        )
        size = CacheSettings().max_megabytes
    unknown = [key for key in raw if key not in ("enabled", "ttlSeconds", "maxMegabytes")]
    if unknown:
        warnings.append(
            "cache: "
            + unknown_keys("unknown key(s)", unknown, ("enabled", "ttlSeconds", "maxMegabytes"))
        )
    return CacheSettings(enabled=enabled, ttl_seconds=ttl, max_megabytes=size), warnings


# --- the fetch ladder -------------------------------------------------------------------------


def parse_fetch_ladder(
    raw: Any, providers: Any, types: Mapping[str, ProviderType]
) -> tuple[bool | tuple[str, ...], list[str]]:
    """``fetchLadder``: ``true`` (the default), ``false`` (off) or a list of provider names (the
    fetchers to try, in that order; on-request ones such as Kagi only this way). A value that
    cannot be read turns the ladder off with a warning: a setting meant to keep URLs at home
    never sends them out by being misspelt."""
    if raw is None or raw is True:
        return True, []
    if raw is False:
        return False, []
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        return False, [
            f"fetchLadder: expected true, false or a list of provider names, got "
            f"{describe(raw, show=True)}; the fetch ladder is off"
        ]
    warnings = []
    able = {p.name: p for p in providers if types[p.type].can("fetch")}
    names = []
    for name in dict.fromkeys(raw):
        if name in able:
            names.append(name)
            continue
        if any(p.name == name for p in providers):
            why = "it cannot fetch"
        else:
            why = "no such provider"
        known = ", ".join(able) or "none"
        warnings.append(f"fetchLadder: {name!r} ignored ({why}; fetchers: {known})")
    return tuple(names) if names else False, warnings


# --- the file ---------------------------------------------------------------------------------


def _key_from_env(provider_type: ProviderType) -> str | None:
    if not provider_type.api_key_env:
        return None
    return os.environ.get(provider_type.api_key_env, "").strip() or None


def parse_config(text: str, path: Path, types: Mapping[str, ProviderType]) -> Config:
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
        raise _problem(path, f"the top level must be an object, got {describe(raw, show=True)}.")
    flat = {t.shared_file_key: t for t in types.values() if t.shared_file_key}
    warnings: list[str] = []
    notes: list[str] = []
    foreign = [key for key in raw if key not in _TOP_LEVEL_KEYS and key not in flat]
    ours = (*_TOP_LEVEL_KEYS, *flat)
    typos = [
        key
        for key in foreign
        if key not in OTHER_EXTENSIONS_KEYS
        and difflib.get_close_matches(key, ours, n=1, cutoff=0.8)
    ]
    if typos:  # a misspelt setting of ours: it would silently do nothing
        warnings.append(unknown_keys("top-level key(s)", typos, ours))
    others = [key for key in foreign if key not in typos]
    options = _option_names(types)
    misplaced = {
        key: close[0]
        for key in others
        if key not in OTHER_EXTENSIONS_KEYS
        and (close := difflib.get_close_matches(key, options, n=1, cutoff=0.8))
    }
    for key, option in misplaced.items():  # a provider option written at the top level
        warnings.append(
            f"top-level key {key!r} is ignored: it looks like the provider option {option!r}, "
            'which goes in a provider\'s "options"'
        )
    others = [key for key in others if key not in misplaced]
    if others:
        notes.append(
            f"top-level key(s) {', '.join(map(repr, others))} are not pi-web-tools settings "
            "(this file is shared with other pi extensions); ignored"
        )
    providers_raw = raw.get("providers")
    if isinstance(providers_raw, dict) and ("type" in providers_raw or "name" in providers_raw):
        raise _problem(
            path,
            '"providers" must be a list of providers; this one is a single entry: '
            "put it inside [ ].",
        )
    if providers_raw is not None and not isinstance(providers_raw, (list, dict)):
        raise _problem(
            path, f'"providers" must be a list, got {describe(providers_raw, show=True)}.'
        )
    if not isinstance(providers_raw, list):
        present = [key for key in flat if key in raw]
        if providers_raw is None and not present and not foreign:
            raise _problem(
                path, '"providers" is missing: it must be a non-empty list of providers.'
            )
        return _shared_file(raw, path, types, notes)
    present = [key for key in flat if key in raw]
    if present:
        notes.append(
            f'flat key(s) {", ".join(map(repr, present))} ignored: the "providers" list wins'
        )
    if "providerOptions" in raw:
        warnings.append(
            "providerOptions ignored: it sets options of implicit providers (flat keys, key "
            'variables); with a "providers" list, give each entry its "options"'
        )
    if not providers_raw:
        raise _problem(path, '"providers" is empty: add at least one provider.')

    errors: list[str] = []
    key_problems: list[str] = []
    providers: list[ProviderConfig] = []
    seen: dict[str, int] = {}
    example: str | None = None  # the type of the first entry with a problem, for the example
    for index, entry in enumerate(providers_raw):
        where = f"providers[{index}]"
        if not isinstance(entry, dict):
            errors.append(
                f"{where}: must be an object with name, type and apiKey, got {describe(entry, show=True)}"
            )
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(
                f"{where}.name: required, a non-empty string (got {describe(name, show=True)})"
            )
            continue
        where = f"{where} ({name})"
        if name in seen:
            errors.append(f"{where}: duplicate name {name!r} (also providers[{seen[name]}])")
            continue
        seen[name] = index
        extra = [key for key in entry if key not in _ENTRY_KEYS]
        if extra:
            warnings.append(f"{where}: {unknown_keys('unknown key(s)', extra, _ENTRY_KEYS)}")
        kind = entry.get("type")
        if not isinstance(kind, str) or kind not in types:
            known = ", ".join(sorted(types))
            if kind is None:
                errors.append(f"{where}.type: required; one of {known}")
            else:
                errors.append(
                    f"{where}.type: unknown type {describe(kind, show=True)}; known types: {known}"
                )
            continue
        provider_type = types[kind]
        api_key = entry.get("apiKey")
        key_from_env = None
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            got = "an empty string" if isinstance(api_key, str) else describe(api_key, show=True)
            errors.append(f"{where}.apiKey: must be a non-empty string, got {got}")
            example = example or kind
            continue
        if api_key is not None:
            api_key = api_key.strip()  # a pasted key often carries a newline
        if api_key is None and provider_type.needs_api_key:
            api_key = _key_from_env(provider_type)
            if api_key is not None:
                key_from_env = provider_type.api_key_env
            else:
                env_name = provider_type.api_key_env
                fallback = f" (or set {env_name})" if env_name else ""
                key_problems.append(
                    f'{where}.apiKey: missing; add "apiKey": "..." to this entry{fallback}'
                )
        options, option_errors, option_warnings = structure_options(
            f"{where}.options", entry.get("options"), provider_type.options_class
        )
        errors.extend(option_errors)
        warnings.extend(option_warnings)
        if option_errors:
            example = example or kind
            continue
        providers.append(
            ProviderConfig(
                name=name,
                type=kind,
                api_key=api_key,
                options=options,
                key_from_env=key_from_env,
                origin=f"providers[{index}]",
            )
        )

    default, tool_defaults = _defaults(raw, providers, types, errors, seen)
    if errors:
        listing = "\n".join(f"- {line}" for line in errors)
        example = example or "kagi"
        also = "".join(f"\nWarning: {warning}" for warning in warnings)
        raise _problem(
            path,
            f"{len(errors)} problem(s):\n{listing}{also}",
            example,
            needs_key=types[example].needs_api_key if example in types else True,
        )
    cache, cache_warnings = parse_cache(raw.get("cache"))
    ladder, ladder_warnings = parse_fetch_ladder(raw.get("fetchLadder"), providers, types)
    readers, reader_warnings = parse_readers(raw.get("readers"))
    return Config(
        path=path,
        source="file",
        providers=tuple(providers),
        default_provider=default,
        warnings=tuple(warnings + cache_warnings + ladder_warnings + reader_warnings),
        key_problems=tuple(key_problems),
        cache=cache,
        notes=tuple(notes),
        tool_defaults=tool_defaults,
        fetch_ladder=ladder,
        readers=readers,
    )


def _defaults(
    raw: dict,
    providers: list[ProviderConfig],
    types: Mapping[str, ProviderType],
    errors: list[str],
    seen: Mapping[str, Any],
) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """``defaultProvider`` and the per-tool defaults, checked against the provider names."""

    def names_a_provider(key: str, value: Any) -> bool:
        if not isinstance(value, str):
            errors.append(
                f"{key}: expected a provider name (string), got {describe(value, show=True)}"
            )
            return False
        if value not in seen:
            names = ", ".join(seen) or "none"
            errors.append(f"{key}: {value!r} is not one of the providers ({names})")
            return False
        return True

    default = raw.get("defaultProvider")
    if default is not None:
        names_a_provider("defaultProvider", default)
    tool_defaults = []
    for capability, key in TOOL_DEFAULT_KEYS.items():
        value = raw.get(key)
        if value is None or not names_a_provider(key, value):
            continue
        entry = next((p for p in providers if p.name == value), None)
        if entry is not None and not types[entry.type].can(capability):
            able = ", ".join(p.name for p in providers if types[p.type].can(capability))
            errors.append(
                f"{key}: {value!r} (type {entry.type}) cannot {capability}; "
                f"providers that can: {able or 'none'}"
            )
        else:
            tool_defaults.append((capability, value))
    return default, tuple(tool_defaults)


def _implicit_options(
    raw: Any, types: Mapping[str, ProviderType], errors: list[str], warnings: list[str]
) -> dict[str, Any]:
    """``providerOptions``: ``{"<type>": {options}}`` for the implicit providers of a file with
    no ``providers`` list (flat keys, key variables), checked like an entry's ``options``."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.append(
            f"providerOptions: expected an object of options by type, got {describe(raw, show=True)}"
        )
        return {}
    found = {}
    for kind, given in raw.items():
        if kind not in types:
            warnings.append(
                f"providerOptions: unknown type {kind!r} ignored (known: {', '.join(types)})"
            )
            continue
        options, option_errors, option_warnings = structure_options(
            f"providerOptions.{kind}", given, types[kind].options_class
        )
        errors.extend(option_errors)
        warnings.extend(option_warnings)
        if options is not None:
            found[kind] = options
    return found


def _shared_file(
    raw: dict, path: Path, types: Mapping[str, ProviderType], notes: list[str]
) -> Config:
    """A file with no ``providers`` list: the shared file of other pi extensions. Each flat key
    a type declares (``kagiApiKey``, ``exaApiKey``, ...) becomes a provider named after its
    type, and so does each key variable that implies a provider, in precedence order."""
    if isinstance(raw.get("providers"), dict):
        notes.append(
            '"providers" is an object, the shape of another pi extension\'s config (nested '
            '"search", "fetch" and "providers" objects); pi-web-tools reads a list of '
            '{"name", "type", "apiKey"} entries and leaves this one alone'
        )
    warnings: list[str] = []
    errors: list[str] = []
    providers: list[ProviderConfig] = []
    ordered = sorted(types.values(), key=lambda t: (t.precedence, t.name))
    options = _implicit_options(raw.get("providerOptions"), types, errors, warnings)
    for provider_type in ordered:
        key_name = provider_type.shared_file_key
        if not key_name or key_name not in raw:
            continue
        value = raw[key_name]
        if not isinstance(value, str) or not value.strip():
            got = "an empty string" if isinstance(value, str) else describe(value, show=True)
            warnings.append(f"{key_name}: expected a non-empty string, got {got}; ignored")
            continue
        providers.append(
            ProviderConfig(
                name=provider_type.name,
                type=provider_type.name,
                api_key=value.strip(),
                options=options.get(provider_type.name, provider_type.options_class()),
                origin=f"file key {key_name}",
            )
        )
    names = {p.name for p in providers}
    for provider_type in ordered:
        implied = env_provider(provider_type)
        if implied is not None and implied.name not in names:
            if provider_type.name in options:
                implied = attrs.evolve(implied, options=options[provider_type.name])
            providers.append(implied)
            names.add(implied.name)
    default, tool_defaults = _defaults(raw, providers, types, errors, names)
    if errors:
        listing = "\n".join(f"- {line}" for line in errors)
        raise _problem(path, f"{len(errors)} problem(s):\n{listing}")
    cache, cache_warnings = parse_cache(raw.get("cache"))
    ladder, ladder_warnings = parse_fetch_ladder(raw.get("fetchLadder"), providers, types)
    readers, reader_warnings = parse_readers(raw.get("readers"))
    return Config(
        path=path,
        source="file",
        shape="shared",
        providers=tuple(providers),
        default_provider=default,
        warnings=tuple(warnings + cache_warnings + ladder_warnings + reader_warnings),
        cache=cache,
        notes=tuple(notes),
        tool_defaults=tool_defaults,
        fetch_ladder=ladder,
        readers=readers,
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


def trust_warnings(path: Path) -> list[str]:
    """Warnings when others could change the config: the file or its directory writable by
    group or others, or the file owned by another user (a planted ``baseUrl`` would receive
    the keys)."""
    if os.name != "posix":
        return []
    found = []
    for where, why in ((path, ""), (path.parent, ", who could replace the config")):
        try:
            info = where.stat()
        except OSError:
            continue
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            found.append(
                f"{where} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
                f"{why}; run: chmod go-w {where}"
            )
        if where == path and info.st_uid not in (os.getuid(), 0):
            found.append(f"{path} is owned by another user (uid {info.st_uid})")
    return found


def _guard_keys(config: Config, untrusted: bool) -> Config:
    """A key goes to a ``baseUrl`` set in the file only when the file is trusted: when others
    can change the file (or its folder), no key at all (from the file or the environment) is
    sent to a ``baseUrl`` read from it, and the provider says why. With a trusted file, an
    environment key sent to a ``baseUrl`` is said in ``pi-web config`` and ``details.warnings``."""
    providers, warnings, problems = [], list(config.warnings), list(config.key_problems)
    for provider in config.providers:
        base_url = getattr(provider.options, "base_url", None)
        where = f"providers ({provider.name})"
        if provider.api_key and base_url and untrusted:
            what = provider.key_from_env or "its API key"
            problems.append(
                f"{where}: {what} is not sent to baseUrl {base_url}: the config can be changed "
                f"by other users; fix its permissions (chmod go-w {config.path}) or remove baseUrl"
            )
            provider = attrs.evolve(provider, api_key=None, key_from_env=None)
        elif provider.key_from_env and base_url:
            warnings.append(
                f"{where}: {provider.key_from_env} from the environment is sent to "
                f"baseUrl {base_url}, not the provider's default API"
            )
        providers.append(provider)
    readers = config.readers
    if untrusted and readers.base_urls:  # a planted baseUrl would receive every URL read
        for name, base_url in readers.base_urls:
            warnings.append(
                f"readers.{name}.baseUrl {base_url} is ignored: the config can be changed by "
                f"other users; fix its permissions (chmod go-w {config.path})"
            )
        readers = attrs.evolve(readers, base_urls=())
    return attrs.evolve(
        config,
        providers=tuple(providers),
        warnings=tuple(warnings),
        key_problems=tuple(problems),
        readers=readers,
    )


def env_provider(provider_type: ProviderType) -> ProviderConfig | None:
    """The provider a key variable alone configures (how ``KAGI_API_KEY`` works), when the
    type declares ``env_key_implies_provider`` and the variable is set."""
    key = _key_from_env(provider_type) if provider_type.env_key_implies_provider else None
    if key is None:
        return None
    return ProviderConfig(
        name=provider_type.name,
        type=provider_type.name,
        api_key=key,
        options=provider_type.options_class(),
        key_from_env=provider_type.api_key_env,
        origin=f"env {provider_type.api_key_env}",
    )


def _implicit_from_env(path: Path, types: Mapping[str, ProviderType]) -> Config:
    """With no file: one provider per type whose key variable is set and implies a provider."""
    ordered = sorted(types.values(), key=lambda t: (t.precedence, t.name))
    providers = [entry for entry in map(env_provider, ordered) if entry is not None]
    if not providers:
        return Config(path=path, source="none")
    return Config(
        path=path,
        source="env",
        providers=tuple(providers),
        default_provider=providers[0].name,
    )


_cache_lock = threading.Lock()
_cache: dict[str, tuple[tuple, Config]] = {}


def clear_cache() -> None:
    """Forget every loaded config, so the next call reads the file again (tests, hosts)."""
    with _cache_lock:
        _cache.clear()


def load_config(types: Mapping[str, ProviderType], path: Path | None = None) -> Config:
    """Read and validate the config now (cached until the file or a key variable changes).

    With no file, key variables of types that declare ``env_key_implies_provider`` configure
    one provider each (``source="env"``); otherwise the config is empty (``source="none"``)
    and tools say what to configure. Every key read is remembered for redaction.
    """
    path = path or config_path()
    env_names = sorted({t.api_key_env for t in types.values() if t.api_key_env})
    redaction.watch_env(env_names)
    env_keys = tuple(os.environ.get(name, "") for name in env_names)
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
        config = _implicit_from_env(path, types)
    else:
        config = parse_config(text, path, types)
        warning = (
            permission_warning(path)
            if any(p.api_key and not p.key_from_env for p in config.providers)
            else None
        )
        trust = trust_warnings(path)
        redaction.remember(p.api_key for p in config.providers)  # withheld ones stay redacted
        config = _guard_keys(config, untrusted=bool(trust))
        added = ([warning] if warning else []) + trust
        if added:
            config = attrs.evolve(config, warnings=config.warnings + tuple(added))
    redaction.remember(p.api_key for p in config.providers)
    with _cache_lock:
        _cache[str(path)] = (stamp, config)
    return config
