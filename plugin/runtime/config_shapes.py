"""The shapes of ``web-search.json``, parsed: seed 002's list, and the shared file of other pi
extensions.

The list shape, shared with pi's TypeScript extensions::

    {"defaultProvider": "kagi", "providers": [{"name", "type", "apiKey", "options"}]}

Validation runs in explicit steps (JSON, top level, each entry, that type's options) so every
problem names the field and what to write instead; unknown keys are warnings. What is said about
a file is :class:`~pi_web_tools.api.options.Finding` records, rendered only where they are
shown. Everything provider-specific comes from the
:class:`~pi_web_tools.api.types.ProviderType` objects the caller passes in: which types exist,
their options, and which of them a key in the environment configures implicitly. Reading the
file (where it is, whether it can be trusted, the memo) is :mod:`.config`'s job.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen
from pi_hostspec.schema import describe

from ..api.errors import ConfigError
from ..api.options import Finding, Kind, option_key, options_fields, structure_options, unknown_keys
from ..api.types import ProviderConfig, ProviderType
from .cache import DEFAULT_TTL_SECONDS, CacheSettings
from .limits_config import LimitsConfig, parse_limits
from .reader_config import ReadersConfig, parse_readers

__all__ = [
    "Config",
    "InvalidConfig",
    "OTHER_EXTENSIONS_KEYS",
    "TOOL_DEFAULT_KEYS",
    "env_provider",
    "example_config",
    "implicit_from_env",
    "invalid",
    "parse_cache",
    "parse_config",
    "parse_fetch_ladder",
    "parse_search_fallback",
    "parse_search_fusion",
]

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
    "searchFallback",
    "searchFusion",
    "readers",
    "limits",
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
    ``search_fallback`` is ``searchFallback``: ``True`` (a query fails over to the other search
    providers, in file order), ``False`` (off) or the names to fail over to, in order.
    ``search_fusion`` is ``searchFusion``: ``None`` (off), ``"all"`` or the names of the
    providers a call that names none sends each query to. ``limits`` is ``limits``: a team
    server's rate limits for its callers and providers. ``provider_options`` is the shared
    file's ``providerOptions`` by type: also the options of a built-in fallback it names (the
    ``direct`` fetcher, which no flat key configures).
    """

    path: Path
    source: str
    providers: tuple[ProviderConfig, ...] = ()
    default_provider: str | None = None
    warnings: tuple[Finding, ...] = ()
    key_problems: tuple[Finding, ...] = ()
    cache: CacheSettings = CacheSettings()
    shape: str = "list"
    notes: tuple[Finding, ...] = ()
    tool_defaults: tuple[tuple[str, str], ...] = ()
    ignored: str | None = None
    fetch_ladder: bool | tuple[str, ...] = True
    search_fallback: bool | tuple[str, ...] = True
    search_fusion: str | tuple[str, ...] | None = None
    readers: ReadersConfig = ReadersConfig()
    limits: LimitsConfig = LimitsConfig()
    provider_options: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str) -> ProviderConfig | None:
        """The provider called *name*, or ``None``."""
        return next((p for p in self.providers if p.name == name), None)

    def default_for(self, capability: str) -> str | None:
        """The provider named by ``default<Capability>Provider`` (``defaultFetchProvider``)."""
        return dict(self.tool_defaults).get(capability)

    def misspellings(self, key: str, entry: str) -> list[tuple[str, str]]:
        """Where the options of provider *entry* hold a misspelling of *key* (ignored, and a
        warning said so): each field and the key as written."""
        return [
            (finding.where, written)
            for finding in self.warnings
            if finding.kind is Kind.UNKNOWN_KEYS and finding.entry == entry
            for written, meant in finding.close
            if meant == key
        ]

    def withheld_key(self, entry: str) -> Finding | None:
        """Why provider *entry* has no key although one is configured (it is not sent to a
        ``baseUrl`` others could have planted), or ``None``."""
        return self._withheld(entry, Kind.KEY_WITHHELD)

    def withheld_run(self, entry: str) -> Finding | None:
        """Why provider *entry* does not use a program or code path the file names (others
        could have planted it), or ``None``."""
        return self._withheld(entry, Kind.RUN_WITHHELD)

    def withheld_reach(self, entry: str) -> Finding | None:
        """Why provider *entry* does not reach private networks although the file allows it
        (others could have planted the allowance), or ``None``."""
        return next(
            (w for w in self.warnings if w.kind is Kind.REACH_WITHHELD and w.entry == entry), None
        )

    def skipped_entry(self, entry: str) -> Finding | None:
        """Why entry *entry* is skipped (its type's plugin could not be loaded), or ``None``."""
        return self._withheld(entry, Kind.PLUGIN_SKIPPED)

    def _withheld(self, entry: str, kind: Kind) -> Finding | None:
        return next((p for p in self.key_problems if p.kind is kind and p.entry == entry), None)

    def has_note(self, kind: Kind) -> bool:
        """Whether a note of *kind* was made about the file."""
        return any(note.kind is kind for note in self.notes)


def example_config(provider_type: str = "kagi", *, needs_key: bool = True) -> str:
    """A minimal valid config for *provider_type*, as text to paste."""
    entry: dict = {"name": provider_type, "type": provider_type}
    if needs_key:
        entry["apiKey"] = f"YOUR_{provider_type.upper().replace('-', '_')}_API_KEY"
    body = {"defaultProvider": provider_type, "providers": [entry]}
    return json.dumps(body, indent=2)


class InvalidConfig(ConfigError):
    """The file cannot be used: ``problem`` says why in one paragraph (the file, the fields),
    ``example`` is a minimal valid file to paste; ``str()`` shows both."""

    def __init__(self, problem: str, example: str):
        super().__init__(f"{problem}\nA minimal valid file looks like:\n{example}")
        self.problem = problem
        self.example = example


def invalid(
    path: Path, message: str, example_type: str = "kagi", *, needs_key: bool = True
) -> InvalidConfig:
    """The error for the file at *path*, with an example file for *example_type*."""
    return InvalidConfig(
        f"Invalid web search config {path}: {message}",
        example_config(example_type, needs_key=needs_key),
    )


def _option_names(types: Mapping[str, ProviderType]) -> list[str]:
    """Every option name (as the file spells it) of the registered provider types."""
    names: set[str] = set()
    for provider_type in types.values():
        if provider_type.options_class is not None:
            attrs.resolve_types(provider_type.options_class)
            names.update(option_key(f) for f in options_fields(provider_type.options_class))
    return sorted(names)


# --- the cache settings -----------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_cache(raw: Any) -> tuple[CacheSettings, list[Finding]]:
    """The ``cache`` value: ``false`` (off), ``true`` or an object ``{"enabled", "ttlSeconds":
    {"web_search", "web_fetch", "summarize"}, "maxMegabytes"}``. A bad part is a warning and
    keeps its default: a cache setting never makes the tools fail."""
    if raw is None or raw is True:
        return CacheSettings(), []
    if raw is False:
        return CacheSettings(enabled=False), []
    if not isinstance(raw, dict):
        return CacheSettings(), [
            Finding(
                where="cache",
                what=f"expected true, false or an object, got {describe(raw, show=True)}",
                suggestion="using the defaults",
            )
        ]
    warnings: list[Finding] = []
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        warnings.append(
            Finding(
                where="cache.enabled",
                what=f"expected true or false, got {describe(enabled, show=True)}",
                suggestion="the cache stays on",
            )
        )
        enabled = True
    ttl = dict(DEFAULT_TTL_SECONDS)
    given = raw.get("ttlSeconds", {})
    if not isinstance(given, dict):
        warnings.append(
            Finding(
                where="cache.ttlSeconds",
                what=f"expected an object, got {describe(given, show=True)}",
                suggestion="using the defaults",
            )
        )
        given = {}
    for tool, seconds in given.items():
        if tool not in ttl:
            warnings.append(
                Finding(
                    where="cache.ttlSeconds",
                    what=f"unknown tool {tool!r} ignored (known: {', '.join(ttl)})",
                )
            )
        elif not _is_number(seconds) or seconds < 0:
            warnings.append(
                Finding(
                    where=f"cache.ttlSeconds.{tool}",
                    what=f"expected seconds (0 or more), got {describe(seconds, show=True)}",
                    suggestion=f"using {ttl[tool]}",
                )
            )
        else:
            ttl[tool] = seconds
    size = raw.get("maxMegabytes", CacheSettings().max_megabytes)
    if not _is_number(size) or size <= 0:
        warnings.append(
            Finding(
                where="cache.maxMegabytes",
                what=f"expected a positive number, got {describe(size, show=True)}",
                suggestion=f"using {CacheSettings().max_megabytes}",
            )
        )
        size = CacheSettings().max_megabytes
    unknown = [key for key in raw if key not in ("enabled", "ttlSeconds", "maxMegabytes")]
    if unknown:
        known = ("enabled", "ttlSeconds", "maxMegabytes")
        warnings.append(unknown_keys("cache", "unknown key(s)", unknown, known))
    return CacheSettings(enabled=enabled, ttl_seconds=ttl, max_megabytes=size), warnings


# --- the fetch ladder -------------------------------------------------------------------------


def _off_on_or_names(
    key: str,
    raw: Any,
    providers: Collection[ProviderConfig],
    types: Mapping[str, ProviderType],
    capability: str,
    off: str,
) -> tuple[bool | tuple[str, ...], list[Finding]]:
    """A key that is ``true`` (the default), ``false`` or a list of provider names able to
    *capability*: ``True``, ``False`` or the names kept, with a warning for each other name. A
    value that cannot be read is ``False``, with a warning ending in *off* (a misspelt setting
    never sends anything anywhere)."""
    if raw is None or raw is True:
        return True, []
    if raw is False:
        return False, []
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        return False, [
            Finding(
                where=key,
                what="expected true, false or a list of provider names, got "
                f"{describe(raw, show=True)}",
                suggestion=off,
            )
        ]
    names, warnings = _able_names(key, raw, providers, types, capability)
    return (tuple(names) if names else False), warnings


#: How a warning names the providers able to do something.
_ABLE = {"fetch": ("fetch", "fetchers"), "search": ("search", "search providers")}


def _able_names(
    key: str,
    raw: list,
    providers: Collection[ProviderConfig],
    types: Mapping[str, ProviderType],
    capability: str,
) -> tuple[list[str], list[Finding]]:
    """The names of *raw* that are providers able to *capability*; a warning for each other."""
    verb, noun = _ABLE[capability]
    able = [p.name for p in providers if types[p.type].can(capability)]
    names, warnings = [], []
    for name in dict.fromkeys(raw):
        if name in able:
            names.append(name)
            continue
        why = f"it cannot {verb}" if any(p.name == name for p in providers) else "no such provider"
        warnings.append(
            Finding(
                where=key, what=f"{name!r} ignored ({why}; {noun}: {', '.join(able) or 'none'})"
            )
        )
    return names, warnings


def parse_fetch_ladder(
    raw: Any, providers: Collection[ProviderConfig], types: Mapping[str, ProviderType]
) -> tuple[bool | tuple[str, ...], list[Finding]]:
    """``fetchLadder``: ``true`` (the default), ``false`` (off) or a list of provider names (the
    fetchers to try, in that order; on-request ones such as Kagi only this way). A value that
    cannot be read turns the ladder off with a warning: a setting meant to keep URLs at home
    never sends them out by being misspelt."""
    return _off_on_or_names(
        "fetchLadder", raw, providers, types, "fetch", "the fetch ladder is off"
    )


# --- search failover and fusion ---------------------------------------------------------------


def parse_search_fallback(
    raw: Any, providers: Collection[ProviderConfig], types: Mapping[str, ProviderType]
) -> tuple[bool | tuple[str, ...], list[Finding]]:
    """``searchFallback``: ``true`` (the default: the other search providers, in file order),
    ``false`` (off) or the names of the providers a query fails over to, in that order. A value
    that cannot be read turns failover off, with a warning (it never spends on a provider the
    user did not mean)."""
    return _off_on_or_names(
        "searchFallback", raw, providers, types, "search", "search failover is off"
    )


def parse_search_fusion(
    raw: Any, providers: Collection[ProviderConfig], types: Mapping[str, ProviderType]
) -> tuple[str | tuple[str, ...] | None, list[Finding]]:
    """``searchFusion``: absent (off), ``"all"`` or a list of provider names: each query of a
    call that names no provider goes to each of them at once (one call each, each billed). A
    value that cannot be read leaves fusion off, with a warning."""
    if raw is None or raw is False:
        return None, []
    if raw == "all":
        return "all", []
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        return None, [
            Finding(
                where="searchFusion",
                what=f'expected "all" or a list of provider names, got {describe(raw, show=True)}',
                suggestion="search fusion is off",
            )
        ]
    names, warnings = _able_names("searchFusion", raw, providers, types, "search")
    if len(names) < 2:
        warnings.append(
            Finding(
                where="searchFusion",
                what="fewer than two search providers named",
                suggestion="search fusion is off",
            )
        )
        return None, warnings
    return tuple(names), warnings


def _search_keys(
    raw: dict, providers: Collection[ProviderConfig], types: Mapping[str, ProviderType]
) -> tuple[dict[str, Any], list[Finding]]:
    """``searchFallback`` and ``searchFusion`` as :class:`Config` fields, and their warnings."""
    fallback, fallback_warnings = parse_search_fallback(raw.get("searchFallback"), providers, types)
    fusion, fusion_warnings = parse_search_fusion(raw.get("searchFusion"), providers, types)
    fields = {"search_fallback": fallback, "search_fusion": fusion}
    return fields, fallback_warnings + fusion_warnings


# --- the file ---------------------------------------------------------------------------------


def _key_from_env(provider_type: ProviderType) -> str | None:
    if not provider_type.api_key_env:
        return None
    return os.environ.get(provider_type.api_key_env, "").strip() or None


def _sections(
    raw: dict, providers: list[ProviderConfig], types: Mapping[str, ProviderType]
) -> tuple[dict[str, Any], list[Finding]]:
    """The file's sections besides its providers (cache, fetch ladder, search keys, readers,
    limits) as :class:`Config` fields, with their warnings; the same for every file shape."""
    cache, cache_warnings = parse_cache(raw.get("cache"))
    ladder, ladder_warnings = parse_fetch_ladder(raw.get("fetchLadder"), providers, types)
    search, search_warnings = _search_keys(raw, providers, types)
    readers, reader_warnings = parse_readers(raw.get("readers"))
    limits, limits_warnings = parse_limits(raw.get("limits"))
    fields = {"cache": cache, "fetch_ladder": ladder, "readers": readers, "limits": limits}
    warnings = [
        *cache_warnings,
        *ladder_warnings,
        *reader_warnings,
        *search_warnings,
        *limits_warnings,
    ]
    return {**fields, **search}, warnings


def parse_config(
    text: str,
    path: Path,
    types: Mapping[str, ProviderType],
    skipped: Mapping[str, object] | None = None,
) -> Config:
    """Validate the file's text against the known provider *types*; raise :class:`ConfigError`.

    *skipped* maps the entry-point name of each provider plugin that could not be loaded to
    what to say about it: an entry of that type is skipped with a problem naming the plugin
    and its fix, and every other entry keeps working."""
    skipped = skipped or {}
    if not text.strip():
        raise invalid(path, "the file is empty.")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise invalid(
            path, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
        ) from None
    except RecursionError:
        raise invalid(path, "not valid JSON: nested too deeply.") from None
    if not isinstance(raw, dict):
        raise invalid(path, f"the top level must be an object, got {describe(raw, show=True)}.")
    flat = {t.shared_file_key: t for t in types.values() if t.shared_file_key}
    warnings: list[Finding] = []
    notes: list[Finding] = []
    foreign = [key for key in raw if key not in _TOP_LEVEL_KEYS and key not in flat]
    ours = (*_TOP_LEVEL_KEYS, *flat)
    typos = [
        key
        for key in foreign
        if key not in OTHER_EXTENSIONS_KEYS
        and difflib.get_close_matches(key, ours, n=1, cutoff=0.8)
    ]
    if typos:  # a misspelt setting of ours: it would silently do nothing
        warnings.append(unknown_keys("", "top-level key(s)", typos, ours))
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
            Finding(
                what=f"top-level key {key!r} is ignored: it looks like the provider option "
                f'{option!r}, which goes in a provider\'s "options"'
            )
        )
    others = [key for key in others if key not in misplaced]
    if others:
        notes.append(
            Finding(
                what=f"top-level key(s) {', '.join(map(repr, others))} are not pi-web-tools "
                "settings (this file is shared with other pi extensions)",
                suggestion="ignored",
            )
        )
    providers_raw = raw.get("providers")
    if isinstance(providers_raw, dict) and ("type" in providers_raw or "name" in providers_raw):
        raise invalid(
            path,
            '"providers" must be a list of providers; this one is a single entry: '
            "put it inside [ ].",
        )
    if providers_raw is not None and not isinstance(providers_raw, (list, dict)):
        raise invalid(
            path, f'"providers" must be a list, got {describe(providers_raw, show=True)}.'
        )
    if not isinstance(providers_raw, list):
        present = [key for key in flat if key in raw]
        if providers_raw is None and not present and not foreign:
            raise invalid(path, '"providers" is missing: it must be a non-empty list of providers.')
        return _shared_file(raw, path, types, notes)
    present = [key for key in flat if key in raw]
    if present:
        notes.append(
            Finding(
                what=f'flat key(s) {", ".join(map(repr, present))} ignored: the "providers" list '
                "wins"
            )
        )
    if "providerOptions" in raw:
        warnings.append(
            Finding(
                what="providerOptions ignored: it sets options of implicit providers (flat keys, "
                "key variables)",
                suggestion='with a "providers" list, give each entry its "options"',
            )
        )
    if not providers_raw:
        raise invalid(path, '"providers" is empty: add at least one provider.')

    errors: list[str] = []
    key_problems: list[Finding] = []
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
            warnings.append(unknown_keys(where, "unknown key(s)", extra, _ENTRY_KEYS, entry=name))
        kind = entry.get("type")
        if isinstance(kind, str) and kind not in types and kind in skipped:
            key_problems.append(
                Finding(
                    where=f"{where}.type",
                    what=str(skipped[kind]),
                    suggestion="the entry is skipped until then",
                    kind=Kind.PLUGIN_SKIPPED,
                    entry=name,
                )
            )
            continue
        if not isinstance(kind, str) or kind not in types:
            known = ", ".join(sorted(types))
            if kind is None:
                errors.append(f"{where}.type: required; one of {known}")
            else:
                errors.append(f"{where}.type: {_unknown_type(kind, sorted(types))}")
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
                    Finding(
                        where=f"{where}.apiKey",
                        what="missing",
                        suggestion=f'add "apiKey": "..." to this entry{fallback}',
                        entry=name,
                    )
                )
        options, option_errors, option_warnings = structure_options(
            f"{where}.options", entry.get("options"), provider_type.options_class, entry=name
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
        raise invalid(
            path,
            f"{len(errors)} problem(s):\n{listing}{also}",
            example,
            needs_key=types[example].needs_api_key if example in types else True,
        )
    sections, section_warnings = _sections(raw, providers, types)
    return Config(
        path=path,
        source="file",
        providers=tuple(providers),
        default_provider=default,
        warnings=tuple(warnings + section_warnings),
        key_problems=tuple(key_problems),
        notes=tuple(notes),
        tool_defaults=tool_defaults,
        **sections,
    )


def _defaults(
    raw: dict,
    providers: list[ProviderConfig],
    types: Mapping[str, ProviderType],
    errors: list[str],
    seen: Collection[str],
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
    raw: Any, types: Mapping[str, ProviderType], errors: list[str], warnings: list[Finding]
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
                Finding(
                    where="providerOptions",
                    what=f"unknown type {kind!r} ignored (known: {', '.join(types)})",
                )
            )
            continue
        options, option_errors, option_warnings = structure_options(
            f"providerOptions.{kind}", given, types[kind].options_class, entry=kind
        )
        errors.extend(option_errors)
        warnings.extend(option_warnings)
        if options is not None:
            found[kind] = options
    return found


def _shared_file(
    raw: dict, path: Path, types: Mapping[str, ProviderType], notes: list[Finding]
) -> Config:
    """A file with no ``providers`` list: the shared file of other pi extensions. Each flat key
    a type declares (``kagiApiKey``, ``exaApiKey``, ...) becomes a provider named after its
    type, and so does each key variable that implies a provider, in precedence order."""
    if isinstance(raw.get("providers"), dict):
        notes.append(
            Finding(
                what='"providers" is an object, the shape of another pi extension\'s config '
                '(nested "search", "fetch" and "providers" objects)',
                suggestion='pi-web-tools reads a list of {"name", "type", "apiKey"} entries and '
                "leaves this one alone",
                kind=Kind.FOREIGN_PROVIDERS,
            )
        )
    warnings: list[Finding] = []
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
            warnings.append(
                Finding(
                    where=key_name,
                    what=f"expected a non-empty string, got {got}",
                    suggestion="ignored",
                )
            )
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
        raise invalid(path, f"{len(errors)} problem(s):\n{listing}")
    sections, section_warnings = _sections(raw, providers, types)
    return Config(
        path=path,
        source="file",
        shape="shared",
        providers=tuple(providers),
        default_provider=default,
        warnings=tuple(warnings + section_warnings),
        notes=tuple(notes),
        tool_defaults=tool_defaults,
        provider_options=tuple(options.items()),
        **sections,
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


def implicit_from_env(path: Path, types: Mapping[str, ProviderType]) -> Config:
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


def _unknown_type(kind: Any, known: list[str]) -> str:
    """``unknown type "brvae" (did you mean "brave"?); known types: ...`` (a value that is not
    a string is described as such)."""
    import difflib
    import json

    if not isinstance(kind, str):
        return f"unknown type {describe(kind, show=True)}; known types: {', '.join(known)}"
    close = difflib.get_close_matches(kind.lower(), known, n=1, cutoff=0.6)
    hint = f" (did you mean {json.dumps(close[0])}?)" if close else ""
    return f"unknown type {json.dumps(kind)}{hint}; known types: {', '.join(known)}"
