"""The option language: how a provider type declares its options, and how the JSON of a config
entry's ``options`` is read into them.

A provider declares an attrs class of :func:`option` fields (``timeout_seconds: float | None =
option(None, validator=positive())``); the file spells each one in camelCase
(``timeoutSeconds``). :func:`structure_options` reads an entry's ``options`` strictly (no
``"5"`` for ``5``): each wrong value is an error naming the field, what was expected and what
was given; an unknown key is a :class:`Finding` saying which known key it resembles.

What the config reader says about a file (problems, warnings, notes) are :class:`Finding`
records too: code decides on their fields, and their text is made only where it is shown.
"""

from __future__ import annotations

import enum
import json
import math
import types as pytypes
import typing
from collections.abc import Callable, Iterable
from typing import Any

import attrs
from attrs import field, frozen

__all__ = [
    "ApiOptions",
    "CommonOptions",
    "Finding",
    "Kind",
    "OptionValueError",
    "at_least",
    "between",
    "http_url",
    "one_of",
    "option",
    "option_key",
    "options_fields",
    "positive",
    "reaches_further",
    "runs_something",
    "structure_options",
    "unknown_keys",
]


# --- what the config reader says ----------------------------------------------------------------


class Kind(enum.Enum):
    """What a :class:`Finding` is about, where code needs to know."""

    GENERAL = "general"
    UNKNOWN_KEYS = "unknown keys"  # keys that are not settings (``close`` names look-alikes)
    KEY_WITHHELD = "key withheld"  # a key not sent to a baseUrl others could have planted
    RUN_WITHHELD = "run withheld"  # a program or code path others could have planted, not used
    REACH_WITHHELD = "reach withheld"  # an allowance to reach further others could have planted
    PLUGIN_SKIPPED = "plugin skipped"  # an entry whose type's plugin could not be loaded
    FOREIGN_PROVIDERS = "foreign providers"  # "providers" is another extension's object


@frozen(kw_only=True)
class Finding:
    """One thing said about the config: *where* (the field), *what* (is wrong, or worth
    knowing) and the *suggestion* (what to do, or what happens instead). ``entry`` is the
    provider entry (or implicit provider) it concerns; ``close`` pairs each unknown key as
    written with the known key it resembles. ``str()`` is the line ``pi-web config`` shows."""

    what: str
    where: str = ""
    suggestion: str = ""
    kind: Kind = Kind.GENERAL
    entry: str | None = None
    close: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        head = f"{self.where}: {self.what}" if self.where else self.what
        return f"{head}; {self.suggestion}" if self.suggestion else head


def unknown_keys(
    where: str, label: str, keys: Iterable[Any], known: Iterable[str], *, entry: str | None = None
) -> Finding:
    """*keys* that are not among *known*: ``<label> 'x', 'y' ignored``, with ``(did you mean
    'z'?)`` after a key close to a known one, and the known ones listed."""
    import difflib

    known = list(known)
    folded = {name.lower(): name for name in known}  # baseURL is baseUrl with other capitals
    named = []
    close = []
    for key in keys:
        same = folded.get(str(key).lower())
        match = [same] if same else difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
        named.append(f"{key!r} (did you mean {match[0]!r}?)" if match else repr(key))
        if match:
            close.append((str(key), match[0]))
    listed = ", ".join(known) or "none"
    return Finding(
        where=where,
        what=f"{label} {', '.join(named)} ignored (known: {listed})",
        kind=Kind.UNKNOWN_KEYS,
        entry=entry,
        close=tuple(close),
    )


# --- declaring options --------------------------------------------------------------------------


class OptionValueError(ValueError):
    """A provider option's value is out of range; the message says what is allowed."""


Validator = Callable[[Any, Any, Any], None]


def option(
    default: Any = None,
    *,
    validator: Any = None,
    key: str | None = None,
    runs: bool = False,
    reaches: bool = False,
) -> Any:
    """Declare one provider option: an attrs field whose JSON key is the attribute name in
    camelCase (``timeout_seconds`` -> ``timeoutSeconds``) unless *key* says otherwise.

    The type comes from the annotation (``str``, ``int``, ``float``, ``bool``, ``list[str]``,
    ``Literal[...]``, each optionally ``| None``); *validator* is an attrs validator, such as
    :func:`between` or :func:`one_of`, checked when the config is read. A number option needs
    one that bounds it (``between``, ``one_of``). *runs*: the value names something this
    process runs or loads (a program, a path to code); a config that others can change never
    sets it (the default is kept, and ``pi-web config`` says why). *reaches*: the value widens
    what this process reaches (``allowPrivateNetwork``); a config that others can change never
    sets it either.
    """
    metadata: dict[str, Any] = {"option": True}
    if key is not None:
        metadata["key"] = key
    if runs:
        metadata["runs"] = True
    if reaches:
        metadata["reaches"] = True
    return field(default=default, validator=validator, metadata=metadata)


def runs_something(attribute: attrs.Attribute) -> bool:
    """Whether option *attribute* names something this process runs or loads."""
    return bool(attribute.metadata.get("runs"))


def reaches_further(attribute: attrs.Attribute) -> bool:
    """Whether option *attribute* widens what this process reaches (private networks)."""
    return bool(attribute.metadata.get("reaches"))


def option_key(attribute: attrs.Attribute) -> str:
    """The JSON key of an option attribute."""
    if "key" in attribute.metadata:
        return str(attribute.metadata["key"])
    head, *rest = attribute.name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def options_fields(cls: type) -> list[attrs.Attribute]:
    """The declared options of an options class."""
    return [f for f in attrs.fields(cls) if f.metadata.get("option")]


def _check(predicate: Callable[[Any], bool], message: str, *, bounded: bool = False) -> Validator:
    def validate(_instance: Any, _attribute: Any, value: Any) -> None:
        if value is not None and not predicate(value):
            raise OptionValueError(message)

    validate.__doc__ = message
    validate.bounded = bounded  # type: ignore[attr-defined] # it gives the value a range
    return validate


def between(low: float, high: float) -> Validator:
    """Validator: the value lies in ``low..high``."""
    return _check(lambda v: low <= v <= high, f"must be between {low} and {high}", bounded=True)


def at_least(low: float) -> Validator:
    """Validator: the value is *low* or more."""
    return _check(lambda v: v >= low, f"must be at least {low}")


def positive() -> Validator:
    """Validator: the value is greater than 0."""
    return _check(lambda v: v > 0, "must be greater than 0")


def one_of(*values: Any) -> Validator:
    """Validator: the value is one of *values*."""
    listed = ", ".join(f'"{v}"' if isinstance(v, str) else repr(v) for v in values)
    return _check(lambda v: v in values, f"must be one of {listed}", bounded=True)


def _is_http_url(value: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def http_url() -> Validator:
    """Validator: the value is an absolute http or https URL."""
    return _check(_is_http_url, "must be an absolute http or https URL")


@frozen(kw_only=True)
class CommonOptions:
    """Options every provider understands."""

    timeout_seconds: float | None = option(None, validator=between(0.1, 600))


@frozen(kw_only=True)
class ApiOptions(CommonOptions):
    """Options of a provider that calls an API: ``baseUrl`` for proxies, gateways and tests.

    ``allowPrivateNetwork`` (fetchers only): ``web_fetch`` may hand this provider URLs whose host
    is private, loopback, link-local, a cloud metadata address or a single-label name. Off,
    such a URL is refused before it leaves the machine (an intranet address means nothing to a
    service on the internet, and its name and query would reach a third party).
    """

    base_url: str | None = option(None, validator=http_url())
    allow_private_network: bool = option(False, reaches=True)


# --- reading options from the file --------------------------------------------------------------

_NONE = type(None)


def _expected(kind: Any) -> str:
    """What a value of annotation *kind* looks like, for messages."""
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return "one of " + ", ".join(json.dumps(v) for v in typing.get_args(kind))
    if origin in (list, tuple) or kind in (list, tuple):
        return "a list of strings"
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    return names.get(kind, getattr(kind, "__name__", str(kind)))


def _strict(kind: type, test: Callable[[Any], bool]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _type: Any) -> Any:
        if not test(value):
            raise TypeError(_expected(kind))
        if isinstance(value, float) and not math.isfinite(value):  # JSON 1e999 parses as inf
            raise TypeError("a finite number")
        return kind(value)

    return structure


def _is_integer(value: Any) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return isinstance(value, int) or (math.isfinite(value) and value.is_integer())


def _converter() -> Any:
    """A cattrs converter that structures JSON values strictly (no ``"5"`` -> ``5``)."""
    import cattrs

    converter = cattrs.Converter()
    number = (int, float)
    converter.register_structure_hook(str, _strict(str, lambda v: isinstance(v, str)))
    converter.register_structure_hook(bool, _strict(bool, lambda v: isinstance(v, bool)))
    converter.register_structure_hook(int, _strict(int, _is_integer))
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
    where: str, raw: Any, options_class: type, *, entry: str | None = None
) -> tuple[Any, list[str], list[Finding]]:
    """Structure *raw* (the entry's ``options``) into *options_class* with cattrs; return
    ``(instance or None, errors, warnings)``. Each error names the field, what was expected
    and what was given; unknown keys are a warning (about *entry*)."""
    from pi_hostspec.schema import describe

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
    warnings: list[Finding] = []
    unknown = [key for key in raw if key not in fields]
    if unknown:
        warnings.append(unknown_keys(where, "unknown option(s)", unknown, fields, entry=entry))
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
